// A model provider that is down, as a user sees it: the stream announces each
// retry (agent_retry), the task view shows the attempt and the last error
// (from Temporal's pending activity), and after MODEL_UNAVAILABLE_AFTER_MS the
// task fails with model_unavailable; a synchronous request gets that error.
// The worker's log has the task's start, its retries and its end. A provider
// that stops sending in the middle of its answer is a failed attempt too
// (MODEL_STREAM_IDLE_MS), retried, never a run held for the activity's timeout.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { useStack, postStream, readSse, SseEvent, KEY_A, waitUntil } from './helpers';
import { ChildLogs } from '../../src/dev/launcher/child-logs';

const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outage-logs-'));
const childLogs = new ChildLogs({ dir: logDir });
// Attempts at about 0, 1 and 3 s; the bound ends the turn at about 6 s.
const { stack, call } = useStack(
  { MODEL_UNAVAILABLE_AFTER_MS: '6000', MODEL_STREAM_IDLE_MS: '2000', LOG_LEVEL: 'info' },
  { childLogs },
);

afterAll(async () => {
  await childLogs.close();
  fs.rmSync(logDir, { recursive: true, force: true });
});

const DOWN = '[[fail status=503 times=1000 message="upstream overloaded"]] are you there?';

const logLines = (proc: string) =>
  fs
    .readFileSync(path.join(logDir, `${proc}.log`), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test('a streamed run: agent_retry per failed attempt, attempt/last_error in the task view meanwhile, then agent_error model_unavailable', async () => {
  const res = await postStream(stack(), { message: DOWN }, '/', KEY_A);
  expect(res.status).toBe(200);
  const taskId = res.headers.get('x-task-id')!;
  const events: SseEvent[] = [];
  const reading = readSse(res, (ev) => {
    events.push(ev);
    return ev.data.type === 'agent_error' || ev.data.type === 'agent_completed';
  });
  // While it retries, the view says which attempt is under way and why the last one failed.
  const seen = await waitUntil(
    'the task view to show an attempt under way',
    async () => (await call('GET', `/tasks/${taskId}`)).json,
    (v) => Boolean(v?.attempt),
    { stepMs: 150 },
  );
  expect(seen.status).toBe('running');
  expect(seen.attempt).toBeGreaterThanOrEqual(2);
  expect(seen.last_error).toEqual({ type: 'model_unavailable', message: expect.stringContaining('HTTP 503') });
  await reading;
  const types = events.map((e) => e.data.type);
  const retries = events.filter((e) => e.data.type === 'agent_retry').map((e) => e.data);
  expect(retries.length).toBeGreaterThanOrEqual(2);
  expect(retries[0]).toMatchObject({
    what: 'model',
    attempt: 1,
    retry_in_ms: 1000,
    error: { type: 'model_unavailable' },
  });
  expect(retries.map((r) => r.attempt)).toEqual(retries.map((_, i) => i + 1));
  expect(types[types.length - 1]).toBe('agent_error');
  expect(events[events.length - 1].data.error).toEqual({
    type: 'model_unavailable',
    message: expect.stringMatching(/stayed unavailable for \d+ s over \d+ attempts .*HTTP 503/),
  });
  // Seq stays gap-free with the notices in it.
  expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
  const done = await call('GET', `/tasks/${taskId}`);
  expect(done.json).toMatchObject({
    status: 'failed',
    attempt: null,
    last_error: null,
    error: { type: 'model_unavailable' },
  });

  // The worker's log: the run began, each retry, and its end, by task id.
  await waitUntil("the worker's 'task failed' log line", () =>
    logLines('worker').some((l) => l.msg === 'task failed' && l.task_id === taskId),
  );
  const worker = logLines('worker');
  expect(worker.find((l) => l.msg === 'task running' && l.task_id === taskId)).toBeDefined();
  expect(worker.filter((l) => l.msg === 'model call failed; Temporal retries it' && l.task_id === taskId).length).toBe(
    retries.length,
  );
  expect(worker.find((l) => l.msg === 'task failed' && l.task_id === taskId)).toMatchObject({
    error: 'model_unavailable',
    account: 'alice',
  });
});

test('a synchronous request gets the model_unavailable error, not silence', async () => {
  // The provider never recovers: only MODEL_UNAVAILABLE_AFTER_MS ends the run, and the answer says so.
  const r = await call('POST', '/', { body: { message: `${DOWN} (sync)` } });
  expect(r.status).toBe(200);
  expect(r.json).toMatchObject({
    status: 'failed',
    error: {
      type: 'model_unavailable',
      message: expect.stringMatching(/stayed unavailable for \d+ s over \d+ attempts/),
    },
  });
  // The gateway logged the request: method, path, status, time, task and account; never the key.
  const ofTask = () => logLines('gateway').find((l) => l.msg === 'request' && l.task_id === r.headers.get('x-task-id'));
  await waitUntil("the gateway's request log line", () => ofTask() !== undefined);
  const line = ofTask();
  expect(line).toMatchObject({ method: 'POST', path: '/', status: 200, account: 'alice' });
  expect(typeof line!.ms).toBe('number');
  for (const proc of ['gateway', 'worker'])
    expect(fs.readFileSync(path.join(logDir, `${proc}.log`), 'utf8')).not.toContain(KEY_A);
});

test('a provider that stalls mid-answer: the attempt fails after MODEL_STREAM_IDLE_MS (agent_retry), the text so far is retracted, and the retry answers', async () => {
  const res = await postStream(
    stack(),
    {
      message: `[[hang after=3 times=1 key=stall-${Date.now()}]] [[say text="the whole answer comes in six words"]] go`,
      streaming_tokens: true,
    },
    '/',
    KEY_A,
  );
  const events = (await readSse(res, (ev) => ev.data.type === 'agent_error' || ev.data.type === 'agent_completed')).map(
    (e) => e.data,
  );
  expect(events.at(-1).type).toBe('agent_completed');
  const types = events.map((e) => e.type);
  const retry = events.find((e) => e.type === 'agent_retry');
  expect(retry).toMatchObject({
    what: 'model',
    attempt: 1,
    error: { type: 'model_unavailable', message: expect.stringContaining('MODEL_STREAM_IDLE_MS') },
  });
  const retract = events.find((e) => e.type === 'agent_retract');
  expect(retract).toMatchObject({ from_seq: events.find((e) => e.type === 'agent_response_start').seq, attempt: 2 });
  expect(types.indexOf('agent_retry')).toBeLessThan(types.indexOf('agent_retract'));
  const after = events.slice(types.indexOf('agent_retract'));
  expect(
    after
      .filter((e) => e.type === 'agent_response')
      .map((e) => e.content)
      .join(''),
  ).toBe('the whole answer comes in six words');
  const result = await call('GET', `/tasks/${res.headers.get('x-task-id')}/result`);
  expect(result.json.output).toBe('the whole answer comes in six words');
});
