// The state of one run of agentTask (agent-task.ts) and what it does at each of its ends. The
// workflow function reads as the run's outline; this class owns the view, the status, admission
// and the callback feed, and the three ways a run ends: complete (answered), cap (a limit it hit)
// and fail (a failure Temporal reported, cancellation included). Every workflow command is issued
// in the order the function issued it before the class existed, so saved histories replay.
import {
  ApplicationFailure,
  CancellationScope,
  type TemporalFailure,
  isCancellation,
  log,
  patched,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type {
  BlockEvent,
  DagWorkflow,
  FinalOutputSpec,
  PartialResult,
  RunMessage,
  TaskInput,
  TaskResult,
  TaskStatus,
  TaskView,
  ThreadMessage,
} from './types';
import { SEARCH_ATTRIBUTES, addUsage, initialView } from './types';
import { Admission, type SlotRelease } from './run-admission';
import { AgentLoop, LoopEnd, LoopState } from './agent-loop';
import { CallbackFeed } from './callback-feed';
import { FINAL_OUTPUT_REPAIRS, finalOutputOf } from './final-output';
import { answerByReference, threadPage } from './run-events';
import { DagRun } from './dag-run';
import { recoverLostEvents } from './relay-recovery';
import { RunDeadline } from './run-deadline';
import { innermostFailure } from './failure-cause';
import { RunApprovals } from './run-approvals';
import {
  exchangeQuery,
  interruptSignal,
  messageUpdate,
  patchMetadataSignal,
  statusQuery,
  threadQuery,
} from './definitions';
import { localRelay } from './local-relay';

/** Largest completed result (JSON characters) the run's end caches for the gateway. */
const RESULT_CACHE_MAX_CHARS = 16_384;

type Cap = Extract<LoopEnd, { kind: 'cap' }>;

/** A run's loop state: a continued run's, copied, or a new run's first message. */
function startingState(input: TaskInput): LoopState {
  const carry = input.carry;
  if (carry) {
    return {
      ...carry,
      thread: [...carry.thread],
      blocks: [...carry.blocks],
      inbox: [...carry.inbox],
      pending: [...carry.pending],
    };
  }
  return {
    thread: [{ role: 'user', content: input.request.message }],
    blocks: [],
    step: 0,
    usage: { promptTokens: 0, completionTokens: 0 },
    seqFloor: 0,
    inbox: [],
    pending: [],
    output: '',
  };
}

export class TaskRun {
  readonly view: TaskView;
  private readonly state: LoopState;
  private readonly admission: Admission;
  private readonly loop: AgentLoop;
  /** With a callback, the run hands its events to the task's delivery workflow as it goes. */
  private readonly feed?: CallbackFeed;
  /** max_duration: the work runs under it; a continued run keeps the first run's deadline. */
  private readonly deadline: RunDeadline;
  private finalOutput: TaskResult['final_output'];
  /** Set once the run is past its work: a message sent after it is refused. */
  private ending = false;
  /** The coming cancellation is an interruption by a new message (interruptSignal). */
  private interrupted = false;

  constructor(private readonly input: TaskInput) {
    this.view = input.carry?.view ?? initialView(input);
    this.state = startingState(input);
    this.handleMessages();
    this.admission = new Admission(input);
    this.loop = new AgentLoop(
      input,
      this.state,
      () => this.admission.sessionMessages ?? 0,
      (step) => this.onStep(step),
    );
    const { callback } = input.request;
    this.feed = callback
      ? new CallbackFeed({ ...input, callback }, input.carry?.callback ?? { sent: 0, started: false })
      : undefined;
    const feed = this.feed;
    if (feed) this.loop.afterTurn = () => feed.flush(this.state.blocks);
    const approvals = new RunApprovals({
      input,
      state: this.state,
      view: this.view,
      setStatus: (status) => this.setStatus(status),
      ...(feed && { flush: (blocks: readonly BlockEvent[]) => feed.flush(blocks) }),
      ending: () => this.ending,
    });
    this.loop.gates = approvals.gates;
    // Only the request's workflows' steps report gated calls (stepApprovalsSignal): no watch without them.
    if (input.request.workflows?.length) approvals.watchSteps();
    this.loop.rewound = async (seen, epoch) => {
      this.feed?.rewound(epoch);
      if (seen.rejoin) await this.admission.rejoin();
    };
    this.deadline = new RunDeadline(input.limits.maxDurationMs, input.carry?.deadlineAt);
  }

  /** The queries, the metadata signal and the message update of a running task. */
  private handleMessages(): void {
    setHandler(statusQuery, () => this.view);
    setHandler(threadQuery, (from) => threadPage(this.state.thread, from));
    setHandler(exchangeQuery, () => this.exchange());
    setHandler(patchMetadataSignal, (patch) => void (this.view.metadata = { ...this.view.metadata, ...patch }));
    setHandler(interruptSignal, () => void (this.interrupted = true));
    setHandler(
      messageUpdate,
      ({ message }) => {
        this.state.inbox.push(message);
        return { accepted: true, pending: this.state.inbox.length };
      },
      {
        validator: ({ message }) => {
          if (typeof message !== 'string' || !message.trim()) throw new Error('message must be a non-empty string');
          if (this.ending)
            throw new Error(`the task is ${this.view.status === 'running' ? 'finishing' : this.view.status}`);
        },
      },
    );
  }

  /** Before each model turn: the step and progress in the view, which the turn caches. */
  private onStep(step: number): { view?: TaskView } {
    this.view.current_step = String(step);
    // Never backwards: a run with workflows has moved it with its steps already.
    this.view.progress = Math.max(this.view.progress, Math.min(0.95, (step - 1) / step));
    // Each turn caches the view it starts with: a status read between turns sees progress move with the steps.
    if (this.view.status === 'running') return { view: { ...this.view } };
    // The first turn publishes agent_started and caches the running status.
    this.state.pending.unshift(...this.begin());
    return { view: { ...this.view } };
  }

  /** Replay-safe (the SDK drops it while replaying): one line at a task's start and end in the worker's log. */
  private note(msg: string, fields: Record<string, unknown>): void {
    const { taskId, account, session } = this.input;
    log.info(msg, { task_id: taskId, account, session, ...fields });
  }

  private setStatus(status: TaskStatus): void {
    this.view.status = status;
    upsertSearchAttributes({ [SEARCH_ATTRIBUTES.status]: [status] });
  }

  /** The run begins: running, and the events that open its stream. */
  private begin(): BlockEvent[] {
    this.setStatus('running');
    this.note('task running', { background: !!this.input.admission.background });
    this.view.started_at = new Date(Date.now()).toISOString();
    const { schedules } = this.input.request;
    return [{ type: 'agent_started' }, ...(schedules?.length ? [{ type: 'agent_scheduled' as const, schedules }] : [])];
  }

  /**
   * The run's work: admission, the request's workflows, the agent loop and the final output, under
   * max_duration. Ends with how the loop ended; throws what Temporal reported (cancellation, a
   * failed activity), or a plain error for a bug here.
   */
  async work(): Promise<LoopEnd> {
    // The delivery workflow starts with the run, so it can watch a run that ends from outside.
    if (this.feed && patched('callback-delivery-starts-with-its-run')) await this.feed.open();
    await this.admission.acquire();
    return await this.deadline.within(async (): Promise<LoopEnd> => {
      const { workflows, finalOutput } = this.input.request;
      await this.loop.prepare(this.admission.sessionAgent);
      if (workflows?.length && !this.input.carry) await this.runWorkflows(workflows);
      const answer = await this.loop.run();
      // The structured output, once the run has answered (cancellable like the turns before it).
      if (answer.kind !== 'answered' || !finalOutput) return answer;
      return await this.structuredOutput(answer, finalOutput);
    });
  }

  /** The request's workflows, before the agent answers: their results join the request in the thread. */
  private async runWorkflows(workflows: DagWorkflow[]): Promise<void> {
    const { state } = this;
    const first = this.begin();
    state.blocks.push(...first);
    const dag = new DagRun(this.input, workflows, this.view, {
      get: () => state.seqFloor,
      set: (n) => void (state.seqFloor = Math.max(state.seqFloor, n)),
    });
    const out = await dag.run(first);
    state.blocks.push(...dag.blocks);
    if (dag.relayLost) state.relayLost = true;
    state.usage = addUsage(state.usage, out.usage);
    const [request, ...rest] = state.thread;
    state.thread = [{ role: 'user', content: `${request.content}${out.context}` }, ...rest];
  }

  /** final_output: the answer's structured form, or a cap once the model could not fit the schema. */
  private async structuredOutput(answer: LoopEnd, spec: FinalOutputSpec): Promise<LoopEnd> {
    const fo = await finalOutputOf(this.input, spec, {
      sessionMessages: this.admission.sessionMessages ?? 0,
      thread: this.state.thread,
      agent: this.loop.activeAgent(),
    });
    this.state.usage = addUsage(this.state.usage, fo.usage);
    if (!('output' in fo))
      return {
        kind: 'cap',
        type: 'final_output_invalid',
        message: `the final output "${spec.name}" did not fit its schema after ${FINAL_OUTPUT_REPAIRS + 1} answers: ${fo.errors.join('; ')}`,
      };
    this.finalOutput = { name: spec.name, output: fo.output };
    return answer;
  }

  /** The input of the run that continues this one as new: what it carries over. */
  carryOver(): TaskInput {
    const { admission, feed, deadline } = this;
    return {
      ...this.input,
      request: { ...this.input.request, message: '' }, // in the thread
      carry: {
        ...this.state,
        view: this.view,
        holdsTurn: admission.holdsTurn,
        holdsSlot: admission.holdsSlot,
        ...(admission.lazyTurn && { lazyTurn: true }),
        sessionMessages: admission.sessionMessages ?? 0,
        ...(feed && { callback: feed.progress }),
        ...(deadline.at !== undefined && { deadlineAt: deadline.at }),
      },
    };
  }

  /** Ends the run with `ending` (complete, cap or fail), which no cancellation can interrupt. */
  async end<T>(ending: () => Promise<T>): Promise<T> {
    this.ending = true;
    return await CancellationScope.nonCancellable(ending);
  }

  /** Answered: the closing events, the session's exchange, the cached result, the callback's last delivery. */
  async complete(): Promise<TaskResult> {
    const { state, view, input, finalOutput } = this;
    const cost = this.loop.cost();
    const closing: BlockEvent[] = [
      ...(finalOutput ? [{ type: 'agent_final_output' as const, ...finalOutput }] : []),
      { type: 'agent_cost', cost },
      { type: 'agent_completed' },
    ];
    state.blocks.push(...closing);
    this.setStatus('completed');
    view.progress = 1;
    view.completed_at = new Date(Date.now()).toISOString();
    this.note('task completed', { steps: state.step, cost });
    const handoff = input.request.agents?.length ? { agent: state.agent ?? null } : undefined;
    const slot = await this.admission.release(this.exchange(), handoff);
    const result: TaskResult = {
      task_id: input.taskId,
      session: input.session,
      status: 'completed',
      output: state.output,
      events: state.blocks,
      cost,
      usage: state.usage,
      ...(finalOutput && { final_output: finalOutput }),
    };
    const { usage: _usage, ...body } = result;
    // A small result is cached with the end, so its first read is one GET; a large one is not
    // copied into history once more (the gateway reads it from Temporal once, then caches it).
    await this.publishEnd(closing, slot, JSON.stringify(body).length <= RESULT_CACHE_MAX_CHARS ? body : undefined);
    await this.feed?.flush(state.blocks, {
      status: 'completed',
      timestamp: view.completed_at!,
      output: state.output,
      cost,
    });
    // Stored with the answer's block by reference: one copy of the answer less in history.
    return answerByReference(result);
  }

  /** A limit ended the run (steps, cost, duration, an invalid final output): failed, with what it produced. */
  async cap(cap: Cap): Promise<never> {
    const error = { type: cap.type, message: cap.message };
    const cost = this.loop.cost();
    const pending = this.loop.takePending();
    const closing: BlockEvent[] = [
      { type: 'agent_cost', cost },
      { type: 'agent_error', error },
    ];
    this.state.blocks.push(...closing);
    await this.finishUnsuccessfully('failed', error, [...pending, ...closing]);
    const partial: PartialResult = { output: this.state.output, events: this.state.blocks, cost };
    throw ApplicationFailure.create({
      message: cap.message,
      type: cap.type,
      nonRetryable: true,
      details: [answerByReference(partial)],
    });
  }

  /**
   * A failure Temporal reported: cancelled (thrown on as it came) or failed with its innermost
   * cause. A cancellation announced as an interruption (multitask "interrupt") keeps the exchange
   * so far in the session's thread, its answer marked as interrupted.
   */
  async fail(err: TemporalFailure): Promise<never> {
    const cancelled = isCancellation(err);
    const interrupted = cancelled && this.interrupted;
    const error = interrupted ? INTERRUPTED : describeFailure(err, cancelled);
    await this.finishUnsuccessfully(
      cancelled ? 'cancelled' : 'failed',
      error,
      [{ type: 'agent_error', error }],
      interrupted ? this.interruptedExchange() : [],
    );
    if (cancelled) throw err;
    throw ApplicationFailure.create({ message: error.message, type: error.type, nonRetryable: true });
  }

  private async finishUnsuccessfully(
    status: TaskStatus,
    error: { type: string; message: string },
    events: BlockEvent[],
    exchange: ThreadMessage[] = [],
  ): Promise<void> {
    this.setStatus(status);
    this.view.error = error;
    if (this.view.approvals) this.view.approvals = []; // a call that waited waits no more
    this.view.completed_at = new Date(Date.now()).toISOString();
    this.note(`task ${status}`, { steps: this.state.step, error: error.type, reason: error.message });
    await this.publishEnd(events, await this.admission.release(exchange));
    const unlisted = events.filter((e) => !this.state.blocks.includes(e));
    await this.feed?.flush([...this.state.blocks, ...unlisted], {
      status: status as 'failed' | 'cancelled',
      timestamp: this.view.completed_at!,
      error,
    });
  }

  /** The run's end on the relay: its last events and the final status, in one thin activity (after what the relay lost, if it did). */
  private async publishEnd(events: BlockEvent[], slot: SlotRelease, result?: Omit<TaskResult, 'usage'>): Promise<void> {
    const { state, input } = this;
    if (state.relayLost) {
      const record = state.blocks.filter((e) => !events.includes(e));
      state.seqFloor = await recoverLostEvents({
        taskId: input.taskId,
        session: input.session,
        floor: state.seqFloor,
        producer: this.loop.producerOf('recovered'),
        record,
      });
    }
    await localRelay.publishEnd({
      taskId: input.taskId,
      session: input.session,
      floor: state.seqFloor,
      events,
      view: { ...this.view },
      ...(result && { result }),
      ...slot,
      // After a rewind, the end of the run's epoch (the earlier epoch's end no longer stops the stream).
      ...(state.epoch && { producer: this.loop.producerOf('end') }),
    });
  }

  /** What a completed run adds to its session's thread: the messages it took in and its answer. */
  /** The exchange of an interrupted run: its user messages, and what the agent had said so far, marked. */
  private interruptedExchange(): ThreadMessage[] {
    const said = this.exchange().filter((m) => m.role === 'user');
    const partial = this.state.thread
      .filter((m): m is Extract<RunMessage, { role: 'assistant' }> => m.role === 'assistant')
      .map((m) => (typeof m.content === 'string' ? m.content.trim() : ''))
      .filter(Boolean)
      .join('\n\n');
    const mark = '[interrupted: a new message arrived before this answer was finished]';
    return [...said, { role: 'assistant', content: partial ? `${partial}\n\n${mark}` : mark }];
  }

  private exchange(): ThreadMessage[] {
    const said = this.state.thread
      .filter((m): m is Extract<RunMessage, { role: 'user' }> => m.role === 'user')
      .map((m) => ({ role: 'user' as const, content: m.content }));
    return [...said, { role: 'assistant', content: this.state.output }];
  }
}

const INTERRUPTED = {
  type: 'interrupted',
  message: 'the task was interrupted by a new message in its session (multitask: interrupt)',
};

function describeFailure(err: unknown, cancelled: boolean): { type: string; message: string } {
  if (cancelled) return { type: 'cancelled', message: 'the task was cancelled' };
  const e = innermostFailure(err);
  return { type: e?.type ?? 'agent_error', message: e?.message ?? 'the agent failed' };
}
