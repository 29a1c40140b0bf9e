// A run terminated from outside (the Web UI, the CLI) reads as finished
// everywhere Temporal decides: its status, the task list, its event stream
// (which ends with a terminal event the gateway publishes for it), and its
// session, whose next run starts as soon as the run closed (the session
// waits for its active run's close; its periodic check, RUN_WATCH_MS, is set
// to ten minutes here, so it cannot be what moves it on), and the account slot
// the run held (one per account here). A run whose session never opened
// (lazy-sessions.ts) has no session watching it: its slot comes back through
// the slots workflow's check of its holders, every few seconds while tasks
// wait for a slot (RUN_WATCH_MS, ten minutes, when none do). Streams check
// the run at every heartbeat, 500 ms here.
import { KEY_A, readSse, SseEvent, useStack, waitUntil, withTemporal } from './helpers';

jest.setTimeout(120_000);
const ctx = useStack({ RUN_WATCH_MS: '600000', SSE_HEARTBEAT_MS: '500', MAX_RUNNING_TASKS_PER_ACCOUNT: '1' });

function getStream(path: string, lastEventId?: string): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${KEY_A}`, accept: 'text/event-stream' };
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  return fetch(`${ctx.stack().gatewayUrl}${path}`, { headers });
}

const seqs = (evs: SseEvent[]) => evs.map((e) => Number(e.id));

test('terminate the active run of a session: status, list and stream say failed, the next run of the session completes', async () => {
  const first = await ctx.call('POST', '/', {
    body: { message: '[[slow delay=200 tokens=200]] long one', background: true },
  });
  const id = first.json.task_id;
  const session = first.json.session;
  await waitUntil(
    "the session's run running",
    async () => (await ctx.call('GET', `/tasks/${id}`)).json.status === 'running',
  );
  const live = getStream(`/tasks/${id}/events`).then((res) => readSse(res));
  const next = await ctx.call('POST', `/?session=${session}`, { body: { message: 'after it', background: true } });
  expect(next.status).toBe(202);
  const stopped = Date.now();
  await withTemporal(ctx.stack(), (client) => client.workflow.getHandle(id).terminate('operator stop'));

  // The open stream ends, its last event the terminal one the gateway published.
  const events = await live;
  expect(events.at(-1)!.data).toMatchObject({ type: 'agent_error', error: { type: 'terminated' }, task_id: id });
  expect(seqs(events)).toEqual(events.map((_e, i) => i + 1));

  const status = await ctx.call('GET', `/tasks/${id}`);
  expect(status.json).toMatchObject({ status: 'failed', error: { type: 'terminated' } });
  await waitUntil("the session's listing to show the terminated run failed", async () =>
    (await ctx.call('GET', `/tasks?session=${session}`)).json.tasks.some(
      (t: { task_id: string; status: string }) => t.task_id === id && t.status === 'failed',
    ),
  );
  const result = await ctx.call('GET', `/tasks/${next.json.task_id}/result?wait=30`);
  expect(result.json).toMatchObject({ status: 'completed', output: 'You said: after it' });
  const started = Date.parse((await ctx.call('GET', `/tasks/${next.json.task_id}`)).json.started_at);
  console.log(`terminated.test: the session's next run started ${started - stopped} ms after the terminate`);

  // A late stream replays the same events, the one terminal event included, and ends.
  const replay = await readSse(await getStream(`/tasks/${id}/events`));
  expect(replay.map((e) => e.data)).toEqual(events.map((e) => e.data));
  // Resumed at the end, or past it: nothing is left, and the stream ends at once.
  const last = events.at(-1)!.id!;
  expect(await readSse(await getStream(`/tasks/${id}/events`, last))).toEqual([]);
  expect(await readSse(await getStream(`/tasks/${id}/events?after=9999`))).toEqual([]);
});

test("terminate a background task holding its account's only slot: the account's next task, in another session, runs", async () => {
  const holder = await ctx.call('POST', '/', {
    body: { message: '[[slow delay=200 tokens=200]] holds the slot', background: true },
  });
  await waitUntil(
    'the slot holder running',
    async () => (await ctx.call('GET', `/tasks/${holder.json.task_id}`)).json.status === 'running',
  );
  const next = await ctx.call('POST', '/', { body: { message: 'next in line', background: true } });
  expect(next.json.session).not.toBe(holder.json.session);
  await withTemporal(ctx.stack(), (client) =>
    client.workflow.getHandle(holder.json.task_id).terminate('operator stop'),
  );
  const result = await ctx.call('GET', `/tasks/${next.json.task_id}/result?wait=60`);
  expect(result.json).toMatchObject({ status: 'completed', output: 'You said: next in line' });
});

test('a stream opened after a run was terminated gets the terminal event and ends', async () => {
  const run = await ctx.call('POST', '/', {
    body: { message: '[[slow delay=200 tokens=200]] cut short', background: true },
  });
  const id = run.json.task_id;
  await waitUntil('the run running', async () => (await ctx.call('GET', `/tasks/${id}`)).json.status === 'running');
  await withTemporal(ctx.stack(), (client) => client.workflow.getHandle(id).terminate('operator stop'));
  const events = await readSse(await getStream(`/tasks/${id}/events`));
  expect(events.at(-1)!.data).toMatchObject({ type: 'agent_error', error: { type: 'terminated' } });
  expect(events.filter((e) => e.data.type === 'agent_error')).toHaveLength(1);
});

test('a finished task resumed with Last-Event-ID at its last event ends at once; earlier, it sends the rest', async () => {
  const done = await ctx.call('POST', '/', { body: { message: 'short and done' } });
  expect(done.json.status).toBe('completed');
  const all = await readSse(await getStream(`/tasks/${done.json.task_id}/events`));
  expect(all.at(-1)!.data.type).toBe('agent_completed');
  expect(all.filter((e) => e.data.type === 'agent_completed')).toHaveLength(1); // the gateway's copy was skipped
  expect(await readSse(await getStream(`/tasks/${done.json.task_id}/events`, all.at(-1)!.id))).toEqual([]);
  const rest = await readSse(await getStream(`/tasks/${done.json.task_id}/events`, all.at(-3)!.id));
  expect(rest.map((e) => e.data)).toEqual(all.slice(-2).map((e) => e.data));
});
