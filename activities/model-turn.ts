// One model turn: a streamed Chat Completion whose pieces go to the relay as
// they arrive (through deps.modelStream, on the worker's token thread), with
// the activity heartbeating its progress.
//
// Retried after a crash, a turn never shows a client the same text twice: its
// events carry seqs counted from the workflow's seqStart, the relay refuses a
// seq it already has, and the new attempt first rebuilds what was already
// published (from the relay, else from its last heartbeat) and asks the model
// to continue from that text instead of starting over.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityDeps } from './index';
import type { BlockEvent, Mode, TaskView, ThreadMessage, Usage } from '../workflows/types';
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
}

export interface ModelTurnOutput {
  content: string;
  thinking: string;
  toolCalls: ToolCall[];
  usage: Usage;
  nextSeq: number;
  events: BlockEvent[];
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
      if (input.view) await deps.statusCache.put(input.view);
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
        // The complete blocks and the step go out in one relay write (atomic: a retry finds all or none).
        const closing: AgentEventBody[] = [];
        if (!input.streamTokens) {
          if (showThinking && p.thinking) closing.push({ type: 'agent_thinking_start' }, { type: 'agent_thinking', content: p.thinking });
          closing.push({ type: 'agent_response_start' }, { type: 'agent_response', content: p.content });
        }
        closing.push({ type: 'agent_step', step: String(input.step) });
        await emit(...closing);
      }

      const events: BlockEvent[] = [];
      if (showThinking && p.thinking) events.push({ type: 'agent_thinking_start' }, { type: 'agent_thinking', content: p.thinking });
      events.push({ type: 'agent_response_start' }, { type: 'agent_response', content: p.content }, { type: 'agent_step', step: String(input.step) });
      return { content: p.content, thinking: p.thinking, toolCalls, usage, nextSeq: p.nextSeq, events };
    },
  };
}

export { ApplicationFailure };
