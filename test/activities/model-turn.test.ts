// The model-turn activity against a real Redis and the scripted model, with
// the stream run in process and on the worker's token thread: the first turn
// publishes the run's prelude (agent_started) and caches its status; a retried
// attempt publishes nothing twice and leaves no seq gap; model errors keep
// their classification across the thread.
import OpenAI from 'openai';
import pino from 'pino';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import { createModelActivities, ModelTurnOutput } from '../../activities/model-turn';
import { inProcessModelStream, ModelStreamRunner, StreamRunnerError } from '../../activities/model-stream';
import { ThreadedModelStream } from '../../src/model-stream/thread-runner';
import { EventPublisher } from '../../src/relay/publisher';
import { StatusCache } from '../../src/relay/status-cache';
import { startScriptedModel, ScriptedModel } from '../../src/scripted-model';
import { costOf, initialView } from '../../workflows/types';
import type { TaskInput } from '../../workflows/types';
import { PrivateRedis, startPrivateRedis } from '../relay/private-redis';

const logger = pino({ level: 'silent' });
let server: PrivateRedis;
let model: ScriptedModel;
let publisher: EventPublisher;
let cache: StatusCache;
let threaded: ThreadedModelStream;
const runners: Record<string, () => ModelStreamRunner> = {
  'in process': () => inProcessModelStream({ openai: new OpenAI({ apiKey: 'test', baseURL: model.url, maxRetries: 0 }), publisher }),
  'on the token thread': () => threaded,
};

beforeAll(async () => {
  server = await startPrivateRedis();
  model = await startScriptedModel({ port: 0 });
  publisher = new EventPublisher({ redis: server.redis, logger, ttlMs: 60_000 });
  cache = new StatusCache(server.redis, logger, 60_000);
  threaded = new ThreadedModelStream({
    config: { openai: { apiKey: 'test', baseURL: model.url, timeoutMs: 30_000 }, redisUrl: server.url, ttlMs: 60_000, logLevel: 'silent', logJson: true },
    logger,
  });
  await threaded.start();
});
afterAll(async () => {
  await threaded?.close();
  await model?.close();
  await server?.stop();
});

let n = 0;
function turnInput() {
  const taskId = `task_turn${++n}`;
  const task = { taskId, account: 'acct', session: 'sess_1', metadata: {}, createdAt: new Date().toISOString() } as TaskInput;
  const view = { ...initialView(task), status: 'running' as const, started_at: new Date().toISOString() };
  return {
    taskId,
    session: 'sess_1',
    seqStart: 1,
    step: 1,
    mode: 'base' as const,
    streamTokens: true,
    messages: [{ role: 'user' as const, content: '[[say text="one two three"]] hi' }],
    prelude: [{ type: 'agent_started' }],
    view,
  };
}

describe.each(Object.keys(runners))('the stream run %s', (runner) => {
  let activities: ReturnType<typeof createModelActivities>;
  beforeAll(() => {
    activities = createModelActivities({
      modelStream: runners[runner](),
      publisher,
      statusCache: cache,
      config: { MODEL_FLASH: 'scripted-flash', MODEL_BASE: 'scripted-base', MODEL_MAX: 'scripted-max' },
    } as never);
  });

  test('the first turn publishes the prelude from seqStart, then the model stream, and caches the running status', async () => {
    const input = turnInput();
    const out = (await new MockActivityEnvironment().run(activities.modelTurn, input)) as ModelTurnOutput;
    const events = await publisher.readAfter(input.taskId, 0);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
    expect(events.map((e) => e.type)).toEqual(['agent_started', 'agent_response_start', ...out.content.split(/(?<= )/).map(() => 'agent_response'), 'agent_step']);
    expect(events.filter((e) => e.type === 'agent_response').map((e) => (e as { content: string }).content).join('')).toBe('one two three');
    expect(out.nextSeq).toBe(events.length + 1);
    expect((await cache.get(input.taskId))?.status).toBe('running');
  });

  test('a retried attempt (no heartbeat yet) publishes no event twice and continues the seqs', async () => {
    const input = turnInput();
    // The first attempt died right after publishing the prelude.
    await publisher.publish(input.taskId, [{ type: 'agent_started', session: input.session, task_id: input.taskId, seq: 1 }]);
    const out = (await new MockActivityEnvironment({ attempt: 2 }).run(activities.modelTurn, input)) as ModelTurnOutput;
    const events = await publisher.readAfter(input.taskId, 0);
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(['agent_started', 'agent_response_start']);
    expect(events.filter((e) => e.type === 'agent_response').map((e) => (e as { content: string }).content).join('')).toBe('one two three');
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
    expect(out.nextSeq).toBe(events.length + 1);
  });

  test('a turn in complete blocks publishes its blocks and the step in one relay write', async () => {
    const input = { ...turnInput(), streamTokens: false };
    const spy = jest.spyOn(publisher, 'publish');
    try {
      const out = (await new MockActivityEnvironment().run(activities.modelTurn, input)) as ModelTurnOutput;
      expect(spy.mock.calls.map(([, events]) => events.map((e) => e.type))).toEqual([
        ['agent_started'],
        ['agent_response_start', 'agent_response', 'agent_step'],
      ]);
      const events = await publisher.readAfter(input.taskId, 0);
      expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect((events[2] as { content: string }).content).toBe('one two three');
      expect(out.nextSeq).toBe(5);
    } finally {
      spy.mockRestore();
    }
  });

  test('a retried turn whose blocks were already published calls no model and publishes nothing twice', async () => {
    const input = { ...turnInput(), streamTokens: false };
    await new MockActivityEnvironment().run(activities.modelTurn, input);
    const before = model.received().length;
    const out = (await new MockActivityEnvironment({ attempt: 2 }).run(activities.modelTurn, input)) as ModelTurnOutput;
    expect(model.received().length).toBe(before);
    expect(out.content).toBe('one two three');
    expect(out.nextSeq).toBe(5);
    expect((await publisher.readAfter(input.taskId, 0)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  test('a last turn given the run so far ends it: completed status and result cached, agent_cost and agent_completed in the step\'s write', async () => {
    const input = { ...turnInput(), streamTokens: false, finish: { price: { input: 1000, output: 2000 }, usage: { promptTokens: 10, completionTokens: 20 }, blocks: [{ type: 'agent_started' }] } };
    const spy = jest.spyOn(publisher, 'publish');
    try {
      const out = (await new MockActivityEnvironment().run(activities.modelTurn, input)) as ModelTurnOutput;
      expect(spy.mock.calls.map(([, events]) => events.map((e) => e.type))).toEqual([
        ['agent_started'],
        ['agent_response_start', 'agent_response', 'agent_step', 'agent_cost', 'agent_completed'],
      ]);
      const cost = costOf({ promptTokens: 10 + out.usage.promptTokens, completionTokens: 20 + out.usage.completionTokens }, input.finish.price);
      expect(out.usage.promptTokens).toBeGreaterThan(0);
      expect(out.finished).toEqual({ cost, completedAt: expect.any(String) });
      expect(out.nextSeq).toBe(7);
      const events = await publisher.readAfter(input.taskId, 0);
      expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(events[4]).toMatchObject({ type: 'agent_cost', cost });
      expect(await cache.get(input.taskId)).toMatchObject({ status: 'completed', progress: 1, completed_at: out.finished!.completedAt, current_step: null });
      expect(await cache.getResult(input.taskId)).toEqual({
        task_id: input.taskId,
        session: input.session,
        status: 'completed',
        output: 'one two three',
        events: [{ type: 'agent_started' }, ...out.events, { type: 'agent_cost', cost }, { type: 'agent_completed' }],
        cost,
      });
    } finally {
      spy.mockRestore();
    }
  });

  test('a last turn keeps metadata the gateway merged into the cached status while it ran', async () => {
    const input = { ...turnInput(), finish: { usage: { promptTokens: 0, completionTokens: 0 }, blocks: [] } };
    input.view.metadata = { a: 1, b: 'old' };
    // A PATCH while the turn runs: the gateway signals the workflow and merges into the cached document.
    const patch = { b: 'new', c: true };
    const put = cache.putKeepingMetadata.bind(cache);
    const spy = jest.spyOn(cache, 'putKeepingMetadata').mockImplementationOnce(async (v) => {
      await put(v);
      await cache.update(v, (cur) => ({ ...cur, metadata: { ...cur.metadata, ...patch } }));
    });
    try {
      const out = (await new MockActivityEnvironment().run(activities.modelTurn, input)) as ModelTurnOutput;
      expect(out.finished?.cost).toBe('0.000000');
    } finally {
      spy.mockRestore();
    }
    expect(await cache.get(input.taskId)).toMatchObject({ status: 'completed', metadata: { a: 1, b: 'new', c: true } });
  });

  test('a retried last turn whose end was already published calls no model, publishes nothing twice and keeps the published cost', async () => {
    const input = { ...turnInput(), streamTokens: false, finish: { price: { input: 1000, output: 2000 }, usage: { promptTokens: 1, completionTokens: 1 }, blocks: [{ type: 'agent_started' }] } };
    const first = (await new MockActivityEnvironment().run(activities.modelTurn, input)) as ModelTurnOutput;
    const before = model.received().length;
    // The first attempt's completion was lost (its worker died): the retry finds the end on the relay.
    const again = (await new MockActivityEnvironment({ attempt: 2 }).run(activities.modelTurn, { ...input, finish: { ...input.finish, price: { input: 9, output: 9 } } })) as ModelTurnOutput;
    expect(model.received().length).toBe(before);
    expect(again.finished?.cost).toBe(first.finished?.cost);
    expect(again.nextSeq).toBe(first.nextSeq);
    expect((await publisher.readAfter(input.taskId, 0)).map((e) => e.type)).toEqual(['agent_started', 'agent_response_start', 'agent_response', 'agent_step', 'agent_cost', 'agent_completed']);
  });

  test.each([
    [400, false, 'ModelBadRequest'],
    [429, true, 'ModelUnavailable'],
  ])('a model answering HTTP %s fails the turn retryable=%s (%s), with the status in the message', async (status, retryable, type) => {
    const input = { ...turnInput(), messages: [{ role: 'user' as const, content: `[[fail status=${status} times=1 after=1]] ${runner}` }] };
    // A silent activity logger: the SDK logs every failed attempt at WARN.
    const quiet = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
    const err = await quiet.run(activities.modelTurn, input).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe(type);
    expect((err as ApplicationFailure).nonRetryable).toBe(!retryable);
    expect((err as ApplicationFailure).message).toContain(`HTTP ${status}`);
  });
});

test('a token thread that stops under a turn fails it retryably (WorkerTokenThread), not as a model error', async () => {
  const activities = createModelActivities({
    modelStream: { run: () => Promise.reject(new StreamRunnerError("the worker's token thread exited (code 1)")) },
    publisher,
    statusCache: cache,
    config: { MODEL_FLASH: 'scripted-flash', MODEL_BASE: 'scripted-base', MODEL_MAX: 'scripted-max' },
  } as never);
  const quiet = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
  const err = await quiet.run(activities.modelTurn, turnInput()).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ApplicationFailure);
  expect((err as ApplicationFailure).type).toBe('WorkerTokenThread');
  expect((err as ApplicationFailure).nonRetryable).toBe(false);
  expect((err as ApplicationFailure).message).toContain('token thread exited');
});
