// One model turn: a streamed Chat Completion whose pieces go to the relay as
// they arrive (through deps.modelStream, on the worker's token thread), with
// the activity heartbeating its progress.
//
// Retried after a crash, a turn never shows a client the same text twice: its
// events carry seqs counted from the workflow's seqStart, the relay refuses a
// seq it already has, and the new attempt first rebuilds what was already
// published (from the relay, else from its last heartbeat) and asks the model
// to continue from that text instead of starting over.
//
// A turn given `finish` that ends without tool calls is the run's last: it
// also ends the run on the relay (the completed status, the result, then
// agent_cost and agent_completed, in the same write as its step), so the
// workflow needs no publish activity, and no workflow task for one, after it.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityDeps } from './index';
import type { BlockEvent, Mode, Price, TaskView, ThreadMessage, Usage } from '../workflows/types';
import { completedBody, costOf } from '../workflows/types';
import type { AgentEventBody } from '../src/relay/events';
import { stampEvents } from '../src/relay/events';
import { buildMessages, classifyModelError, ToolCall } from './model-support';
import { StreamRunnerError, type TurnProgress } from './model-stream';
import { modelForMode } from '../src/config';

export interface ModelTurnInput {
  taskId: string;
  session: string;
  seqStart: number;
  step: number;
  mode: Mode;
  streamTokens: boolean;
  system?: string;
  rules?: string[];
  messages: ThreadMessage[];
  /**
   * Workflow events to publish first, from seqStart (agent_started on a run's
   * first turn): one activity fewer per run than a separate publish.
   */
  prelude?: BlockEvent[];
  /** Status document to cache before the turn starts (the run is now running). */
  view?: TaskView;
  /** The run so far, for a turn that may end it (see the file's header); `view` is then the base of the completed status. Absent: the workflow publishes the end itself. */
  finish?: RunSoFar;
}

export interface RunSoFar {
  /** USD per million tokens of the mode's model; absent = no price (cost 0). */
  price?: Price;
  /** Token usage of the run's earlier turns. */
  usage: Usage;
  /** Complete-block events of the run before this turn (agent_started, earlier steps), for the result. */
  blocks: BlockEvent[];
}

/** How a turn that ended its run ended it: the workflow's completed view and result take these. */
export interface RunFinished {
  cost: string;
  completedAt: string;
}

export interface ModelTurnOutput {
  content: string;
  thinking: string;
  toolCalls: ToolCall[];
  usage: Usage;
  nextSeq: number;
  events: BlockEvent[];
  /** Set when this turn ended the run (published agent_cost and agent_completed). */
  finished?: RunFinished;
}

const HEARTBEAT_MS = 1000;

export function createModelActivities(deps: ActivityDeps) {
  const modelFor = (mode: Mode) => modelForMode(deps.config, mode);

  /** Folds events a previous attempt already published into the progress. */
  async function recover(input: ModelTurnInput, p: TurnProgress): Promise<void> {
    const published = await deps.publisher.readAfter(input.taskId, p.nextSeq - 1);
    for (const ev of published) {
      if (ev.seq !== p.nextSeq) break;
      p.nextSeq++;
      if (ev.type === 'agent_thinking_start') p.thinkingStarted = true;
      else if (ev.type === 'agent_thinking') p.thinking = input.streamTokens ? p.thinking + ev.content : ev.content;
      else if (ev.type === 'agent_response_start') p.responseStarted = true;
      else if (ev.type === 'agent_response') p.content = input.streamTokens ? p.content + ev.content : ev.content;
      else if (ev.type === 'agent_step') p.stepDone = true;
      else if (ev.type === 'agent_cost') p.cost = ev.cost;
      else if (ev.type === 'agent_completed') p.runDone = true;
    }
  }

  return {
    async modelTurn(input: ModelTurnInput): Promise<ModelTurnOutput> {
      const ctx = Context.current();
      const p: TurnProgress = (ctx.info.heartbeatDetails as TurnProgress | undefined) ?? {
        content: '',
        thinking: '',
        nextSeq: input.seqStart,
        thinkingStarted: false,
        responseStarted: false,
        stepDone: false,
      };
      const prelude = input.prelude ?? [];
      if (input.view) await deps.statusCache.putKeepingMetadata(input.view);
      if (prelude.length && p.nextSeq < input.seqStart + prelude.length) {
        // A repeat (a retried attempt) is refused by the relay; nothing shows twice.
        await deps.publisher.publish(input.taskId, stampEvents(input.taskId, input.session, input.seqStart, prelude));
        p.nextSeq = input.seqStart + prelude.length;
      }
      if (ctx.info.attempt > 1) await recover(input, p);
      const showThinking = input.mode === 'flash';
      const emit = async (...bodies: AgentEventBody[]) => {
        const seqStart = p.nextSeq;
        p.nextSeq += bodies.length;
        await deps.publisher.publish(input.taskId, stampEvents(input.taskId, input.session, seqStart, bodies));
      };

      let usage: Usage = { promptTokens: 0, completionTokens: 0 };
      const toolCalls: ToolCall[] = [];
      if (!p.stepDone) {
        // Heartbeats carry the progress so far; once a second is plenty (the SDK
        // throttles anyway), and per-chunk calls cost CPU on every token.
        ctx.heartbeat(p);
        const beat = setInterval(() => ctx.heartbeat(p), HEARTBEAT_MS);
        try {
          const req = {
            taskId: input.taskId,
            session: input.session,
            model: modelFor(input.mode),
            messages: buildMessages(input, p),
            streamTokens: input.streamTokens,
            showThinking,
          };
          const out = await deps.modelStream.run(req, p, { signal: ctx.cancellationSignal, onProgress: (q) => Object.assign(p, q) });
          if (ctx.cancellationSignal.aborted) throw new CancelledFailure('model turn cancelled');
          Object.assign(p, out.progress);
          usage = out.usage;
          toolCalls.push(...out.toolCalls);
        } catch (err) {
          if (ctx.cancellationSignal.aborted) throw new CancelledFailure('model turn cancelled');
          if (err instanceof StreamRunnerError) throw ApplicationFailure.retryable(err.message, 'WorkerTokenThread');
          throw classifyModelError(err);
        } finally {
          clearInterval(beat);
        }
      }
      const blocks: AgentEventBody[] = [];
      if (showThinking && p.thinking) blocks.push({ type: 'agent_thinking_start' }, { type: 'agent_thinking', content: p.thinking });
      blocks.push({ type: 'agent_response_start' }, { type: 'agent_response', content: p.content });
      const step: AgentEventBody = { type: 'agent_step', step: String(input.step) };
      const events: BlockEvent[] = [...blocks, step];
      // The complete blocks, the step and a run's end go out in one relay write (atomic: a retry finds all or none).
      const closing: AgentEventBody[] = p.stepDone ? [] : [...(input.streamTokens ? [] : blocks), step];

      let finished: RunFinished | undefined;
      if (input.finish && toolCalls.length === 0) {
        // A retry after the end was published keeps the cost its client saw (its own usage is unknown).
        const cost = p.cost ?? costOf(addUsage(input.finish.usage, usage), input.finish.price);
        finished = { cost, completedAt: new Date().toISOString() };
        if (!p.runDone) {
          await cacheCompleted(input, p.content, events, finished);
          closing.push({ type: 'agent_cost', cost }, { type: 'agent_completed' });
        }
      }
      if (closing.length) await emit(...closing);
      return { content: p.content, thinking: p.thinking, toolCalls, usage, nextSeq: p.nextSeq, events, ...(finished && { finished }) };
    },
  };

  /**
   * The completed status and the result land before agent_completed announces
   * them; the status keeps metadata patched while the turn ran.
   */
  async function cacheCompleted(input: ModelTurnInput, output: string, events: BlockEvent[], f: RunFinished): Promise<void> {
    const result = completedBody(input.taskId, input.session, output, [...input.finish!.blocks, ...events, { type: 'agent_cost', cost: f.cost }, { type: 'agent_completed' }], f.cost);
    await Promise.all([
      input.view && deps.statusCache.putKeepingMetadata({ ...input.view, status: 'completed', progress: 1, completed_at: f.completedAt }),
      deps.statusCache.putResult(input.taskId, result),
    ]);
  }
}

function addUsage(a: Usage, b: Usage): Usage {
  return { promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens };
}

export { ApplicationFailure };
