// Three days of a daily cron schedule in Europe/Paris, however the days pass
// (virtual time on a time-skipping server, or a backfill on a real one): the
// schedule must have started three tasks in the request's session, each
// completed, each due at 09:00 Paris time, a day apart.
import type { Api } from './helpers';
import { waitUntil } from './helpers';

export const DAY = 86_400_000;

export async function threeMorningsOfCron(
  call: Api,
  passThreeDays: (scheduleId: string) => Promise<void>,
): Promise<void> {
  const r = await call('POST', '/', {
    body: {
      message: 'every morning from now on',
      background: true,
      schedules: [{ schedule: '0 9 * * *', timezone: 'Europe/Paris', message: 'morning briefing' }],
    },
  });
  expect(r.status).toBe(202);
  const id: string = r.json.schedules[0].schedule_id;
  await waitUntil(
    'the scheduling run to complete',
    async () => (await call('GET', `/tasks/${r.json.task_id}`)).json.status === 'completed',
  );
  await passThreeDays(id);
  const tasks = await waitUntil(
    "the schedule's three tasks, completed",
    async (): Promise<{ task_id: string; status: string; session: string }[]> =>
      (await call('GET', `/tasks?schedule=${id}`)).json.tasks,
    (ts) => ts.length >= 3 && ts.every((t) => t.status === 'completed'),
    { timeoutMs: 60_000, stepMs: 500 },
  );
  expect(tasks).toHaveLength(3);
  for (const t of tasks) expect(t.session).toBe(r.json.session);
  const d = (await call('GET', `/schedules/${id}`)).json;
  expect(d.runs).toBe(3);
  const times = d.recent_tasks.map((t: { scheduled_at: string }) => Date.parse(t.scheduled_at)).sort();
  for (const t of times)
    expect(
      new Intl.DateTimeFormat('en-GB', {
        timeZone: 'Europe/Paris',
        hour: '2-digit',
        minute: '2-digit',
        hour12: false,
      }).format(t),
    ).toBe('09:00');
  expect(times[1] - times[0]).toBe(DAY);
  expect(times[2] - times[1]).toBe(DAY);
  expect(new Set(d.recent_tasks.map((t: { task_id: string }) => t.task_id))).toEqual(
    new Set(tasks.map((t) => t.task_id)),
  );
  const thread = (await call('GET', `/sessions/${r.json.session}/messages`)).json.messages;
  expect(thread.filter((m: { content: string }) => m.content === 'morning briefing')).toHaveLength(3);
  expect((await call('DELETE', `/schedules/${id}`)).status).toBe(204);
}
