// The agent loop: a model turn, the tool calls it asked for (each its own
// activity, a turn's calls at once), their results back into the thread, and
// again, until the model answers without tools, a cap is reached, or the
// history asks for a continuation. Messages sent into the task join the thread
// before the next model turn.
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { BlockEvent, RewindSeen, RunCarry, TaskInput, TaskView, ToolCall } from './types';
import { HISTORY_BUDGET, historyPastBudget } from './history-budget';
import { addUsage, costOf } from './types';
import { BUILTIN_TOOLS, RegisteredTool, type ToolSpec, offeredTools, toolSpec } from './tool-registry';
import { compactThread, forResult, stepEvent, textBlocks, toolResponseEvent, toolUseEvents } from './run-events';
import { bindDatastoreTools, listMcpTools } from './mcp-setup';
import { ToolCalls, type ToolOutcome } from './tool-calls';
import { type ApprovalGates, deniedContent } from './approval-gates';
import { needsApproval } from './approval-rules';

export type LoopEnd =
  | { kind: 'answered' }
  | {
      kind: 'cap';
      type: 'step_limit' | 'budget_exceeded' | 'final_output_invalid' | 'max_duration' | 'approval_timeout';
      message: string;
    }
  /** History grew large: continue as new with the state. */
  | { kind: 'continue' };

/**
 * A run thread of up to this many JSON characters goes to the model activity inline (a first
 * turn's message, mostly) instead of by query: a query costs the worker and the engine about a
 * fifth of a whole one-turn task, and a long run's thread outgrows this within a few turns, so
 * what it adds to history stays small.
 */
export const INLINE_THREAD_CHARS = 4096;

const modelActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '10m',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: {
      initialInterval: '1s',
      maximumInterval: '30s',
      maximumAttempts: 10,
      nonRetryableErrorTypes: ['ModelBadRequest'],
    },
  });

/** The loop's state: what a continuation carries (RunCarry), minus admission. */
export type LoopState = Omit<RunCarry, 'view' | 'holdsTurn' | 'holdsSlot' | 'sessionMessages'>;

export function historyIsLarge(): boolean {
  return historyPastBudget(HISTORY_BUDGET.events, HISTORY_BUDGET.bytes);
}

/**
 * Pending events that runTools put in the run's record (blocks) already, in their place after the
 * round's results: taking them from `pending` to publish them must not record them again (a
 * handoff and a files-changed event were in a result's events twice).
 */
const RECORDED_BY_ROUND: ReadonlySet<BlockEvent['type']> = new Set([
  'agent_tool_response',
  'agent_handoff',
  'agent_files_changed',
]);

export class AgentLoop {
  private readonly model;
  private readonly tools: ToolCalls;
  private readonly showThinking: boolean;

  constructor(
    private readonly input: TaskInput,
    readonly state: LoopState,
    private readonly sessionMessages: () => number,
    /** Called before each model turn with the step it starts (the workflow updates its status). */
    private readonly onStep: (step: number) => { view?: TaskView },
  ) {
    this.model = modelActivities(input.limits.modelHeartbeatTimeoutMs || 20_000);
    this.tools = new ToolCalls(input);
    this.showThinking = input.request.mode === 'flash';
  }

  /**
   * Before the first turn (once the run has its turn and slot): the MCP servers' tools are listed
   * (a server that cannot be reached fails the run: mcp_unavailable), and the run starts with the
   * handoff agent its session's last run ended with, if the request still names it.
   */
  async prepare(sessionAgent: string | undefined): Promise<void> {
    const s = this.state;
    const { agents, datastores, queries, mcpServers } = this.input.request;
    const { tools } = this.input.limits;
    if (s.step > 0 || s.mcpTools || s.datastoreTools) return; // a continuation: prepared already
    if (sessionAgent && agents?.some((a) => a.name === sessionAgent)) s.agent = sessionAgent;
    if (datastores?.length || queries?.length) {
      const reserved = offeredTools(tools, [], agents ?? []).map((t) => t.name);
      s.datastoreTools = await bindDatastoreTools(this.input, reserved);
    }
    if (mcpServers?.length) {
      const reserved = offeredTools(tools, [], agents ?? [], undefined, s.datastoreTools).map((t) => t.name);
      s.mcpTools = await listMcpTools(this.input, reserved);
    }
  }

  /** What the model is offered now: built-ins, datastore and MCP tools, and transfers to the agents that do not have the conversation. */
  /** The turn's tools: the built-ins by name (their specs stay out of history), the others whole, in the offered order. */
  private offeredForTurn(): { tools: ToolSpec[]; builtinTools: string[] } {
    const offered = this.offered();
    const builtin = (t: RegisteredTool) => BUILTIN_TOOLS[t.name] === t;
    return {
      builtinTools: offered.filter(builtin).map((t) => t.name),
      tools: offered.filter((t) => !builtin(t)).map(toolSpec),
    };
  }

  private offered(): RegisteredTool[] {
    return offeredTools(
      this.input.limits.tools,
      this.state.mcpTools,
      this.input.request.agents,
      this.state.agent,
      this.state.datastoreTools,
    );
  }

  /** The handoff agent that has the conversation, as the model activity takes it. */
  activeAgent(): { name: string; description: string } | undefined {
    const name = this.state.agent;
    return name === undefined ? undefined : this.input.request.agents?.find((a) => a.name === name);
  }

  /** Called after each turn that the run goes on from (the callback's feed: its events so far). */
  afterTurn?: () => Promise<void>;

  /** The run's approval gates (a task's own run's, or a workflow step's); without them a gated call is denied, never run. */
  gates?: ApprovalGates;

  /** A turn found the run rewound: the run takes it in (a finished task's session turn, its callback's ids). */
  rewound?: (seen: RewindSeen, epoch: number) => Promise<void>;

  /** A producer's id on the relay: a DAG step's prefix, and after a rewind its epoch's (r<k>:). */
  producerOf(id: string): string {
    const epoch = this.state.epoch ? `r${this.state.epoch}:` : '';
    return `${this.input.step?.producerPrefix ?? ''}${epoch}${id}`;
  }

  cost(): string {
    return costOf(this.state.usage, this.input.limits.price);
  }

  async run(): Promise<LoopEnd> {
    const { maxSteps, maxCost } = this.input.limits;
    for (;;) {
      if (historyIsLarge()) return { kind: 'continue' };
      const s = this.state;
      if (s.step >= maxSteps) {
        return {
          kind: 'cap',
          type: 'step_limit',
          message: `the run reached its limit of ${maxSteps} model turns (max_steps)`,
        };
      }
      if (maxCost !== undefined && Number(this.cost()) >= maxCost) {
        return {
          kind: 'cap',
          type: 'budget_exceeded',
          message: `the run spent ${this.cost()} USD, reaching its budget of ${maxCost} USD (max_cost)`,
        };
      }
      const calls = await this.modelTurn(s.step + 1);
      if (calls.length) {
        const failed = await this.runTools(calls);
        if (failed) return { kind: 'cap', type: 'approval_timeout', message: failed };
      } else if (!s.inbox.length) return { kind: 'answered' };
      await this.afterTurn?.();
    }
  }

  /** Events left pending, to publish now (tool results are in the result's events already). */
  takePending(): BlockEvent[] {
    const pending = this.state.pending;
    this.state.pending = [];
    this.state.blocks.push(...pending.filter((e) => !RECORDED_BY_ROUND.has(e.type)));
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

  /** A DAG step's: its events' tag and where its thread lives. */
  private stepFields(turn: number) {
    const step = this.input.step;
    return step
      ? {
          tag: step.tag,
          threadWorkflowId: step.threadWorkflowId,
          producer: this.producerOf(`s${turn}`),
          ...(step.responseFormat && { responseFormat: step.responseFormat }),
        }
      : this.state.epoch
        ? { producer: this.producerOf(`s${turn}`) }
        : {};
  }

  /**
   * Runs one model turn; returns the tool calls it asked for. A turn that finds the run rewound
   * (the model was not called) has the run take the rewind in, then is asked again.
   */
  private async modelTurn(step: number): Promise<ToolCall[]> {
    const s = this.state;
    const { view } = this.onStep(step);
    let prelude = this.takePrelude();
    let turn = await this.callModel(step, prelude, view);
    if (turn.rewound) {
      prelude = [...prelude, ...(await this.takeRewind(turn.rewound))];
      turn = await this.callModel(step, prelude, view);
    }
    s.step = step;
    s.seqFloor = Math.max(s.seqFloor, turn.lastSeq);
    if (turn.relayLost) s.relayLost = true;
    s.usage = addUsage(s.usage, turn.usage);
    s.thread.push({
      role: 'assistant',
      content: turn.content,
      ...(turn.toolCalls.length && { tool_calls: turn.toolCalls }),
    });
    s.blocks.push(
      ...textBlocks(turn.content, turn.thinking, this.showThinking),
      ...toolUseEvents(turn.toolCalls).map(forResult),
    );
    if (turn.content) s.output = turn.content;
    const stepDone = stepEvent(step, turn.usage);
    // A turn without tools published its own step; a tool turn's step follows its tools' results.
    if (turn.toolCalls.length) s.pending.push(stepDone);
    else s.blocks.push(stepDone);
    return turn.toolCalls;
  }

  /** The model activity for turn `step`, with the events to publish before it. */
  private callModel(step: number, prelude: BlockEvent[], view: TaskView | undefined) {
    const s = this.state;
    const { taskId, account, session, request } = this.input;
    return this.model.modelTurn({
      ...this.stepFields(step),
      taskId,
      account,
      session,
      step,
      mode: request.mode,
      streamTokens: request.streamTokens,
      system: request.system,
      rules: request.rules,
      ...this.offeredForTurn(),
      ...(this.state.agent !== undefined && { agent: this.activeAgent() }),
      thread: { sessionMessages: this.sessionMessages(), runMessages: s.thread.length },
      ...(JSON.stringify(s.thread).length <= INLINE_THREAD_CHARS && { runThread: s.thread }),
      floor: s.seqFloor,
      ...(prelude.length && { prelude }),
      ...(view && { view }),
      // A task's own turns only: a DAG step's run is a child workflow no rewind resets.
      ...(!this.input.step && {
        rewindCheck: {
          originalRunId: workflowInfo().originalExecutionRunId,
          ...(s.rewoundRun && { handledRun: s.rewoundRun }),
        },
      }),
    });
  }

  /**
   * A rewind taken in: the run publishes in the rewind's epoch from now on, with its message (added
   * to the thread, or replacing the last user message), and a finished task's run takes its
   * session's turn again. Returns the events to publish before the turn.
   */
  private async takeRewind(seen: RewindSeen): Promise<BlockEvent[]> {
    const s = this.state;
    s.rewoundRun = seen.runId;
    s.epoch = seen.epoch ?? (s.epoch ?? 0) + 1;
    await this.rewound?.(seen, s.epoch);
    if (seen.message === undefined) return [];
    if (!seen.replace) {
      s.inbox.push(seen.message);
      return this.takePrelude();
    }
    const i = s.thread.map((m) => m.role).lastIndexOf('user');
    if (i >= 0) s.thread[i] = { role: 'user', content: seen.message };
    const input: BlockEvent = { type: 'agent_input', content: seen.message };
    s.blocks.push(input);
    return [input];
  }

  /** Runs a turn's calls at once; returns why the run fails when a gated call's time ran out (on_timeout "fail"). */
  private async runTools(calls: ToolCall[]): Promise<string | undefined> {
    const s = this.state;
    const step = s.step;
    const offered = this.offered();
    const producer = (i: number) => this.producerOf(`s${step}:t${i}`);
    let failed: string | undefined;
    const results = await Promise.all(
      calls.map(async (call, i): Promise<ToolOutcome> => {
        const tool = offered.find((t) => t.name === call.name);
        if (tool && needsApproval(this.input, tool)) {
          const gate = await this.gate(call, tool, producer(i));
          if ('result' in gate) {
            failed ??= gate.fail;
            return gate.result;
          }
          calls[i] = call = gate.run;
        }
        // The context is taken once the call may run: its floor is what the run has heard by then.
        const ctx = {
          producer: producer(i),
          floor: s.seqFloor,
          agent: s.agent,
          handOff: (to: string) => void (s.agent = to),
        };
        return this.tools.run(tool, call, ctx);
      }),
    );
    this.record(calls, results);
    return failed;
  }

  /**
   * A gated call's decision: the call to run (its arguments edited if the decision edited them,
   * in the thread too, so the model reads what ran), a denial's result, or the run's failure.
   */
  private async gate(
    call: ToolCall,
    tool: RegisteredTool,
    producer: string,
  ): Promise<{ run: ToolCall } | { result: ToolOutcome; fail?: string }> {
    if (!this.gates)
      return {
        result: denied("this tool needs a person's approval, which this run cannot wait for; it was not run"),
      };
    const r = await this.gates.wait(call, tool, producer);
    if ('fail' in r) return { result: denied(`this call was not run: ${r.fail.message}`), fail: r.fail.message };
    const d = r.decision;
    if (d.decision === 'deny') return { result: denied(deniedContent(d), true) };
    if (d.input === undefined) return { run: call };
    const edited = { ...call, arguments: JSON.stringify(d.input) };
    for (const m of this.state.thread)
      if (m.role === 'assistant' && m.tool_calls)
        m.tool_calls = m.tool_calls.map((c) => (c.id === call.id ? edited : c));
    return { run: edited };
  }

  /** The round's results into the thread and the record, in the order of the calls. */
  private record(calls: ToolCall[], results: ToolOutcome[]): void {
    const s = this.state;
    const unpublished: BlockEvent[] = [];
    const after: BlockEvent[] = [];
    calls.forEach((call, i) => {
      const r = results[i];
      if (r.lastSeq !== undefined) s.seqFloor = Math.max(s.seqFloor, r.lastSeq);
      if (r.relayLost) s.relayLost = true;
      s.thread.push({ role: 'tool', tool_call_id: call.id, content: r.content, ...(r.isError && { is_error: true }) });
      const ev = toolResponseEvent(call, r.content, r.isError);
      s.blocks.push(forResult(ev));
      // Published by its activity already, unless the activity never got that far.
      if (!r.published) unpublished.push(ev);
      if (r.events) after.push(...r.events);
    });
    // A handoff shows after the round's results, as it takes effect from the next turn.
    s.blocks.push(...after);
    unpublished.push(...after);
    // Before the turn's agent_step, which waits in `pending`.
    s.pending = [...unpublished, ...s.pending];
    s.thread = compactThread(s.thread);
  }
}

/** A result for the model from a call that did not run. */
function denied(content: string, asIs = false): ToolOutcome {
  return { content: asIs ? content : `Error: ${content}.`, isError: true, published: false };
}
