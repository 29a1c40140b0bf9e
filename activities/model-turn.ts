// One model turn: the thread (read from the workflow and the session, never
// carried through the activity's input) and the tools go to the model; its
// streamed answer goes to the relay as it arrives (through deps.modelStream, on
// the worker's token thread); the activity returns the message, the tool calls
// and the usage. The workflow decides what happens next.
//
// Retried after a crash or a stalled stream, a turn yields exactly one answer:
// it publishes as its own producer (`s<step>`), the relay skips what the
// producer already published, and a new attempt that finds part of an answer
// streamed by an earlier one publishes `agent_retract` (that text is void) and
// asks the model afresh; the outcome holds the new answer alone. (Asking an
// OpenAI-compatible model to continue a trailing assistant message gets the
// whole answer again, so the partial text is never sent back.) A turn whose
// outcome was already published (its meta) returns it without calling the
// model again: its tool calls and usage are never lost to a retry.
//
// A turn larger than MODEL_ANSWER_MAX_BYTES fails as answer_too_large (not
// retried) before its closing events: Temporal would refuse it as a result.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityDeps } from './index';
import type { Mode, RewindSeen, RunMessage, TaskView, ToolCall, Usage } from '../workflows/types';
import { addUsage } from '../workflows/types';
import type { BlockEvent } from '../workflows/types';
import type { EventTag } from '../src/common/relay/events';
import { BUILTIN_TOOLS, toolSpec, type ToolSpec } from '../workflows/tool-registry';
import { stepEvent, textBlocks, toolUseEvents } from '../workflows/run-events';
import { answerTooLarge, buildMessages, chatTools, classifyModelError, outcomeBytes } from './model-support';
import { publishAs, StreamRunnerError, type TurnProgress } from './model-stream';
import { modelForMode } from '../src/common/config';
import { readThread } from './thread-reader';
import { boundedModelFailure } from './model-retry';
import { noticeRetry } from './retry-notice';
import { rewindOf } from './rewind-check';

export interface ModelTurnInput {
  taskId: string;
  account: string;
  session: string;
  step: number;
  mode: Mode;
  streamTokens: boolean;
  system?: string;
  rules?: string[];
  /** The tools offered besides the built-ins (MCP, datastore and transfer tools), as the model is told of them. */
  tools: ToolSpec[];
  /**
   * The built-in tools offered, by name, told to the model before `tools` with their specs from the
   * registry (workflows/tool-registry.ts): their descriptions and schemas stay out of every turn's
   * history. Absent in turns scheduled before: `tools` then holds every spec.
   */
  builtinTools?: string[];
  /** The handoff agent that has the conversation (absent: the main agent). */
  agent?: { name: string; description: string };
  /** How much of the session's and the run's threads this turn reads (by query). */
  thread: { sessionMessages: number; runMessages: number };
  /** The run's thread inline when small (the workflow's INLINE_THREAD_CHARS); otherwise read by query. */
  runThread?: RunMessage[];
  /** The highest seq the workflow has heard of. */
  floor: number;
  /** Events to publish before the turn's own (agent_started, a tool turn's agent_step, agent_input). */
  prelude?: BlockEvent[];
  /** Status document to cache before the turn starts (the run is now running). */
  view?: TaskView;
  /** A DAG step's run: its events carry the workflow and step ids. */
  tag?: EventTag;
  /** The workflow whose thread this is (a DAG step's); default the task's. */
  threadWorkflowId?: string;
  /** The turn's producer on the relay (a DAG step's are prefixed); default `s<step>`. */
  producer?: string;
  /** Chat Completions response_format (a DAG step with an output_schema). */
  responseFormat?: object;
  /**
   * The run's original run id and the reset run whose rewind it has taken in: a turn of a run
   * Temporal reset (a rewind) that the run has not heard of answers that instead of calling the model.
   */
  rewindCheck?: { originalRunId: string; handledRun?: string };
}

export interface ModelTurnOutput {
  content: string;
  thinking: string;
  toolCalls: ToolCall[];
  /** Tokens of every attempt of this turn (an interrupted attempt's estimated). */
  usage: Usage;
  /** The highest seq the turn heard of. */
  lastSeq: number;
  /** The relay did not take some of the turn's events: the run republishes them from its record. */
  relayLost?: true;
  /** The run was reset (rewound) since its last turn: the model was not called; the run takes this in and asks again. */
  rewound?: RewindSeen;
}

/** What a turn keeps on the relay with its last events: the outcome a retry returns. */
interface TurnMeta {
  toolCalls: ToolCall[];
  usage: Usage;
}

const HEARTBEAT_MS = 1000;
/** The events of a turn's text: what agent_retract voids. */
const TEXT_EVENTS: ReadonlySet<string> = new Set([
  'agent_thinking_start',
  'agent_thinking',
  'agent_response_start',
  'agent_response',
]);
const NO_TEXT = { content: '', thinking: '', thinkingStarted: false, responseStarted: false } as const;

type PublishTarget = Parameters<typeof publishAs>[1];
const ZERO: Usage = { promptTokens: 0, completionTokens: 0 };

// eslint-disable-next-line max-lines-per-function -- the factory's body is the model activity and its helpers, closures over deps, each short
export function createModelActivities(deps: ActivityDeps) {
  /**
   * Folds what earlier attempts published into the progress; returns the turn's outcome when it
   * was complete. Text since the last agent_retract is the answer so far; `voidFrom` is its first seq.
   */
  async function recover(
    input: ModelTurnInput,
    producer: string,
    p: TurnProgress,
  ): Promise<{ meta?: TurnMeta; voidFrom?: number }> {
    const state = await deps.publisher.producerState(input.taskId, producer);
    p.published = Math.max(p.published, state.count);
    let voidFrom: number | undefined;
    for (const ev of state.events) {
      p.lastSeq = Math.max(p.lastSeq, ev.seq);
      if (ev.type === 'agent_retract') {
        Object.assign(p, NO_TEXT);
        voidFrom = undefined;
      }
      if (!TEXT_EVENTS.has(ev.type)) continue;
      voidFrom ??= ev.seq;
      if (ev.type === 'agent_thinking_start') p.thinkingStarted = true;
      else if (ev.type === 'agent_thinking') p.thinking = input.streamTokens ? p.thinking + ev.content : ev.content;
      else if (ev.type === 'agent_response_start') p.responseStarted = true;
      else if (ev.type === 'agent_response') p.content = input.streamTokens ? p.content + ev.content : ev.content;
    }
    return { meta: state.meta as TurnMeta | undefined, voidFrom };
  }

  /** An earlier attempt's partial answer is void: said on the stream, then forgotten, so the model answers afresh. */
  async function retract(req: PublishTarget, p: TurnProgress, voidFrom: number, attempt: number): Promise<void> {
    await publishAs(deps.publisher, req, p, [{ type: 'agent_retract', from_seq: voidFrom, attempt }]);
    Object.assign(p, NO_TEXT);
  }

  function freshProgress(input: ModelTurnInput, details: TurnProgress | undefined): TurnProgress {
    // An earlier attempt that streamed and was cut short was billed: count it, estimated.
    const spent = details?.chunks
      ? addUsage(details.spent, { promptTokens: details.promptTokens, completionTokens: details.chunks })
      : (details?.spent ?? ZERO);
    return {
      content: '',
      thinking: '',
      published: 0,
      lastSeq: input.floor,
      thinkingStarted: false,
      responseStarted: false,
      chunks: 0,
      promptTokens: 0,
      spent,
    };
  }

  /** The outcome, if the workflow can take it (see answerTooLarge). */
  function checked(out: ModelTurnOutput): ModelTurnOutput {
    const limit = deps.config.MODEL_ANSWER_MAX_BYTES;
    const bytes = outcomeBytes(out);
    if (bytes > limit) throw answerTooLarge(bytes, limit);
    return out;
  }

  /** The provider's failure, bounded in time (model-retry.ts); a retry is announced on the stream first. */
  async function retryOrGiveUp(
    ctx: Context,
    input: ModelTurnInput,
    producer: string,
    p: TurnProgress,
    failure: ApplicationFailure,
  ): Promise<ApplicationFailure> {
    const elapsed = Date.now() - ctx.info.scheduledTimestampMs;
    const bounded = boundedModelFailure(failure, ctx.info.attempt, elapsed, deps.config.MODEL_UNAVAILABLE_AFTER_MS);
    if (bounded.retryInMs !== undefined) {
      const where = { taskId: input.taskId, session: input.session, producer, floor: p.lastSeq, tag: input.tag };
      await noticeRetry(deps, ctx, where, { what: 'model', retryInMs: bounded.retryInMs }, bounded.failure);
    }
    return bounded.failure;
  }

  /** The events the run put before this turn's answer, published unless an earlier attempt did. */
  async function publishPrelude(input: ModelTurnInput, req: PublishTarget, p: TurnProgress): Promise<void> {
    const prelude = input.prelude ?? [];
    if (prelude.length && p.published < prelude.length) {
      p.published = 0; // the relay skips those already in
      await publishAs(deps.publisher, req, p, prelude);
    }
    p.published = Math.max(p.published, prelude.length);
  }

  /** What the token thread streams: the mode's model, the thread as messages, the tools offered. */
  function streamRequest(
    input: ModelTurnInput,
    req: PublishTarget,
    messages: ReturnType<typeof buildMessages>,
    showThinking: boolean,
  ) {
    return {
      ...req,
      model: modelForMode(deps.config, input.mode),
      messages,
      tools: chatTools(offeredSpecs(input)),
      streamTokens: input.streamTokens,
      showThinking,
      ...(input.responseFormat && { responseFormat: input.responseFormat }),
    };
  }

  return {
    async modelTurn(input: ModelTurnInput): Promise<ModelTurnOutput> {
      const ctx = Context.current();
      const rewound = await rewindOf(deps.temporal, input.rewindCheck);
      if (rewound) return { content: '', thinking: '', toolCalls: [], usage: ZERO, lastSeq: input.floor, rewound };
      const producer = input.producer ?? `s${input.step}`;
      const req = { taskId: input.taskId, session: input.session, producer, ...(input.tag && { tag: input.tag }) };
      const p = freshProgress(input, ctx.info.heartbeatDetails as TurnProgress | undefined);
      const earlier = ctx.info.attempt > 1 ? await recover(input, producer, p) : {};
      const done = earlier.meta;
      if (done)
        return checked({
          content: p.content,
          thinking: p.thinking,
          toolCalls: done.toolCalls,
          usage: done.usage,
          lastSeq: p.lastSeq,
        });
      if (earlier.voidFrom !== undefined) await retract(req, p, earlier.voidFrom, ctx.info.attempt);
      if (input.view) await deps.statusCache.putKeepingMetadata(input.view);
      await publishPrelude(input, req, p);

      const showThinking = input.mode === 'flash';
      // Heartbeats carry the progress so far; once a second is plenty (the SDK throttles anyway).
      ctx.heartbeat(beatOf(p));
      const beat = setInterval(() => ctx.heartbeat(beatOf(p)), HEARTBEAT_MS);
      let out;
      try {
        const { session, run } = await readThread(deps.temporal, input);
        const messages = buildMessages({ system: input.system, rules: input.rules, agent: input.agent, session, run });
        p.promptTokens = estimateTokens(messages);
        const stream = streamRequest(input, req, messages, showThinking);
        out = await deps.modelStream.run(stream, p, {
          signal: ctx.cancellationSignal,
          onProgress: (q) => Object.assign(p, q),
        });
        Object.assign(p, out.progress);
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('model turn cancelled');
        if (err instanceof ApplicationFailure) throw err;
        if (err instanceof StreamRunnerError) throw ApplicationFailure.retryable(err.message, 'WorkerTokenThread');
        throw await retryOrGiveUp(ctx, input, producer, p, classifyModelError(err));
      } finally {
        clearInterval(beat);
      }
      if (ctx.cancellationSignal.aborted) throw new CancelledFailure('model turn cancelled');
      const usage = addUsage(p.spent, out.usage);
      const toolCalls = out.toolCalls.map((c, i) => ({ ...c, id: c.id || `call_${input.step}_${i}` }));
      const outcome = checked({ content: p.content, thinking: p.thinking, toolCalls, usage, lastSeq: p.lastSeq });
      // The complete blocks (unless streamed), tool uses and the step, with the outcome, in one relay write:
      // a retry finds all of it or none.
      const closing: BlockEvent[] = [
        ...(input.streamTokens ? [] : textBlocks(p.content, p.thinking, showThinking)),
        ...toolUseEvents(toolCalls),
        ...(toolCalls.length ? [] : [stepEvent(input.step, usage)]),
      ];
      await publishAs(deps.publisher, req, p, closing, { toolCalls, usage } satisfies TurnMeta);
      return { ...outcome, lastSeq: p.lastSeq, ...(p.lost && { relayLost: true as const }) };
    },
  };
}

/**
 * The progress as heartbeat details: without the text, which a retry rebuilds
 * from the relay instead. Temporal fails an activity whose heartbeat passes its
 * 2 MiB limit, so a long answer would fail there before reaching the size check,
 * and the text would ride along to the server every second.
 */
function beatOf(p: TurnProgress): TurnProgress {
  return { ...p, content: '', thinking: '' };
}

/** Prompt tokens, estimated (about 4 characters a token): what an attempt cut short before the usage came is charged. */
function estimateTokens(messages: object[]): number {
  return Math.ceil(JSON.stringify(messages).length / 4);
}

/** What the model is told of the offered tools: the built-ins' specs from the registry, then the others'. */
export function offeredSpecs(input: Pick<ModelTurnInput, 'tools' | 'builtinTools'>): ToolSpec[] {
  const builtins = (input.builtinTools ?? []).flatMap((n) => (BUILTIN_TOOLS[n] ? [toolSpec(BUILTIN_TOOLS[n])] : []));
  return [...builtins, ...input.tools];
}
