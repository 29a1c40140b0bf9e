// client.schedules and the `schedules` of a run request (SPEC 2.5) through the
// typed client, against the real service: what each answer carries, list and
// listAll, get, pause, unpause, trigger, delete, tasks.list({schedule}), the
// typed errors, and another account's schedules. One stack for the file.
import {
  AgentClient,
  BadRequestError,
  NotFoundError,
  UnprocessableEntityError,
  type AgentEvent,
  type ScheduleDetail,
} from '../../client';
import { KEY_A, KEY_B, useStack, waitUntil } from '../e2e/helpers';

jest.setTimeout(90_000);
const ctx = useStack();
let agent: AgentClient;
let bob: AgentClient;
beforeAll(() => {
  agent = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_A });
  bob = new AgentClient({ baseUrl: ctx.stack().gatewayUrl, apiKey: KEY_B });
});

const SCHEDULE_ID = /^sched_[0-9a-f]{32}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

/**
 * Waits until the schedule has started `n` tasks and the latest one can be
 * read (its id is known as soon as the schedule acts, a moment before the
 * scheduled run has started the task), and answers its description then.
 */
async function tasksStarted(id: string, n: number): Promise<ScheduleDetail> {
  const d = await waitUntil(
    `${n} task(s) of schedule ${id}`,
    () => agent.schedules.get(id),
    (detail) => detail.recent_tasks.length >= n,
    { stepMs: 200 },
  );
  const latest = d.recent_tasks.at(-1)!.task_id;
  await waitUntil(`the schedule's latest task ${latest} to be readable`, () =>
    agent.tasks.get(latest).then(
      () => true,
      (e: unknown) => (e instanceof NotFoundError ? false : Promise.reject(e)),
    ),
  );
  return d;
}

test("run() answers the schedules it made; a seconds schedule starts one task in the run's session, then stays listed with no next run", async () => {
  const result = await agent.run({ message: 'now', schedules: [{ schedule: 2, message: 'in two seconds' }] });
  expect(result.status).toBe('completed');
  expect(result.schedules).toEqual([
    { schedule_id: expect.stringMatching(SCHEDULE_ID), next_run_at: expect.stringMatching(ISO) },
  ]);
  const id = result.schedules![0].schedule_id;

  const ran = await tasksStarted(id, 1);
  expect(ran).toMatchObject({
    schedule_id: id,
    session: result.session,
    schedule: 2,
    timezone: null,
    message_preview: 'in two seconds',
    paused: false,
    runs: 1,
  });
  const taskId = ran.recent_tasks[0].task_id;
  expect(ran.recent_tasks[0]).toEqual({
    task_id: expect.stringMatching(/^task_/),
    scheduled_at: expect.stringMatching(ISO),
    started_at: expect.stringMatching(ISO),
  });
  const done = await agent.tasks.result(taskId, { wait: 30 });
  expect(done).toMatchObject({
    task_id: taskId,
    session: result.session,
    status: 'completed',
    output: 'You said: in two seconds',
  });

  await waitUntil(
    "the schedule's one task listed",
    async () => (await agent.tasks.list({ schedule: id })).tasks.length === 1,
  );
  expect((await agent.tasks.list({ schedule: id })).tasks.map((t) => t.task_id)).toEqual([taskId]);
  // A one-time schedule that ran is still there, with nothing left to run, until it is deleted.
  expect(await agent.schedules.get(id)).toMatchObject({ next_run_at: null, next_runs: [], running_tasks: [] });
  await agent.schedules.delete(id);
  await expect(agent.schedules.get(id)).rejects.toBeInstanceOf(NotFoundError);
  await expect(agent.schedules.delete(id)).rejects.toBeInstanceOf(NotFoundError);
  // Its task stays, and so does the listing of the tasks it started.
  expect((await agent.tasks.get(taskId)).status).toBe('completed');
  expect((await agent.tasks.list({ schedule: id })).tasks.map((t) => t.task_id)).toEqual([taskId]);
});

test('a cron schedule: get shows its spec and next runs; pause (with a note), trigger while paused, unpause, list and listAll, delete', async () => {
  const accepted = await agent.runBackground({
    message: 'set it up',
    schedules: [{ schedule: '0 9 * * MON', message: 'weekly report', timezone: 'Europe/Paris', overlap: 'buffer_one' }],
  });
  expect(accepted.schedules).toEqual([
    { schedule_id: expect.stringMatching(SCHEDULE_ID), next_run_at: expect.stringMatching(ISO) },
  ]);
  const id = accepted.schedules![0].schedule_id;

  const d = await agent.schedules.get(id);
  expect(d).toMatchObject({
    schedule_id: id,
    session: accepted.session,
    schedule: '0 9 * * MON',
    timezone: 'Europe/Paris',
    overlap: 'buffer_one',
    paused: false,
    note: null,
    runs: 0,
    recent_tasks: [],
    running_tasks: [],
  });
  expect(d.next_runs).toHaveLength(5);
  expect(d.next_run_at).toBe(d.next_runs[0]);
  for (const t of d.next_runs) {
    const paris = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Paris',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).format(new Date(t));
    expect(paris).toBe('Mon 09:00');
  }

  const paused = await agent.schedules.pause(id, 'on holiday');
  expect(paused).toMatchObject({ schedule_id: id, paused: true, note: 'on holiday' });
  expect(await agent.schedules.pause(id)).toMatchObject({ paused: true });

  // A trigger runs now, paused or not.
  expect(await agent.schedules.trigger(id)).toEqual({ schedule_id: id, triggered: true });
  const triggered = await tasksStarted(id, 1);
  expect(triggered.runs).toBe(1);
  const result = await agent.tasks.result(triggered.recent_tasks[0].task_id, { wait: 30 });
  expect(result).toMatchObject({ session: accepted.session, status: 'completed', output: 'You said: weekly report' });

  expect(await agent.schedules.unpause(id)).toMatchObject({ schedule_id: id, paused: false });

  const other = (
    await agent.runBackground({ message: 'another', schedules: [{ schedule: '30 6 1 * *', message: 'monthly' }] })
  ).schedules![0].schedule_id;
  await waitUntil('both schedules in the listing', async () => {
    const all: string[] = [];
    for await (const s of agent.schedules.listAll({ limit: 1 })) all.push(s.schedule_id);
    expect(new Set(all).size).toBe(all.length);
    return all.includes(id) && all.includes(other);
  });
  const page = await agent.schedules.list({ limit: 1 });
  expect(page.schedules).toHaveLength(1);
  expect(page.next_cursor).toEqual(expect.any(String));
  const listed = (await agent.schedules.list({ limit: 100 })).schedules.find((s) => s.schedule_id === other);
  expect(listed).toEqual({
    schedule_id: other,
    session: expect.any(String),
    schedule: '30 6 1 * *',
    timezone: 'UTC',
    overlap: 'skip',
    message_preview: 'monthly',
    paused: false,
    state: 'active',
    note: null,
    created_at: expect.stringMatching(ISO),
    next_run_at: expect.stringMatching(/T06:30:00(\.000)?Z$/),
  });

  for (const s of [id, other]) await agent.schedules.delete(s);
  const left = (await agent.schedules.list({ limit: 100 })).schedules.map((s) => s.schedule_id);
  expect(left).not.toContain(id);
  expect(left).not.toContain(other);
});

test('stream() announces the schedules in agent_scheduled, right after agent_started', async () => {
  const stream = await agent.stream({
    message: 'stream me',
    schedules: [{ schedule: '0 0 1 1 *', message: 'new year' }],
  });
  const events: AgentEvent[] = [];
  for await (const ev of stream) events.push(ev);
  expect(events.map((e) => e.type).slice(0, 2)).toEqual(['agent_started', 'agent_scheduled']);
  const scheduled = events[1];
  if (scheduled.type !== 'agent_scheduled') throw new Error('no agent_scheduled');
  expect(scheduled.schedules).toEqual([
    {
      schedule_id: expect.stringMatching(SCHEDULE_ID),
      next_run_at: expect.stringMatching(/-01-01T00:00:00(\.000)?Z$/),
    },
  ]);
  await agent.schedules.delete(scheduled.schedules[0].schedule_id);
});

test("typed errors: an entry that cannot be read is an UnprocessableEntityError naming it, a malformed id a BadRequestError; another account's schedule is a NotFoundError", async () => {
  const bad = await agent
    .run({
      message: 'x',
      schedules: [
        { schedule: '0 9 * *', message: 'four fields' },
        { schedule: '2020-01-01T00:00:00Z', message: 'past' },
      ],
    })
    .catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(UnprocessableEntityError);
  expect(bad).toMatchObject({
    status: 422,
    type: 'unprocessable_request',
    details: expect.arrayContaining([
      expect.objectContaining({ path: 'body.schedules[0].schedule', code: 'invalid_cron' }),
      expect.objectContaining({ path: 'body.schedules[1].schedule', code: 'past' }),
    ]),
  });
  await expect(agent.schedules.get('not-a-schedule')).rejects.toBeInstanceOf(BadRequestError);
  await expect(agent.schedules.get(`sched_${'0'.repeat(32)}`)).rejects.toBeInstanceOf(NotFoundError);

  const mine = (
    await agent.runBackground({
      message: 'mine',
      schedules: [{ schedule: '0 12 * * MON-FRI', message: 'weekday noons' }],
    })
  ).schedules![0].schedule_id;
  await expect(bob.schedules.get(mine)).rejects.toBeInstanceOf(NotFoundError);
  await expect(bob.schedules.pause(mine, 'not yours')).rejects.toBeInstanceOf(NotFoundError);
  await expect(bob.schedules.trigger(mine)).rejects.toBeInstanceOf(NotFoundError);
  await expect(bob.schedules.delete(mine)).rejects.toBeInstanceOf(NotFoundError);
  expect((await bob.schedules.list({ limit: 100 })).schedules.map((s) => s.schedule_id)).not.toContain(mine);
  const weekdays = (await agent.schedules.get(mine)).next_runs.map((t) => new Date(t).getUTCDay());
  expect(weekdays.every((d) => d >= 1 && d <= 5)).toBe(true);
  await agent.schedules.delete(mine);
});
