// One run of the agent on one message: the task's state machine, and the owner
// of its end. queued (waiting for the session's turn, then for an account slot)
// -> running (the agent loop) -> completed | failed | cancelled. Status is
// readable by query and filterable through the TaskStatus search attribute.
//
// Activities only do I/O; everything the run decides is decided here: when it
// ends and how, what its result is, what is published and cached about it. A
// bug in this code throws a plain error, which fails the workflow task (Temporal
// retries it, and a fixed worker picks the run up where it was) rather than the
// run.
import {
  ApplicationFailure,
  CancellationScope,
  TemporalFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type {
  BlockEvent,
  PartialResult,
  RunMessage,
  TaskInput,
  TaskResult,
  TaskStatus,
  TaskView,
  ThreadMessage,
} from './types';
import { SEARCH_ATTRIBUTES, addUsage, initialView } from './types';
import { Admission } from './run-admission';
import { AgentLoop, LoopEnd, LoopState } from './agent-loop';
import { CallbackFeed } from './callback-feed';
import { FINAL_OUTPUT_REPAIRS, finalOutputOf } from './final-output';
import { answerByReference, threadPage } from './run-events';
import { DagRun } from './dag-run';
import { recoverLostEvents } from './relay-recovery';
import { RunDeadline } from './run-deadline';
import { innermostFailure } from './failure-cause';
import { exchangeQuery, messageUpdate, patchMetadataSignal, statusQuery, threadQuery } from './definitions';

/** Largest completed result (JSON characters) the run's end caches for the gateway. */
const RESULT_CACHE_MAX_CHARS = 16_384;

// A local activity: the run's end is a few Redis writes that must not wait in the task queue
// behind other runs' model turns (a bench load of 1,000 tasks took four times as long), and it
// leaves one marker in history instead of three events.
const relay = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 5, initialInterval: '200ms' },
});

export async function agentTask(input: TaskInput): Promise<TaskResult> {
  const carry = input.carry;
  const view: TaskView = carry?.view ?? initialView(input);
  const state: LoopState = carry
    ? {
        ...carry,
        thread: [...carry.thread],
        blocks: [...carry.blocks],
        inbox: [...carry.inbox],
        pending: [...carry.pending],
      }
    : {
        thread: [{ role: 'user', content: input.message }],
        blocks: [],
        step: 0,
        usage: { promptTokens: 0, completionTokens: 0 },
        seqFloor: 0,
        inbox: [],
        pending: [],
        output: '',
      };
  let ending = false;

  setHandler(statusQuery, () => view);
  setHandler(threadQuery, (from) => threadPage(state.thread, from));
  setHandler(exchangeQuery, () => exchange());
  setHandler(patchMetadataSignal, (patch) => void (view.metadata = { ...view.metadata, ...patch }));
  setHandler(
    messageUpdate,
    ({ message }) => {
      state.inbox.push(message);
      return { accepted: true, pending: state.inbox.length };
    },
    {
      validator: ({ message }) => {
        if (typeof message !== 'string' || !message.trim()) throw new Error('message must be a non-empty string');
        if (ending) throw new Error(`the task is ${view.status === 'running' ? 'finishing' : view.status}`);
      },
    },
  );

  // Replay-safe (the SDK drops it while replaying): one line at a task's start and end in the worker's log.
  const note = (msg: string, fields: Record<string, unknown>) =>
    log.info(msg, { task_id: input.taskId, account: input.account, session: input.session, ...fields });
  const setStatus = (status: TaskStatus) => {
    view.status = status;
    upsertSearchAttributes({ [SEARCH_ATTRIBUTES.status]: [status] });
  };
  const admission = new Admission(input);
  const loop = new AgentLoop(
    input,
    state,
    () => admission.sessionMessages ?? 0,
    (step) => {
      view.current_step = String(step);
      // Never backwards: a run with workflows has moved it with its steps already.
      view.progress = Math.max(view.progress, Math.min(0.95, (step - 1) / step));
      // Each turn caches the view it starts with: a status read between turns sees progress move with the steps.
      if (view.status === 'running') return { view: { ...view } };
      // The first turn publishes agent_started and caches the running status.
      state.pending.unshift(...begin());
      return { view: { ...view } };
    },
  );

  /** The run begins: running, and the events that open its stream. */
  function begin(): BlockEvent[] {
    setStatus('running');
    note('task running', { background: !!input.background });
    view.started_at = new Date(Date.now()).toISOString();
    return [
      { type: 'agent_started' },
      ...(input.schedules?.length ? [{ type: 'agent_scheduled' as const, schedules: input.schedules }] : []),
    ];
  }

  /** The request's workflows, before the agent answers: their results join the request in the thread. */
  async function runWorkflows(workflows: NonNullable<TaskInput['workflows']>): Promise<void> {
    const first = begin();
    state.blocks.push(...first);
    const dag = new DagRun({ ...input, workflows }, view, {
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

  // With a callback, the run hands its events to the task's delivery workflow as it goes.
  const feed = input.callback
    ? new CallbackFeed({ ...input, callback: input.callback }, carry?.callback ?? { sent: 0, started: false })
    : undefined;
  if (feed) loop.afterTurn = () => feed.flush(state.blocks);

  // max_duration: the work below runs under it; a continued run keeps the first run's deadline.
  const deadline = new RunDeadline(input.maxDurationMs, carry?.deadlineAt);
  let end: LoopEnd;
  let finalOutput: TaskResult['final_output'];
  try {
    // The delivery workflow starts with the run, so it can watch a run that ends from outside.
    if (feed && patched('callback-delivery-starts-with-its-run')) await feed.open();
    await admission.acquire();
    end = await deadline.within(async (): Promise<LoopEnd> => {
      await loop.prepare(admission.sessionAgent);
      if (input.workflows?.length && !carry) await runWorkflows(input.workflows);
      const answer = await loop.run();
      // The structured output, once the run has answered (cancellable like the turns before it).
      if (answer.kind !== 'answered' || !input.finalOutput) return answer;
      const fo = await finalOutputOf(input, input.finalOutput, {
        sessionMessages: admission.sessionMessages ?? 0,
        thread: state.thread,
        agent: loop.activeAgent(),
      });
      state.usage = addUsage(state.usage, fo.usage);
      if (!('output' in fo))
        return {
          kind: 'cap',
          type: 'final_output_invalid',
          message: `the final output "${input.finalOutput.name}" did not fit its schema after ${FINAL_OUTPUT_REPAIRS + 1} answers: ${fo.errors.join('; ')}`,
        };
      finalOutput = { name: input.finalOutput.name, output: fo.output };
      return answer;
    });
  } catch (err) {
    // Not a failure Temporal reported (a bug here): fail the workflow task, keep the run.
    if (!(err instanceof TemporalFailure)) throw err;
    ending = true;
    return await CancellationScope.nonCancellable(() => failed(err));
  }
  if (end.kind === 'continue') {
    await condition(allHandlersFinished);
    const next: TaskInput = {
      ...input,
      message: '', // in the thread
      carry: {
        ...state,
        view,
        holdsTurn: admission.holdsTurn,
        holdsSlot: admission.holdsSlot,
        sessionMessages: admission.sessionMessages ?? 0,
        ...(feed && { callback: feed.progress }),
        ...(deadline.at !== undefined && { deadlineAt: deadline.at }),
      },
    };
    return await continueAsNew<typeof agentTask>(next);
  }
  ending = true;
  return await CancellationScope.nonCancellable(() => (end.kind === 'answered' ? completed() : capped(end)));

  async function completed(): Promise<TaskResult> {
    const cost = loop.cost();
    const closing: BlockEvent[] = [
      ...(finalOutput ? [{ type: 'agent_final_output' as const, ...finalOutput }] : []),
      { type: 'agent_cost', cost },
      { type: 'agent_completed' },
    ];
    state.blocks.push(...closing);
    setStatus('completed');
    view.progress = 1;
    view.completed_at = new Date(Date.now()).toISOString();
    note('task completed', { steps: state.step, cost });
    await admission.release(exchange(), input.agents?.length ? { agent: state.agent ?? null } : undefined);
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
    await publishEnd(closing, JSON.stringify(body).length <= RESULT_CACHE_MAX_CHARS ? body : undefined);
    await feed?.flush(state.blocks, { status: 'completed', timestamp: view.completed_at!, output: state.output, cost });
    // Stored with the answer's block by reference: one copy of the answer less in history.
    return answerByReference(result);
  }

  async function capped(cap: Extract<LoopEnd, { kind: 'cap' }>): Promise<never> {
    const error = { type: cap.type, message: cap.message };
    const cost = loop.cost();
    const pending = loop.takePending();
    const closing: BlockEvent[] = [
      { type: 'agent_cost', cost },
      { type: 'agent_error', error },
    ];
    state.blocks.push(...closing);
    await finishUnsuccessfully('failed', error, [...pending, ...closing]);
    const partial: PartialResult = { output: state.output, events: state.blocks, cost };
    throw ApplicationFailure.create({
      message: cap.message,
      type: cap.type,
      nonRetryable: true,
      details: [answerByReference(partial)],
    });
  }

  async function failed(err: TemporalFailure): Promise<never> {
    const cancelled = isCancellation(err);
    const error = describeFailure(err, cancelled);
    await finishUnsuccessfully(cancelled ? 'cancelled' : 'failed', error, [{ type: 'agent_error', error }]);
    if (cancelled) throw err;
    throw ApplicationFailure.create({ message: error.message, type: error.type, nonRetryable: true });
  }

  async function finishUnsuccessfully(
    status: TaskStatus,
    error: { type: string; message: string },
    events: BlockEvent[],
  ): Promise<void> {
    setStatus(status);
    view.error = error;
    view.completed_at = new Date(Date.now()).toISOString();
    note(`task ${status}`, { steps: state.step, error: error.type, reason: error.message });
    await admission.release([]);
    await publishEnd(events);
    const unlisted = events.filter((e) => !state.blocks.includes(e));
    await feed?.flush([...state.blocks, ...unlisted], {
      status: status as 'failed' | 'cancelled',
      timestamp: view.completed_at!,
      error,
    });
  }

  /** The run's end on the relay: its last events and the final status, in one thin activity (after what the relay lost, if it did). */
  async function publishEnd(events: BlockEvent[], result?: Omit<TaskResult, 'usage'>): Promise<void> {
    if (state.relayLost) {
      const record = state.blocks.filter((e) => !events.includes(e));
      state.seqFloor = await recoverLostEvents({
        taskId: input.taskId,
        session: input.session,
        floor: state.seqFloor,
        producer: 'recovered',
        record,
      });
    }
    await relay.publishEnd({
      taskId: input.taskId,
      session: input.session,
      floor: state.seqFloor,
      events,
      view: { ...view },
      ...(result && { result }),
    });
  }

  /** What a completed run adds to its session's thread: the messages it took in and its answer. */
  function exchange(): ThreadMessage[] {
    const said = state.thread
      .filter((m): m is Extract<RunMessage, { role: 'user' }> => m.role === 'user')
      .map((m) => ({ role: 'user' as const, content: m.content }));
    return [...said, { role: 'assistant', content: state.output }];
  }
}

function describeFailure(err: unknown, cancelled: boolean): { type: string; message: string } {
  if (cancelled) return { type: 'cancelled', message: 'the task was cancelled' };
  const e = innermostFailure(err);
  return { type: e?.type ?? 'agent_error', message: e?.message ?? 'the agent failed' };
}
