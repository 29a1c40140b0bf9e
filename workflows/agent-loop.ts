// The agent loop: a model turn, the tool calls it asked for (each its own
// activity, a turn's calls at once), their results back into the thread, and
// again, until the model answers without tools, a cap is reached, or the
// history asks for a continuation. Messages sent into the task join the thread
// before the next model turn.
import { ActivityFailure, ApplicationFailure, isCancellation, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { BlockEvent, RunCarry, TaskInput, TaskView, ToolCall, Usage } from './types';
import { costOf } from './types';
import { BUILTIN_TOOLS, MAX_WAIT_SECONDS, offeredTools, toolSpec } from './tool-registry';
import { capToolOutput, compactThread, forResult, stepEvent, textBlocks, toolResponseEvent, toolUseEvents } from './run-events';

/** A run continues as new past this many history events (well under Temporal's 50,000 limit). */
export const CONTINUE_AS_NEW_EVENTS = 2000;
/** ... or this many bytes of history (Temporal's limit: 50 MB). */
export const CONTINUE_AS_NEW_BYTES = 4 * 1024 * 1024;

export type LoopEnd =
  | { kind: 'answered' }
  | { kind: 'cap'; type: 'step_limit' | 'budget_exceeded'; message: string }
  /** History grew large: continue as new with the state. */
  | { kind: 'continue' };

/**
 * A run thread of up to this many JSON characters goes to the model activity inline (a first
 * turn's message, mostly) instead of by query: a query costs the worker and the engine about a
 * fifth of a whole one-turn task, and a long run's thread outgrows this within a few turns, so
 * what it adds to history stays small.
 */
const INLINE_THREAD_CHARS = 4096;

const modelActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '10m',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10, nonRetryableErrorTypes: ['ModelBadRequest'] },
  });

const toolActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '5m',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 3, nonRetryableErrorTypes: ['ToolBadInput'] },
  });

/** The loop's state: what a continuation carries (RunCarry), minus admission. */
export type LoopState = Omit<RunCarry, 'view' | 'holdsTurn' | 'holdsSlot' | 'sessionMessages'>;

export function historyIsLarge(): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength > CONTINUE_AS_NEW_EVENTS || info.historySize > CONTINUE_AS_NEW_BYTES;
}

export class AgentLoop {
  private readonly model;
  private readonly tools;
  private readonly offered;
  private readonly showThinking: boolean;

  constructor(
    private readonly input: TaskInput,
    readonly state: LoopState,
    private readonly sessionMessages: () => number,
    /** Called before each model turn with the step it starts (the workflow updates its status). */
    private readonly onStep: (step: number) => { view?: TaskView },
  ) {
    this.model = modelActivities(input.modelHeartbeatTimeoutMs || 20_000);
    this.tools = toolActivities(input.modelHeartbeatTimeoutMs || 20_000);
    this.offered = offeredTools(input.tools);
    this.showThinking = input.mode === 'flash';
  }

  cost(): string {
    return costOf(this.state.usage, this.input.price);
  }

  async run(): Promise<LoopEnd> {
    for (;;) {
      if (historyIsLarge()) return { kind: 'continue' };
      const s = this.state;
      if (s.step >= this.input.maxSteps) {
        return { kind: 'cap', type: 'step_limit', message: `the run reached its limit of ${this.input.maxSteps} model turns (max_steps)` };
      }
      if (this.input.maxCost !== undefined && Number(this.cost()) >= this.input.maxCost) {
        return { kind: 'cap', type: 'budget_exceeded', message: `the run spent ${this.cost()} USD, reaching its budget of ${this.input.maxCost} USD (max_cost)` };
      }
      const calls = await this.modelTurn(s.step + 1);
      if (calls.length) await this.runTools(calls);
      else if (!s.inbox.length) return { kind: 'answered' };
    }
  }

  /** Events left pending, to publish now (tool results are in the result's events already). */
  takePending(): BlockEvent[] {
    const pending = this.state.pending;
    this.state.pending = [];
    this.state.blocks.push(...pending.filter((e) => e.type !== 'agent_tool_response'));
    return pending;
  }

  /** Events published before a turn's own: those left pending, then the messages it takes in. */
  private takePrelude(): BlockEvent[] {
    const s = this.state;
    const prelude = this.takePending();
    for (const message of s.inbox.splice(0)) {
      const input: BlockEvent = { type: 'agent_input', content: message };
      prelude.push(input);
      s.blocks.push(input);
      s.thread.push({ role: 'user', content: message });
    }
    return prelude;
  }

  /** Runs one model turn; returns the tool calls it asked for. */
  private async modelTurn(step: number): Promise<ToolCall[]> {
    const s = this.state;
    const { view } = this.onStep(step);
    const prelude = this.takePrelude();
    const turn = await this.model.modelTurn({
      taskId: this.input.taskId,
      account: this.input.account,
      session: this.input.session,
      step,
      mode: this.input.mode,
      streamTokens: this.input.streamTokens,
      system: this.input.system,
      rules: this.input.rules,
      tools: this.offered.map(toolSpec),
      thread: { sessionMessages: this.sessionMessages(), runMessages: s.thread.length },
      ...(JSON.stringify(s.thread).length <= INLINE_THREAD_CHARS && { runThread: s.thread }),
      floor: s.seqFloor,
      ...(prelude.length && { prelude }),
      ...(view && { view }),
    });
    s.step = step;
    s.seqFloor = Math.max(s.seqFloor, turn.lastSeq);
    s.usage = addUsage(s.usage, turn.usage);
    s.thread.push({ role: 'assistant', content: turn.content, ...(turn.toolCalls.length && { tool_calls: turn.toolCalls }) });
    s.blocks.push(...textBlocks(turn.content, turn.thinking, this.showThinking), ...toolUseEvents(turn.toolCalls).map(forResult));
    if (turn.content) s.output = turn.content;
    const stepDone = stepEvent(step, turn.usage);
    // A turn without tools published its own step; a tool turn's step follows its tools' results.
    if (turn.toolCalls.length) s.pending.push(stepDone);
    else s.blocks.push(stepDone);
    return turn.toolCalls;
  }

  private async runTools(calls: ToolCall[]): Promise<void> {
    const s = this.state;
    const step = s.step;
    const results = await Promise.all(calls.map((call, i) => this.runTool(call, `s${step}:t${i}`)));
    const unpublished: BlockEvent[] = [];
    calls.forEach((call, i) => {
      const r = results[i];
      s.thread.push({ role: 'tool', tool_call_id: call.id, content: r.content, ...(r.isError && { is_error: true }) });
      const ev = toolResponseEvent(call, r.content, r.isError);
      s.blocks.push(forResult(ev));
      // Published by its activity already, unless the activity never got that far.
      if (!r.published) unpublished.push(ev);
    });
    // Before the turn's agent_step, which waits in `pending`.
    s.pending = [...unpublished, ...s.pending];
    s.thread = compactThread(s.thread);
  }

  /** One call; a failing tool is an error result for the model, never the run's failure. */
  private async runTool(call: ToolCall, producer: string): Promise<{ content: string; isError: boolean; published: boolean }> {
    const tool = this.offered.find((t) => t.name === call.name);
    if (!tool) return { content: `Error: no tool named ${JSON.stringify(call.name)} is offered`, isError: true, published: false };
    if (tool.kind === 'timer') return this.timerTool(call);
    try {
      const r = await this.tools.runTool({
        taskId: this.input.taskId,
        session: this.input.session,
        producer,
        floor: this.state.seqFloor,
        call,
        maxChars: this.input.toolResultMaxChars,
      });
      this.state.seqFloor = Math.max(this.state.seqFloor, r.lastSeq);
      return { content: r.content, isError: r.isError, published: true };
    } catch (err) {
      if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
      const cause = err.cause instanceof ApplicationFailure ? err.cause.message : (err.cause?.message ?? err.message);
      return { content: capToolOutput(`Error: the tool failed: ${cause}`, this.input.toolResultMaxChars), isError: true, published: false };
    }
  }

  private async timerTool(call: ToolCall): Promise<{ content: string; isError: boolean; published: boolean }> {
    // Only `wait` is a timer tool today.
    let seconds: unknown;
    try {
      seconds = (JSON.parse(call.arguments || '{}') as { seconds?: unknown }).seconds;
    } catch {
      seconds = undefined;
    }
    if (typeof seconds !== 'number' || !(seconds >= 0)) {
      return { content: `Error: ${BUILTIN_TOOLS.wait.name} needs {"seconds": number}`, isError: true, published: false };
    }
    const s = Math.min(seconds, MAX_WAIT_SECONDS);
    await sleep(s * 1000);
    return { content: `waited ${s} seconds`, isError: false, published: false };
  }
}

function addUsage(a: Usage, b: Usage): Usage {
  return { promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens };
}
