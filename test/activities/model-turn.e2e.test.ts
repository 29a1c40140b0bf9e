// The model-turn activity against a real Redis and the scripted model, with
// the stream run in process and on the worker's token thread: the first turn
// publishes the run's prelude (agent_started) and caches its status; it reads
// its thread by query (answered here by a stand-in for the workflow); a turn
// with tool calls returns them; a retried attempt publishes nothing twice,
// leaves no seq gap and keeps the tool calls and usage; model errors keep their
// classification across the thread; heartbeats carry no text; a turn too large
// for a Temporal payload fails once, typed answer_too_large.
import OpenAI from 'openai';
import pino from 'pino';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import { createModelActivities, ModelTurnOutput } from '../../activities/model-turn';
import {
  inProcessModelStream,
  ModelStreamRunner,
  StreamRunnerError,
  TurnProgress,
} from '../../activities/model-stream';
import { ThreadedModelStream } from '../../src/worker/model-stream/thread-runner';
import { EventPublisher } from '../../src/common/relay/publisher';
import { StatusCache } from '../../src/common/relay/status-cache';
import { startScriptedModel, ScriptedModel } from '../../src/dev/scripted-model';
import { fillerWords } from '../../src/dev/scripted-model/text';
import { initialView } from '../../workflows/types';
import type { RunMessage, TaskInput } from '../../workflows/types';
import { BUILTIN_TOOLS, toolSpec } from '../../workflows/tool-registry';
import { PrivateRedis, startPrivateRedis } from '../common/relay/private-redis';

const logger = pino({ level: 'silent' });
/** The stream's idle limit here: short, so a stalled provider is seen quickly. */
const IDLE_MS = 1500;
let server: PrivateRedis;
let model: ScriptedModel;
let publisher: EventPublisher;
let cache: StatusCache;
let threaded: ThreadedModelStream;
const runners: Record<string, () => ModelStreamRunner> = {
  'in process': () =>
    inProcessModelStream({
      openai: new OpenAI({ apiKey: 'test', baseURL: model.url, maxRetries: 0 }),
      publisher,
      idleMs: IDLE_MS,
    }),
  'on the token thread': () => threaded,
};

beforeAll(async () => {
  server = await startPrivateRedis();
  model = await startScriptedModel({ port: 0 });
  publisher = new EventPublisher({ redis: server.redis, logger, ttlMs: 60_000 });
  cache = new StatusCache(server.redis, logger, 60_000);
  threaded = new ThreadedModelStream({
    config: {
      openai: { apiKey: 'test', baseURL: model.url, timeoutMs: 30_000, idleMs: IDLE_MS },
      redisUrl: server.url,
      ttlMs: 60_000,
      logLevel: 'silent',
      logJson: true,
    },
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
/** The runs' threads, as their workflows would answer the thread query. */
const threads: Record<string, RunMessage[]> = {};
const temporal = {
  workflow: {
    getHandle: (id: string) => ({
      query: async (_q: unknown, from: number) => ({
        messages: (threads[id] ?? []).slice(from),
        total: (threads[id] ?? []).length,
      }),
    }),
  },
};

function turnInput(message = '[[say text="one two three"]] hi') {
  const taskId = `task_turn${++n}`;
  threads[taskId] = [{ role: 'user', content: message }];
  const task = {
    taskId,
    account: 'acct',
    session: 'sess_1',
    createdAt: new Date().toISOString(),
    request: { metadata: {} },
  } as TaskInput;
  const view = { ...initialView(task), status: 'running' as const, started_at: new Date().toISOString() };
  return {
    taskId,
    account: 'acct',
    session: 'sess_1',
    step: 1,
    mode: 'base' as const,
    streamTokens: true,
    tools: [toolSpec(BUILTIN_TOOLS.calculate)],
    thread: { sessionMessages: 0, runMessages: 1 },
    floor: 0,
    prelude: [{ type: 'agent_started' as const }],
    view,
  };
}

const deps = (modelStream: ModelStreamRunner, answerMaxBytes = 512 * 1024) =>
  ({
    modelStream,
    publisher,
    statusCache: cache,
    temporal,
    logger,
    config: {
      MODEL_FLASH: 'scripted-flash',
      MODEL_BASE: 'scripted-base',
      MODEL_MAX: 'scripted-max',
      MODEL_ANSWER_MAX_BYTES: answerMaxBytes,
      MODEL_UNAVAILABLE_AFTER_MS: 120_000,
    },
  }) as never;
const contentOf = (events: { type: string }[]) =>
  events
    .filter((e) => e.type === 'agent_response')
    .map((e) => (e as unknown as { content: string }).content)
    .join('');

describe.each(Object.keys(runners))('the stream run %s', (runner) => {
  let activities: ReturnType<typeof createModelActivities>;
  beforeAll(() => {
    activities = createModelActivities(deps(runners[runner]()));
  });

  test('the first turn publishes the prelude, then the model stream and the step, and caches the running status', async () => {
    const input = turnInput();
    const out = (await new MockActivityEnvironment().run(activities.modelTurn, input)) as ModelTurnOutput;
    const events = await publisher.readAfter(input.taskId, 0);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
    expect(events.map((e) => e.type)).toEqual([
      'agent_started',
      'agent_response_start',
      ...out.content.split(/(?<= )/).map(() => 'agent_response'),
      'agent_step',
    ]);
    expect(contentOf(events)).toBe('one two three');
    expect(out.lastSeq).toBe(events.length);
    expect(out.toolCalls).toEqual([]);
    expect(out.usage.completionTokens).toBeGreaterThan(0);
    expect(events[events.length - 1]).toMatchObject({
      type: 'agent_step',
      step: '1',
      usage: { prompt_tokens: out.usage.promptTokens, completion_tokens: out.usage.completionTokens },
    });
    expect((await cache.get(input.taskId))?.status).toBe('running');
  });

  test('a turn that calls tools returns the calls and publishes their use, not yet a step', async () => {
    const input = {
      ...turnInput(
        '[[tool name=calculate args={"expression":"6*7"}]] [[tool name=calculate args={"expression":"1+1"}]]',
      ),
      streamTokens: false,
    };
    const out = (await new MockActivityEnvironment().run(activities.modelTurn, input)) as ModelTurnOutput;
    expect(out.toolCalls.map((c) => [c.name, JSON.parse(c.arguments).expression])).toEqual([
      ['calculate', '6*7'],
      ['calculate', '1+1'],
    ]);
    const events = await publisher.readAfter(input.taskId, 0);
    expect(events.map((e) => e.type)).toEqual([
      'agent_started',
      'agent_tool_use_start',
      'agent_tool_use',
      'agent_tool_use_start',
      'agent_tool_use',
    ]);
    expect(JSON.parse((events[2] as { content: string }).content)).toEqual({
      tool: 'calculate',
      input: { expression: '6*7' },
    });
    expect(events[2]).toMatchObject({ tool_call_id: out.toolCalls[0].id });
    // A retry after the turn finished returns the same outcome without calling the model again.
    const before = model.received().length;
    const again = (await new MockActivityEnvironment({ attempt: 2 }).run(
      activities.modelTurn,
      input,
    )) as ModelTurnOutput;
    expect(model.received().length).toBe(before);
    expect(again.toolCalls).toEqual(out.toolCalls);
    expect(again.usage).toEqual(out.usage);
    expect((await publisher.readAfter(input.taskId, 0)).length).toBe(events.length);
  });

  test('a retried attempt voids the text an earlier one streamed (agent_retract) and answers afresh: one answer, no seq gap', async () => {
    const input = turnInput();
    // The first attempt died after the prelude and two tokens.
    await publisher.publish(input.taskId, input.session, 's1', 0, [
      { type: 'agent_started' },
      { type: 'agent_response_start' },
      { type: 'agent_response', content: 'one ' },
    ]);
    const before = model.received().length;
    const out = (await new MockActivityEnvironment({ attempt: 2 }).run(activities.modelTurn, input)) as ModelTurnOutput;
    const events = await publisher.readAfter(input.taskId, 0);
    expect(events.slice(0, 4).map((e) => e.type)).toEqual([
      'agent_started',
      'agent_response_start',
      'agent_response',
      'agent_retract',
    ]);
    expect(events[3]).toMatchObject({ from_seq: 2, attempt: 2 });
    // The model was asked afresh, without the partial answer.
    expect(model.received()[before].body.messages.at(-1)?.role).toBe('user');
    expect(out.content).toBe('one two three');
    expect(contentOf(events.slice(4))).toBe('one two three');
    expect(events.slice(4).filter((e) => e.type === 'agent_response_start')).toHaveLength(1);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
    // A third attempt after the second died once more voids only what the second streamed.
    const third = { ...input, taskId: `${input.taskId}b` };
    await publisher.publish(third.taskId, third.session, 's1', 0, [
      { type: 'agent_started' },
      { type: 'agent_response_start' },
      { type: 'agent_response', content: 'x' },
      { type: 'agent_retract', from_seq: 2, attempt: 2 },
      { type: 'agent_response_start' },
      { type: 'agent_response', content: 'y' },
    ]);
    threads[third.taskId] = threads[input.taskId];
    const again = (await new MockActivityEnvironment({ attempt: 3 }).run(
      activities.modelTurn,
      third,
    )) as ModelTurnOutput;
    const later = await publisher.readAfter(third.taskId, 6);
    expect(later[0]).toMatchObject({ type: 'agent_retract', from_seq: 5, attempt: 3 });
    expect(again.content).toBe('one two three');
  });

  test('a stream that stalls after it began fails the attempt as model_unavailable, retried (agent_retry); the retry voids its text and answers', async () => {
    const input = turnInput(`[[hang after=2 times=1 key=stall-${runner}]] [[say text="one two three"]] hi`);
    const quiet = new MockActivityEnvironment(
      { scheduledTimestampMs: Date.now() },
      { logger: new DefaultLogger('ERROR') },
    );
    const err = (await quiet.run(activities.modelTurn, input).catch((e: unknown) => e)) as ApplicationFailure;
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect([err.type, err.nonRetryable]).toEqual(['model_unavailable', false]);
    expect(err.message).toContain('MODEL_STREAM_IDLE_MS');
    const first = await publisher.readAfter(input.taskId, 0);
    expect(first.map((e) => e.type)).toEqual([
      'agent_started',
      'agent_response_start',
      'agent_response',
      'agent_response',
      'agent_retry',
    ]);
    const out = (await new MockActivityEnvironment({ attempt: 2 }).run(activities.modelTurn, input)) as ModelTurnOutput;
    const events = await publisher.readAfter(input.taskId, first.length);
    expect(events[0]).toMatchObject({ type: 'agent_retract', from_seq: 2, attempt: 2 });
    expect(out.content).toBe(contentOf(events));
  });

  test('usage counts an interrupted attempt (from its last heartbeat) as well as the one that finished', async () => {
    const input = { ...turnInput(), streamTokens: false };
    const first = (await new MockActivityEnvironment().run(activities.modelTurn, turnInput())) as ModelTurnOutput;
    const details = {
      content: 'one',
      thinking: '',
      published: 1,
      lastSeq: 1,
      thinkingStarted: false,
      responseStarted: true,
      chunks: 2,
      promptTokens: 40,
      spent: { promptTokens: 0, completionTokens: 0 },
    };
    const out = (await new MockActivityEnvironment({ attempt: 2, heartbeatDetails: details }).run(
      activities.modelTurn,
      input,
    )) as ModelTurnOutput;
    expect(out.usage).toEqual({
      promptTokens: first.usage.promptTokens + 40,
      completionTokens: first.usage.completionTokens + 2,
    });
  });

  test('heartbeats carry the progress without its text (a retry rebuilds that from the relay)', async () => {
    const env = new MockActivityEnvironment();
    const beats: TurnProgress[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d as TurnProgress));
    // 150 tokens 10 ms apart: the once-a-second heartbeat fires mid-stream.
    const out = (await env.run(activities.modelTurn, turnInput('[[slow delay=10 tokens=150]] go'))) as ModelTurnOutput;
    expect(out.content).toBe(fillerWords(150));
    expect(beats.filter((b) => b.chunks > 0).length).toBeGreaterThan(0);
    for (const b of beats) expect([b.content, b.thinking]).toEqual(['', '']);
  });

  test('a turn over MODEL_ANSWER_MAX_BYTES fails once (answer_too_large, not retried), naming its size and the limit but not the text, before its closing events', async () => {
    const small = createModelActivities(deps(runners[runner](), 4096));
    // About 10.6 KB of filler prose, over the 4 KiB limit.
    const input = { ...turnInput('[[long words=2000]] a long one'), streamTokens: false };
    const quiet = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
    const err = await quiet.run(small.modelTurn, input).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    const f = err as ApplicationFailure;
    expect([f.type, f.nonRetryable]).toEqual(['answer_too_large', true]);
    const bytes = Number(/is (\d+) bytes/.exec(f.message)?.[1]);
    expect(bytes).toBeGreaterThan(fillerWords(2000).length);
    expect(f.message).toContain('limit of 4096 bytes');
    expect(f.message).not.toContain(fillerWords(3).slice(0, -1));
    // The run's prelude went out; the answer's block and the step did not (the run's end reports the error).
    expect((await publisher.readAfter(input.taskId, 0)).map((e) => e.type)).toEqual(['agent_started']);
    // Under the limit, the same activity answers.
    const ok = (await new MockActivityEnvironment().run(
      small.modelTurn,
      turnInput('[[long words=200]] a short one'),
    )) as ModelTurnOutput;
    expect(ok.content).toBe(fillerWords(200));
  });

  test.each([
    [400, false, 'ModelBadRequest'],
    [429, true, 'model_unavailable'],
  ])(
    'a model answering HTTP %s fails the turn retryable=%s (%s), with the status in the message',
    async (status, retryable, type) => {
      const input = turnInput(`[[fail status=${status} times=1 after=1]] ${runner}`);
      // A silent activity logger: the SDK logs every failed attempt at WARN. The first attempt, scheduled now.
      const quiet = new MockActivityEnvironment(
        { scheduledTimestampMs: Date.now() },
        { logger: new DefaultLogger('ERROR') },
      );
      const err = await quiet.run(activities.modelTurn, input).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect((err as ApplicationFailure).type).toBe(type);
      expect((err as ApplicationFailure).nonRetryable).toBe(!retryable);
      expect((err as ApplicationFailure).message).toContain(`HTTP ${status}`);
      // A retry is announced on the stream, with the wait the activity asked Temporal for; a final failure is not.
      const retries = (await publisher.readAfter(input.taskId, 0)).filter((e) => e.type === 'agent_retry');
      if (retryable) {
        expect(retries).toEqual([
          expect.objectContaining({
            what: 'model',
            attempt: 1,
            retry_in_ms: 1000,
            error: { type, message: expect.stringContaining(`HTTP ${status}`) },
          }),
        ]);
        expect((err as ApplicationFailure).nextRetryDelay).toBe(1000);
      } else {
        expect(retries).toEqual([]);
      }
    },
  );

  test('a provider still down past MODEL_UNAVAILABLE_AFTER_MS ends the turn for good: model_unavailable, no retry announced', async () => {
    const input = turnInput(`[[fail status=503 times=1 after=1]] ${runner}`);
    // The turn's first attempt was scheduled 121 s ago; this is its eighth.
    const scheduled = Date.now() - 121_000;
    const late = new MockActivityEnvironment(
      { attempt: 8, scheduledTimestampMs: scheduled },
      { logger: new DefaultLogger('ERROR') },
    );
    const err = (await late.run(activities.modelTurn, input).catch((e: unknown) => e)) as ApplicationFailure;
    const took = Date.now() - scheduled;
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err.type).toBe('model_unavailable');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toMatch(/stayed unavailable for \d+ s over 8 attempts .*HTTP 503/);
    // The seconds since the first attempt, as the activity read them: at least 121, and no more
    // than had passed when it answered (a loaded machine's model call can take a second or more).
    const said = Number(/for (\d+) s/.exec(err.message)![1]);
    expect(said).toBeGreaterThanOrEqual(121);
    expect(said).toBeLessThanOrEqual(Math.ceil(took / 1000));
    expect((await publisher.readAfter(input.taskId, 0)).filter((e) => e.type === 'agent_retry')).toEqual([]);
  });
});

test('a token thread that stops under a turn fails it retryably (WorkerTokenThread), not as a model error', async () => {
  const activities = createModelActivities(
    deps({ run: () => Promise.reject(new StreamRunnerError("the worker's token thread exited (code 1)")) }),
  );
  const quiet = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
  const err = await quiet.run(activities.modelTurn, turnInput()).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ApplicationFailure);
  expect((err as ApplicationFailure).type).toBe('WorkerTokenThread');
  expect((err as ApplicationFailure).nonRetryable).toBe(false);
  expect((err as ApplicationFailure).message).toContain('token thread exited');
});
