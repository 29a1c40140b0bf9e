// Schedules (SPEC 2.5) over HTTP on the real processes: a seconds schedule and
// a date schedule each fire once and their tasks complete in the request's
// session; the answer, the stream and the listings show them; cron entries
// follow their time zone; pause, unpause, trigger and delete; each bad entry
// is a 400 naming it; another account sees none of it. (Three days of a cron
// schedule in virtual time: schedules-cron.e2e.test.ts; here by a backfill.)
import { KEY_B, postStream, readSse, scheduleRunClosed, useStack, waitUntil, withTemporal, sleep } from './helpers';
import { DAY, threeMorningsOfCron } from './cron-days';

jest.setTimeout(120_000);
const ctx = useStack();
const call: typeof ctx.call = (...args) => ctx.call(...args);

async function tasksOf(
  scheduleId: string,
  key?: string,
): Promise<{ task_id: string; status: string; session: string; created_at: string }[]> {
  const r = await call('GET', `/tasks?schedule=${scheduleId}`, { key });
  expect(r.status).toBe(200);
  return r.json.tasks;
}

/** The tasks a schedule started, once there are `n` of them and all have finished. */
function finishedTasks(scheduleId: string, n: number) {
  return waitUntil(
    `${n} finished task(s) of schedule ${scheduleId}`,
    () => tasksOf(scheduleId),
    (tasks) => tasks.length >= n && tasks.every((t) => ['completed', 'failed', 'cancelled'].includes(t.status)),
    { stepMs: 250 },
  );
}

/** Hours and minutes, and weekday, of an instant in a time zone, computed apart from the service. */
/** The schedule as GET /schedules lists it, once it shows `state` (the list is Temporal's visibility, which may trail). */
async function waitForListed(scheduleId: string, state: string): Promise<Record<string, unknown>> {
  const found = await waitUntil(
    `schedule ${scheduleId} listed as ${state}`,
    async () =>
      ((await call('GET', '/schedules?limit=100')).json.schedules as Record<string, unknown>[]).find(
        (s) => s.schedule_id === scheduleId,
      ),
    (s) => s?.state === state,
    { stepMs: 250 },
  );
  return found!;
}

function wallClock(iso: string, timeZone: string): { hm: string; weekday: string } {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hour: '2-digit',
    minute: '2-digit',
    weekday: 'short',
    hour12: false,
  }).formatToParts(new Date(iso));
  const get = (t: string) => parts.find((p) => p.type === t)!.value;
  return { hm: `${get('hour')}:${get('minute')}`, weekday: get('weekday') };
}

test('a seconds schedule fires once: its task completes in the request session; stream, answer and listings show it', async () => {
  const before = Date.now();
  const res = await postStream(ctx.stack(), {
    message: 'hello now',
    schedules: [{ schedule: 2, message: 'later: the private plan' }],
  });
  expect(res.status).toBe(200);
  const events = await readSse(res, (e) => e.data.type === 'agent_completed');
  expect(events.map((e) => e.data.type).slice(0, 2)).toEqual(['agent_started', 'agent_scheduled']);
  const [announced] = events[1].data.schedules;
  expect(announced.schedule_id).toMatch(/^sched_[0-9a-f]{32}$/);
  // Whole seconds, never early: two seconds after the request, rounded up.
  const at = Date.parse(announced.next_run_at);
  expect(at).toBeGreaterThanOrEqual(before + 2000 - 1000);
  expect(at).toBeLessThanOrEqual(Date.now() + 3000);
  const session = events[0].data.session;

  const [task] = await finishedTasks(announced.schedule_id, 1);
  expect(task).toMatchObject({ status: 'completed', session });
  expect(Date.parse(task.created_at)).toBeGreaterThanOrEqual(at);
  const result = await call('GET', `/tasks/${task.task_id}/result?wait=10`);
  expect([result.status, result.json.output]).toEqual([200, expect.stringContaining('later: the private plan')]);
  // It continued the request's session: the thread holds both exchanges.
  const thread = await call('GET', `/sessions/${session}/messages`);
  expect(thread.json.messages.map((m: { content: string }) => m.content)).toEqual([
    'hello now',
    expect.any(String),
    'later: the private plan',
    expect.any(String),
  ]);

  const d = await call('GET', `/schedules/${announced.schedule_id}`);
  expect(d.status).toBe(200);
  // Ran, with no run left: done, in the detail and in the list.
  expect(d.json).toMatchObject({
    schedule_id: announced.schedule_id,
    session,
    schedule: 2,
    runs: 1,
    next_run_at: null,
    next_runs: [],
    paused: false,
    state: 'done',
  });
  const listed = await waitForListed(announced.schedule_id, 'done');
  expect(listed).toMatchObject({ schedule_id: announced.schedule_id, state: 'done', next_run_at: null });
  expect(d.json.recent_tasks.map((t: { task_id: string }) => t.task_id)).toEqual([task.task_id]);
  // Deliberate: a schedule that did not stop after its one run would fire again within a period (2 s).
  await sleep(2500);
  expect(await tasksOf(announced.schedule_id)).toHaveLength(1);

  // The entry's message and the request are ciphertext in Temporal (the schedule as stored, read without the codec).
  const raw = await withTemporal(ctx.stack(), (c) =>
    c.workflowService.describeSchedule({ namespace: 'default', scheduleId: announced.schedule_id }),
  );
  expect(Buffer.from(JSON.stringify(raw)).toString()).not.toContain('private plan');
});

test('a date schedule fires once at its instant; a background answer carries the schedules', async () => {
  const at = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000);
  // The instant with an offset, as a user in UTC+02:00 would write it.
  const local = new Date(at.getTime() + 2 * 3600_000).toISOString().replace(/\.000Z$/, '+02:00');
  const r = await call('POST', '/', {
    body: { message: 'set it up', background: true, schedules: [{ schedule: local, message: 'at the instant' }] },
  });
  expect(r.status).toBe(202);
  expect(r.json.schedules).toEqual([{ schedule_id: expect.stringMatching(/^sched_/), next_run_at: at.toISOString() }]);
  const id = r.json.schedules[0].schedule_id;
  const [task] = await finishedTasks(id, 1);
  expect(task.status).toBe('completed');
  expect(Date.parse(task.created_at)).toBeGreaterThanOrEqual(at.getTime());
  expect(task.session).toBe(r.json.session);
  const d = await call('GET', `/schedules/${id}`);
  expect(d.json.recent_tasks[0]).toMatchObject({ task_id: task.task_id, scheduled_at: at.toISOString() });
});

test('cron entries run in their time zone (default UTC), with the overlap asked for', async () => {
  const r = await call('POST', '/', {
    body: {
      message: 'plan the week',
      schedules: [
        { schedule: '30 9 * * 1-5', timezone: 'America/New_York', message: 'standup notes', overlap: 'buffer_one' },
        { schedule: '0 12 * * *', message: 'noon report' },
      ],
    },
  });
  expect(r.status).toBe(200);
  const [ny, utc] = r.json.schedules;
  const nyDetail = (await call('GET', `/schedules/${ny.schedule_id}`)).json;
  expect(nyDetail).toMatchObject({
    schedule: '30 9 * * 1-5',
    timezone: 'America/New_York',
    overlap: 'buffer_one',
    runs: 0,
    next_run_at: ny.next_run_at,
  });
  expect(nyDetail.next_runs).toHaveLength(5);
  for (const t of nyDetail.next_runs) {
    const w = wallClock(t, 'America/New_York');
    expect(w.hm).toBe('09:30');
    expect(['Mon', 'Tue', 'Wed', 'Thu', 'Fri']).toContain(w.weekday);
  }
  const utcDetail = (await call('GET', `/schedules/${utc.schedule_id}`)).json;
  expect(utcDetail).toMatchObject({ timezone: 'UTC', overlap: 'skip' });
  for (const t of utcDetail.next_runs) expect(t).toMatch(/T12:00:00\.000Z$/);
  expect(Date.parse(utcDetail.next_runs[1]) - Date.parse(utcDetail.next_runs[0])).toBe(86_400_000);
  for (const s of r.json.schedules) expect((await call('DELETE', `/schedules/${s.schedule_id}`)).status).toBe(204);
});

test('pause, trigger, unpause and delete; a deleted schedule is gone, its task stays', async () => {
  const r = await call('POST', '/', {
    body: { message: 'yearly', background: true, schedules: [{ schedule: '0 0 1 1 *', message: 'happy new year' }] },
  });
  const id = r.json.schedules[0].schedule_id;
  const paused = await call('POST', `/schedules/${id}/pause`, { body: { note: 'holidays' } });
  expect(paused.status).toBe(200);
  expect(paused.json).toMatchObject({ paused: true, state: 'paused', note: 'holidays' });
  const trig = await call('POST', `/schedules/${id}/trigger`);
  expect(trig.status).toBe(202);
  expect(trig.json).toEqual({ schedule_id: id, triggered: true });
  const [task] = await finishedTasks(id, 1);
  expect(task.status).toBe('completed');
  const resumed = await call('POST', `/schedules/${id}/unpause`);
  expect(resumed.json).toMatchObject({ paused: false, state: 'active', runs: 1 });
  expect(resumed.json.next_run_at).toMatch(/-01-01T00:00:00\.000Z$/);
  expect((await call('DELETE', `/schedules/${id}`)).status).toBe(204);
  expect((await call('GET', `/schedules/${id}`)).status).toBe(404);
  expect((await call('DELETE', `/schedules/${id}`)).status).toBe(404);
  expect((await call('POST', `/schedules/${id}/trigger`)).status).toBe(404);
  expect((await call('GET', `/tasks/${task.task_id}`)).json.status).toBe('completed');
});

test('each run of a schedule is a task of its own, even two runs of one second', async () => {
  // Temporal names a schedule's run by the schedule and the second it is due: a trigger within the
  // second of a run that has ended is another run of the same workflow id (both engines:
  // schedules-manage.engine), one within the second of a run still going starts nothing
  // (docs/api.md, Schedules). Either way, each run the schedule counts is a task of its own.
  const r = await call('POST', '/', {
    body: { message: 'twice', background: true, schedules: [{ schedule: '0 0 1 1 *', message: 'again and again' }] },
  });
  const id = r.json.schedules[0].schedule_id;
  const detail = async () => (await call('GET', `/schedules/${id}`)).json;
  // At the start of a second: the run may well end, and the next trigger come, within it.
  await sleep(1000 - (Date.now() % 1000));
  expect((await call('POST', `/schedules/${id}/trigger`)).status).toBe(202);
  await finishedTasks(id, 1);
  await scheduleRunClosed(ctx.stack(), id);
  expect((await call('POST', `/schedules/${id}/trigger`)).status).toBe(202);
  // A trigger in a later second, surely another run: once it is taken, so is the one before it.
  await sleep(1100);
  const last = Date.now();
  expect((await call('POST', `/schedules/${id}/trigger`)).status).toBe(202);
  const d = await waitUntil('the last trigger taken', detail, (d) =>
    d.recent_tasks.some((t: { scheduled_at: string }) => Date.parse(t.scheduled_at) >= last - 1000),
  );
  const tasks = await finishedTasks(id, d.runs);
  const ids = tasks.map((t: { task_id: string }) => t.task_id);
  // Every run its own task, and the schedule names the tasks it started.
  expect(tasks).toHaveLength(d.runs);
  expect(new Set(ids).size).toBe(d.runs);
  expect(d.recent_tasks.map((t: { task_id: string }) => t.task_id).sort()).toEqual([...ids].sort());
  expect(tasks.map((t: { status: string }) => t.status)).toEqual(ids.map(() => 'completed'));
  expect((await call('DELETE', `/schedules/${id}`)).status).toBe(204);
});

test('a repeated Idempotency-Key answers the same schedules and makes no new ones', async () => {
  const headers = { 'idempotency-key': `sched-idem-${Date.now()}` };
  const body = { message: 'once only', background: true, schedules: [{ schedule: '0 3 * * *', message: 'nightly' }] };
  const a = await call('POST', '/', { body, headers });
  const b = await call('POST', '/', { body, headers });
  expect(b.headers.get('idempotent-replayed')).toBe('true');
  expect(b.json.schedules).toEqual(a.json.schedules);
  expect((await call('DELETE', `/schedules/${a.json.schedules[0].schedule_id}`)).status).toBe(204);
});

test('each entry that cannot be read is a 422 naming the entry and the field (one of the wrong shape a 400); nothing starts', async () => {
  const listed = async () => (await call('GET', '/tasks?limit=100')).json.tasks.length;
  const tasksBefore = await listed();
  const r = await call('POST', '/', {
    body: {
      message: 'never runs',
      schedules: [
        { schedule: '61 * * * *', message: 'a' },
        { schedule: '2020-01-01T00:00:00Z', message: 'b' },
        { schedule: '2031-01-01T09:00:00', message: 'c' },
        { schedule: '0 9 * * *', timezone: 'Mars/Olympus', message: 'd' },
        { schedule: 30, timezone: 'UTC', message: 'e' },
        { schedule: 'every day', message: 'f' },
        { schedule: 5, message: 'g', overlap: 'allow_all' },
      ],
    },
  });
  expect(r.status).toBe(422);
  expect(r.json.error.details.map((d: { path: string; code: string }) => [d.path, d.code])).toEqual([
    ['body.schedules[0].schedule', 'invalid_cron'],
    ['body.schedules[1].schedule', 'past'],
    ['body.schedules[2].schedule', 'no_time_zone'],
    ['body.schedules[3].timezone', 'invalid_timezone'],
    ['body.schedules[4].timezone', 'unexpected'],
    ['body.schedules[5].schedule', 'invalid_cron'],
    ['body.schedules[6].overlap', 'unexpected'],
  ]);
  expect(r.json.error.message).toContain('minute field "61"');
  for (const bad of [
    { schedule: -5, message: 'x' },
    { schedule: 60 },
    { schedule: '* * * * *', message: 'x', overlap: 'sometimes' },
    { schedule: '* * * * *', message: 'x', extra: 1 },
  ]) {
    const z = await call('POST', '/', { body: { message: 'never', schedules: [bad] } });
    expect(z.status).toBe(400);
    expect(z.json.error.details[0].path).toMatch(/^body\.schedules\[0\]/);
  }
  expect(
    (await call('POST', '/', { body: { message: 'never', schedules: Array(21).fill({ schedule: 60, message: 'x' }) } }))
      .status,
  ).toBe(400);
  expect((await call('GET', '/schedules/not-a-schedule')).status).toBe(400);
  expect(await listed()).toBe(tasksBefore);
});

test("another account's schedules are not found, not listed, not touched", async () => {
  const r = await call('POST', '/', {
    body: { message: 'mine', background: true, schedules: [{ schedule: '0 6 * * *', message: 'private' }] },
  });
  const id = r.json.schedules[0].schedule_id;
  for (const [method, path] of [
    ['GET', `/schedules/${id}`],
    ['DELETE', `/schedules/${id}`],
    ['POST', `/schedules/${id}/pause`],
    ['POST', `/schedules/${id}/unpause`],
    ['POST', `/schedules/${id}/trigger`],
  ] as const) {
    const other = await call(method, path, { key: KEY_B });
    expect([method, path, other.status]).toEqual([method, path, 404]);
  }
  expect(
    (await call('GET', '/schedules?limit=100', { key: KEY_B })).json.schedules.map(
      (s: { schedule_id: string }) => s.schedule_id,
    ),
  ).not.toContain(id);
  expect(await tasksOf(id, KEY_B)).toEqual([]);
  // Still there, untouched, for its owner.
  expect((await call('GET', `/schedules/${id}`)).json).toMatchObject({ paused: false, runs: 0 });
  expect((await call('DELETE', `/schedules/${id}`)).status).toBe(204);
});

test('the list pages with a cursor and holds every schedule once', async () => {
  const r = await call('POST', '/', {
    body: {
      message: 'three',
      background: true,
      schedules: ['0 1 * * *', '0 2 * * *', '0 3 * * *'].map((schedule) => ({ schedule, message: schedule })),
    },
  });
  const ids: string[] = r.json.schedules.map((s: { schedule_id: string }) => s.schedule_id);
  let seen: string[] = [];
  // Visibility of schedules is eventually consistent on a real server: read until all three are listed.
  await waitUntil(
    'the three schedules, paged two by two',
    async () => {
      seen = [];
      let cursor: string | null = null;
      do {
        const page: { json: { schedules: { schedule_id: string }[]; next_cursor: string | null } } = await call(
          'GET',
          `/schedules?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        expect(page.json.schedules.length).toBeLessThanOrEqual(2);
        seen.push(...page.json.schedules.map((s) => s.schedule_id));
        cursor = page.json.next_cursor;
      } while (cursor);
      return ids.every((id) => seen.includes(id));
    },
    { stepMs: 500 },
  );
  expect(new Set(seen).size).toBe(seen.length);
  expect((await call('GET', '/schedules?cursor=garbage')).status).toBe(422);
  expect((await call('GET', '/schedules?cursor=gar%20bage')).status).toBe(400);
  for (const id of ids) await call('DELETE', `/schedules/${id}`);
});

test('a backfill of three days of a daily cron schedule in Europe/Paris starts three tasks, each at 09:00 Paris time', async () => {
  // What Temporal does for times missed within its catch-up window; the real dev server has no time skipping.
  await threeMorningsOfCron(call, (id) =>
    withTemporal(ctx.stack(), (c) =>
      c.schedule
        .getHandle(id)
        .backfill({ start: new Date(Date.now() - 3 * DAY), end: new Date(), overlap: 'ALLOW_ALL' }),
    ),
  );
});
