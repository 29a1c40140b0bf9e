// What a run costs in Temporal history, and the model answer's size limit.
//
// A 17 KB answer once cost about 92 KB of history (issue 20), and a 25 KB one
// 160 KB four copies later (issue 35). Here a run of one ~25 KB answer, in JSON
// and in SSE token mode, prints its history (bytes, events, ratio to the
// answer) and its session's, and the bounds catch a regression to copying the
// answer more often: twice in the run (the model activity's result and the
// workflow's result), once in the session, and the run's history within 64 KB. An answer over
// MODEL_ANSWER_MAX_BYTES (set low here) fails the run at once with
// answer_too_large: in the JSON answer, the stream and /result, one attempt.
import Redis from 'ioredis';
import { temporal } from '@temporalio/proto';
import { keys } from '../../src/common/relay/keys';
import { KEY_A, postStream, readSse, useStack, waitUntil, withTemporal } from './helpers';
import { fillerWords } from '../../src/dev/scripted-model/text';

jest.setTimeout(180_000);
/** Low enough for a cheap over-the-limit answer, above the 25 KB one. */
const ANSWER_MAX_BYTES = 64 * 1024;
const ctx = useStack({ MODEL_ANSWER_MAX_BYTES: String(ANSWER_MAX_BYTES) });

/** Filler words of the scripted model's `[[long]]` directive: 4,400 make about 25 KB. */
const WORDS_25KB = 4400;
/** What a 25 KB answer's run may cost in history at most (issue 35). */
const RUN_MAX_BYTES = 64 * 1024;

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

interface HistoryFigures {
  bytes: number;
  events: number;
  /** The history's events, as the server stores them (payloads encrypted). */
  history: HistoryEvent[];
}

/** describe's history size and length of the workflow's latest run, and its events. */
async function historyOf(workflowId: string): Promise<HistoryFigures> {
  return withTemporal(ctx.stack(), async (client) => {
    const d = await client.workflow.getHandle(workflowId).describe();
    const history: HistoryEvent[] = [];
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await client.workflowService.getWorkflowExecutionHistory({
        namespace: 'default',
        execution: { workflowId },
        nextPageToken,
      });
      history.push(...(page.history?.events ?? []));
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken);
    return { bytes: d.historySize ?? NaN, events: d.historyLength, history };
  });
}

const typeName = (e: HistoryEvent) => String(EventType[e.eventType ?? 0]).replace(/^EVENT_TYPE_/, '');
const encodedSize = (e: HistoryEvent) => temporal.api.history.v1.HistoryEvent.encode(e).finish().length;

/** The events big enough to carry the answer, with how many answers' worth each holds (rounded). */
function carriers(history: HistoryEvent[], answerBytes: number): string[] {
  return history
    .filter((e) => encodedSize(e) > answerBytes / 2)
    .map((e) => `${typeName(e)} x${Math.round(encodedSize(e) / answerBytes)}`);
}

/**
 * A session with its workflow from the start (POST /sessions): the run hands its turn back to it
 * (a run that names no session opens none, and hands nothing over).
 */
async function openedSession(): Promise<string> {
  const created = await ctx.call('POST', '/sessions', { body: {} });
  expect(created.status).toBe(201);
  return created.json.session;
}

/** The session's history once the run handed its turn back (its thread holds the answer). */
async function sessionHistory(session: string): Promise<HistoryFigures> {
  await waitUntil(
    "the session's thread to hold the exchange",
    async () => (await ctx.call('GET', `/sessions/${session}/messages`)).json?.messages?.length === 2,
  );
  // The turn's hand-over signal is in; let the session's workflow task that takes it complete.
  let figures: HistoryFigures | undefined;
  await waitUntil("the session's workflow task that takes the hand-over to complete", async () => {
    figures = await historyOf(`session:alice:${session}`);
    const types = figures.history.map(typeName);
    return types.lastIndexOf('WORKFLOW_TASK_COMPLETED') > types.lastIndexOf('WORKFLOW_TASK_SCHEDULED');
  });
  return figures!;
}

function report(mode: string, answerBytes: number, run: HistoryFigures, session: HistoryFigures): void {
  // HISTORY_EVENTS=1 also prints each event's encoded size, to see where a change went.
  if (process.env.HISTORY_EVENTS) console.log(run.history.map((e) => `${typeName(e)} ${encodedSize(e)}`).join('\n'));
  const ratio = (run.bytes / answerBytes).toFixed(2);
  console.log(
    `history of a ${answerBytes}-byte answer (${mode}, ${ctx.stack().engine}): run ${run.bytes} bytes, ${run.events} events, ${ratio}x the answer ` +
      `[${carriers(run.history, answerBytes).join(', ')}]; session ${session.bytes} bytes, ${session.events} events ` +
      `[${carriers(session.history, answerBytes).join(', ')}]`,
  );
}

/**
 * The bounds. The answer is in the run's history twice, each encrypted (AES-GCM: 28 bytes and a
 * small envelope per payload, in protobuf): the model activity's result and the workflow's result
 * (`output`; the result's answer block refers to it, `content_ref`, and the gateway puts the text
 * back). The turn's hand-over signal leaves a large exchange out; the session reads it from the
 * run (an activity: its one copy is in the session's history). The rest is about 7 KB of fixed
 * cost (the start's input, modelTurn's input with the tools' schemas, a score of small events).
 * 2.5x + 8 KB lets the fixed cost grow a little and fails at a third copy.
 */
const RUN_BOUND = (answer: number) => 2.5 * answer + 8 * 1024;
/** The session's history takes the answer once (its readExchange activity's result); its thread is workflow state. */
const SESSION_BOUND = (answer: number) => 1.5 * answer + 8 * 1024;
const EXPECTED_CARRIERS = ['ACTIVITY_TASK_COMPLETED x1', 'WORKFLOW_EXECUTION_COMPLETED x1'];

function expectBounded(answerBytes: number, run: HistoryFigures, session: HistoryFigures): void {
  expect(run.bytes).toBeLessThan(RUN_BOUND(answerBytes));
  expect(run.bytes).toBeLessThanOrEqual(RUN_MAX_BYTES);
  expect(carriers(run.history, answerBytes)).toEqual(EXPECTED_CARRIERS);
  // One model turn: admission (its session's grant), one modelTurn, the hand-over and publishEnd, the end.
  expect(run.events).toBeLessThanOrEqual(30);
  expect(session.bytes).toBeLessThan(SESSION_BOUND(answerBytes));
  expect(carriers(session.history, answerBytes)).toEqual(['ACTIVITY_TASK_COMPLETED x1']);
}

test('a 25 KB answer in JSON mode: the run’s history holds it twice (within 64 KB), its session’s once; the API’s result has it whole', async () => {
  const r = await ctx.call('POST', `/?session=${await openedSession()}`, {
    body: { message: `[[long words=${WORDS_25KB}]] write at length` },
  });
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('completed');
  expect(r.json.output).toBe(fillerWords(WORDS_25KB));
  const answerBytes = Buffer.byteLength(r.json.output);
  expect(answerBytes).toBeGreaterThan(25_000);
  expect(answerBytes).toBeLessThan(26_000);
  // The answer's block is whole in the API's answer and in the result read from Temporal.
  const answerBlock = (events: { type: string; content?: string }[]) =>
    events.filter((e) => e.type === 'agent_response').at(-1);
  expect(answerBlock(r.json.events)).toEqual({ type: 'agent_response', content: r.json.output });
  // Read again from Temporal (the cached result dropped): the stored reference is expanded.
  const redis = new Redis(ctx.stack().redisUrl);
  await redis.del(keys.result(r.json.task_id));
  redis.disconnect();
  const fromTemporal = await ctx.call('GET', `/tasks/${r.json.task_id}/result`);
  expect(answerBlock(fromTemporal.json.events)).toEqual({ type: 'agent_response', content: r.json.output });
  expect(fromTemporal.json.events).toEqual(r.json.events);
  const run = await historyOf(r.json.task_id);
  const session = await sessionHistory(r.json.session);
  report('JSON', answerBytes, run, session);
  expectBounded(answerBytes, run, session);
});

test('a 25 KB answer streamed token by token (SSE): the tokens add nothing to history', async () => {
  const events = await readSse(
    await postStream(
      ctx.stack(),
      { message: `[[long words=${WORDS_25KB}]] write at length`, streaming_tokens: true },
      `/?session=${await openedSession()}`,
    ),
  );
  expect(events[events.length - 1].data.type).toBe('agent_completed');
  const tokens = events.filter((e) => e.data.type === 'agent_response');
  expect(tokens.length).toBe(WORDS_25KB);
  const answer = tokens.map((e) => e.data.content).join('');
  expect(answer).toBe(fillerWords(WORDS_25KB));
  const answerBytes = Buffer.byteLength(answer);
  const { task_id: taskId, session: sessionId } = events[0].data;
  // The stream ends with the run's last event, a moment before the run closes with its result.
  const result = await ctx.call('GET', `/tasks/${taskId}/result?wait=30`);
  expect(result.json).toMatchObject({ status: 'completed', output: answer });
  const run = await historyOf(taskId);
  const session = await sessionHistory(sessionId);
  report('SSE tokens', answerBytes, run, session);
  expectBounded(answerBytes, run, session);
});

test('an answer over MODEL_ANSWER_MAX_BYTES fails the run at once with answer_too_large, in the answer, the stream and the result', async () => {
  // About 86 KB of filler, over the 64 KiB limit of this stack.
  const words = 15_000;
  const r = await ctx.call('POST', '/', { body: { message: `[[long words=${words}]] too much` } });
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('failed');
  expect(r.json.error.type).toBe('answer_too_large');
  expect(r.json.error.message).toContain(`limit of ${ANSWER_MAX_BYTES} bytes`);
  expect(Number(/is (\d+) bytes/.exec(r.json.error.message)?.[1])).toBeGreaterThan(fillerWords(words).length);
  expect(r.json.error.message).not.toContain(fillerWords(3).slice(0, -1));
  const taskId = r.json.task_id;

  const result = await ctx.call('GET', `/tasks/${taskId}/result`);
  expect(result.json).toMatchObject({ status: 'failed', error: { type: 'answer_too_large' } });
  const res = await fetch(`${ctx.stack().gatewayUrl}/tasks/${taskId}/events`, {
    headers: { authorization: `Bearer ${KEY_A}`, accept: 'text/event-stream' },
  });
  const stream = (await readSse(res)).map((e) => e.data);
  // The answer's block never went out: the turn failed before its closing events.
  expect(stream.map((e) => e.type)).toEqual(['agent_started', 'agent_error']);
  expect(stream[1].error).toEqual(r.json.error);

  // Not retried: one modelTurn scheduled, its one attempt failed.
  const { history } = await historyOf(taskId);
  const scheduled = history.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn');
  expect(scheduled).toHaveLength(1);
  const started = history.filter(
    (e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === scheduled[0].eventId?.toString(),
  );
  expect(started.map((e) => e.activityTaskStartedEventAttributes?.attempt)).toEqual([1]);
  expect(
    history.filter(
      (e) => e.activityTaskFailedEventAttributes?.scheduledEventId?.toString() === scheduled[0].eventId?.toString(),
    ),
  ).toHaveLength(1);
});
