// The token thread against a real Redis and the scripted model: progress comes
// back while tokens flow, a cancel stops the stream at once, and a thread that
// dies fails its streams (retryable) and is replaced by the next stream.
import pino from 'pino';
import path from 'node:path';
import { EventPublisher } from '../../../src/common/relay/publisher';
import { startScriptedModel, ScriptedModel } from '../../../src/dev/scripted-model';
import { ThreadedModelStream, ThreadedModelStreamOptions } from '../../../src/worker/model-stream/thread-runner';
import { StreamRunnerError } from '../../../activities/model-stream';
import type { StreamRequest, TurnProgress } from '../../../activities/model-stream';
import { PrivateRedis, startPrivateRedis } from '../../common/relay/private-redis';
import { waitUntil } from '../../support/wait-until';

const logger = pino({ level: 'silent' });
let server: PrivateRedis;
let model: ScriptedModel;
let publisher: EventPublisher;
const runners: ThreadedModelStream[] = [];

beforeAll(async () => {
  server = await startPrivateRedis();
  model = await startScriptedModel({ port: 0 });
  publisher = new EventPublisher({ redis: server.redis, logger, ttlMs: 60_000 });
});
afterAll(async () => {
  for (const r of runners) await r.close();
  await model?.close();
  await server?.stop();
});

function runner(extra: Partial<ThreadedModelStreamOptions> = {}): ThreadedModelStream {
  const r = new ThreadedModelStream({
    config: {
      openai: { apiKey: 'sk-test-secret', baseURL: model.url, timeoutMs: 30_000, idleMs: 60_000 },
      redisUrl: server.url,
      ttlMs: 60_000,
      logLevel: 'silent',
      logJson: true,
    },
    logger,
    ...extra,
  });
  runners.push(r);
  return r;
}

let n = 0;
function request(message: string, prefix = 'task_thread'): StreamRequest {
  return {
    taskId: `${prefix}${++n}`,
    session: 'sess_t',
    producer: 's1',
    model: 'scripted-base',
    messages: [{ role: 'user', content: message }],
    tools: [],
    streamTokens: true,
    showThinking: false,
  };
}
const fresh = (): TurnProgress => ({
  content: '',
  thinking: '',
  published: 0,
  lastSeq: 0,
  thinkingStarted: false,
  responseStarted: false,
  chunks: 0,
  promptTokens: 0,
  spent: { promptTokens: 0, completionTokens: 0 },
});

test('the thread reports its OS thread id, and progress while tokens flow', async () => {
  const r = runner();
  expect(await r.start()).toEqual(expect.any(Number));
  const seen: TurnProgress[] = [];
  const req = request('[[slow delay=60 tokens=25]] go');
  const out = await r.run(req, fresh(), { signal: new AbortController().signal, onProgress: (p) => seen.push(p) });
  expect(out.progress.content.trim().split(/\s+/)).toHaveLength(25);
  // 25 tokens at 60 ms is 1.5 s: progress came at least twice, growing, before the end.
  expect(seen.length).toBeGreaterThanOrEqual(2);
  expect(seen[0].content.length).toBeLessThan(seen[seen.length - 1].content.length);
  expect(seen[seen.length - 1].content.length).toBeLessThan(out.progress.content.length + 1);
  const events = await publisher.readAfter(req.taskId, 0);
  expect(events.map((e) => e.seq)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
  expect(out.progress.lastSeq).toBe(events.length);
  expect(out.progress.published).toBe(events.length);
});

test('a cancel stops the stream mid-answer, cutting its request, and nothing is published after it', async () => {
  const r = runner();
  await r.start();
  const abort = new AbortController();
  // Five minutes of answer (6000 tokens, 50 ms apart): a stream that did not stop would hold the test to its timeout.
  const req = request('[[slow delay=50 tokens=6000]] go');
  const cut = model.stats().clientAborts;
  const run = r.run(req, fresh(), { signal: abort.signal });
  await waitUntil(
    'tokens flowing (three events published)',
    () => publisher.readAfter(req.taskId, 0),
    (evs) => evs.length > 2,
  );
  abort.abort();
  await expect(run).rejects.toMatchObject({ name: 'AbortError' });
  const atCancel = (await publisher.readAfter(req.taskId, 0)).length;
  expect(atCancel).toBeGreaterThan(2);
  // The model request was cut, not read to its end: the model saw its client go away, and no token can come after that.
  await waitUntil(
    'the scripted model to see the stream cut',
    () => model.stats().clientAborts,
    (n) => n === cut + 1,
  );
  expect((await publisher.readAfter(req.taskId, 0)).length).toBe(atCancel);
});

test('a thread that dies fails its streams, and the next stream gets a new thread', async () => {
  const r = runner({ entry: path.join(__dirname, 'fixtures/crashing-thread.ts') });
  const first = await r.start();
  const slow = r.run(request('[[slow delay=50 tokens=40]] go'), fresh(), { signal: new AbortController().signal });
  const crash = r.run(request('hello', 'crash'), fresh(), { signal: new AbortController().signal });
  await expect(crash).rejects.toThrow(/token thread exited \(code 3\)/);
  await expect(crash).rejects.toBeInstanceOf(StreamRunnerError);
  await expect(slow).rejects.toThrow(/token thread exited/);
  // The new thread's first stream (sent before the thread is up) publishes every event, in order.
  const req = request('[[say text="after the crash"]] go');
  const out = await r.run(req, fresh(), { signal: new AbortController().signal });
  expect(out.progress.content).toBe('after the crash');
  const events = await publisher.readAfter(req.taskId, 0);
  expect(events.map((e) => e.seq)).toEqual(Array.from({ length: out.progress.lastSeq }, (_, i) => i + 1));
  expect(
    events
      .filter((e) => e.type === 'agent_response')
      .map((e) => (e as { content: string }).content)
      .join(''),
  ).toBe('after the crash');
  expect(await r.start()).not.toBe(first);
});

test('a model error crosses the thread with its status and message, without the API key', async () => {
  const r = runner();
  const err = await r
    .run(request('[[fail status=401 message="bad key" times=1]] x'), fresh(), { signal: new AbortController().signal })
    .catch((e: unknown) => e);
  expect(err).toMatchObject({ status: 401 });
  expect(String((err as Error).message)).toContain('bad key');
  expect(JSON.stringify(err) + String((err as Error).message)).not.toContain('sk-test-secret');
});
