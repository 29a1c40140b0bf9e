// Three days of a daily cron schedule in a time zone start three tasks, each
// completed, each at 09:00 in Paris. On the embedded engine the whole service
// runs on its time-skipping server and the test lets three days of virtual
// time pass; the official time-skipping server serves no schedules, so under
// ENGINE=temporal-cli the real dev server backfills the last three days of the
// same schedule instead (what Temporal does after an outage, within its
// catch-up window).
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { api, Api, startTestStack, waitUntil, withTemporal } from './helpers';
import type { Stack } from '../../src/launcher/stack';
import { JAVA_TEST_SERVER, timeSkippingServerPath } from '../engine';

jest.setTimeout(180_000);
const DAY = 86_400_000;

let env: TestWorkflowEnvironment | undefined;
let stack: Stack;
let call: Api;

beforeAll(async () => {
  if (!JAVA_TEST_SERVER) env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: timeSkippingServerPath() } } });
  // Session and slot watches far apart: three virtual days hold no idle timers to wake for.
  stack = await startTestStack({ ...(env && { TEMPORAL_ADDRESS: env.address }), RUN_WATCH_MS: String(DAY) });
  call = api(stack);
});
afterAll(async () => {
  await stack?.stop();
  await env?.teardown();
});

test('a daily cron schedule in Europe/Paris starts three tasks over three days, each at 09:00 Paris time', async () => {
  const r = await call('POST', '/', { body: { message: 'every morning from now on', background: true, schedules: [{ schedule: '0 9 * * *', timezone: 'Europe/Paris', message: 'morning briefing' }] } });
  expect(r.status).toBe(202);
  const id: string = r.json.schedules[0].schedule_id;
  await waitUntil(async () => (await call('GET', `/tasks/${r.json.task_id}`)).json.status === 'completed', 30_000);

  if (env) {
    await env.sleep(3 * DAY);
  } else {
    await withTemporal(stack, (c) => c.schedule.getHandle(id).backfill({ start: new Date(Date.now() - 3 * DAY), end: new Date(), overlap: 'ALLOW_ALL' }));
  }
  let tasks: { task_id: string; status: string; session: string }[] = [];
  await waitUntil(async () => {
    tasks = (await call('GET', `/tasks?schedule=${id}`)).json.tasks;
    return tasks.length >= 3 && tasks.every((t) => t.status === 'completed');
  }, 60_000, 500);
  expect(tasks).toHaveLength(3);
  for (const t of tasks) expect(t.session).toBe(r.json.session);

  const d = (await call('GET', `/schedules/${id}`)).json;
  expect(d.runs).toBe(3);
  const times = d.recent_tasks.map((t: { scheduled_at: string }) => Date.parse(t.scheduled_at)).sort();
  for (const t of times) expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit', hour12: false }).format(t)).toBe('09:00');
  expect(times[1] - times[0]).toBe(DAY);
  expect(times[2] - times[1]).toBe(DAY);
  expect(new Set(d.recent_tasks.map((t: { task_id: string }) => t.task_id))).toEqual(new Set(tasks.map((t) => t.task_id)));
  const thread = (await call('GET', `/sessions/${r.json.session}/messages`)).json.messages;
  expect(thread.filter((m: { content: string }) => m.content === 'morning briefing')).toHaveLength(3);
});
