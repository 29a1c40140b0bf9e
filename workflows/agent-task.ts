// One run of the agent on one message: the task's state machine.
// queued (waiting for the session's turn) -> running (model turns, streamed to
// the relay) -> completed | failed | cancelled. Status is readable by query and
// filterable through the TaskStatus search attribute.
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  defineQuery,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunFinished } from '../activities/model-turn';
import type { BlockEvent, TaskInput, TaskResult, TaskStatus, TaskView, ThreadMessage, Usage } from './types';
import { MAX_AGENT_STEPS, SEARCH_ATTRIBUTES, completedBody, costOf, initialView, sessionWorkflowId } from './types';
import { enqueueSignal, turnDoneSignal } from './session';
import { acquireSignal, releaseSignal, renewSignal, slotsWorkflowId } from './account-slots';

/**
 * Runs started before this marker took three more activities: a first
 * publish of the queued status, joinSession and requestSlot as activities
 * every time, agent_started as its own publish, and computeCost. Now the
 * gateway caches the queued status, the task signals its session and its
 * account's slots directly (the activities remain the fallback when those
 * workflows do not exist yet), agent_started goes out with the first model
 * turn, and the cost is computed here. Deprecate once no run older than the
 * retention period can be replayed.
 */
export const LEAN_START_PATCH = 'lean-start-1';

/**
 * Runs started before this marker always signalled their session to join it
 * (the gateway had already enqueued them: one signal and two workflow tasks
 * for nothing), and signalled release and turnDone one after the other at the
 * end. Now a run the gateway enqueued (`input.enqueued`) only joins after
 * JOIN_GRACE_MS without a turn, and the two final signals go out together.
 */
export const QUIET_JOIN_PATCH = 'quiet-join-2';

/**
 * Runs started before this marker published their end (the completed status,
 * the result, agent_cost and agent_completed) with a publishEvents activity
 * after the last model turn. Now the last turn publishes it (see modelTurn's
 * `finish`): one activity and one workflow task fewer per run, and the
 * client's stream ends as soon as the model's answer does.
 */
export const FINISH_IN_TURN_PATCH = 'finish-in-turn-3';

/**
 * How long a run the gateway enqueued waits for its turn before joining its
 * session itself (a no-op when it is already in the queue). Not shorter: when
 * a burst of submits leaves the worker behind, turns take seconds to come, and
 * a grace that fired then would add signals to the backlog.
 */
const JOIN_GRACE_MS = 30_000;

export const statusQuery = defineQuery<TaskView>('status');
export const turnGrantedSignal = defineSignal<[{ messages: ThreadMessage[]; session?: string }]>('turnGranted');
export const patchMetadataSignal = defineSignal<[Record<string, unknown>]>('patchMetadata');
export const slotGrantedSignal = defineSignal('slotGranted');

const relay = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 5, initialInterval: '200ms' },
});
const sessions = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', maximumInterval: '10s' },
});
const modelActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: '10m',
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10, nonRetryableErrorTypes: ['ModelBadRequest'] },
  });

export async function agentTask(input: TaskInput): Promise<TaskResult> {
  const view: TaskView = initialView(input);
  let granted: ThreadMessage[] | undefined;
  let nextSeq = 1;
  const blocks: BlockEvent[] = [];
  const usage: Usage = { promptTokens: 0, completionTokens: 0 };
  const newMessages: ThreadMessage[] = [{ role: 'user', content: input.message }];

  setHandler(statusQuery, () => view);
  setHandler(turnGrantedSignal, ({ messages, session }) => {
    // Only this task's own session hands it the turn.
    if (session === undefined || session === input.session) granted = messages;
  });
  let slotGranted = false;
  setHandler(slotGrantedSignal, () => void (slotGranted = true));
  setHandler(patchMetadataSignal, (patch) => {
    view.metadata = { ...view.metadata, ...patch };
  });

  const setStatus = (status: TaskStatus) => {
    view.status = status;
    upsertSearchAttributes({ [SEARCH_ATTRIBUTES.status]: [status] });
  };
  const publish = async (events: BlockEvent[], opts: { result?: object; append?: boolean } = {}) => {
    nextSeq = await relay.publishEvents({ taskId: input.taskId, session: input.session, seqStart: nextSeq, events, view: { ...view }, ...opts });
  };

  const model = modelActivities(input.modelHeartbeatTimeoutMs || 20_000);
  const sessionHandle = getExternalWorkflowHandle(sessionWorkflowId(input.account, input.session));
  let joined = false;
  let slotRequested = false;
  const slots = input.slots;
  const slotsHandle = getExternalWorkflowHandle(slotsWorkflowId(input.account));
  const lean = patched(LEAN_START_PATCH);
  const quiet = lean && patched(QUIET_JOIN_PATCH);
  const finishInTurn = quiet && patched(FINISH_IN_TURN_PATCH);
  const join = () =>
    sessionHandle.signal(enqueueSignal, { taskId: input.taskId }).catch(async () => {
      // The session does not exist yet (the gateway creates it alongside the run, or died before it could).
      await sessions.joinSession({ taskId: input.taskId, account: input.account, session: input.session });
    });
  try {
    if (input.ownsTurn) {
      // The gateway opened the session with this run holding the turn: an empty thread, nothing to wait for.
      joined = true;
      granted = [];
    } else if (quiet && input.enqueued) {
      joined = true;
      if (!(await condition(() => granted !== undefined, input.joinGraceMs ?? JOIN_GRACE_MS))) await join();
    } else if (lean) {
      joined = true;
      await join();
    } else {
      await relay.publishEvents({ taskId: input.taskId, session: input.session, seqStart: 0, events: [], view: { ...view } });
      await sessions.joinSession({ taskId: input.taskId, account: input.account, session: input.session });
      joined = true;
    }
    await condition(() => granted !== undefined);
    if (slots) {
      // Background tasks also wait for one of the account's running slots, and
      // keep renewing its lease while they run.
      slotRequested = true;
      const request = { taskId: input.taskId, account: input.account, limit: slots.limit, leaseMs: slots.leaseMs, createdAt: input.createdAt };
      if (lean) {
        const { account: _account, ...acquire } = request;
        await slotsHandle.signal(acquireSignal, acquire).catch(() => sessions.requestSlot(request));
      } else {
        await sessions.requestSlot(request);
      }
      await condition(() => slotGranted);
    }

    setStatus('running');
    if (slots) void renewLoop(slotsHandle, input.taskId, slots.leaseMs, () => view.status !== 'running');
    view.started_at = new Date(Date.now()).toISOString();
    // The lean path hands agent_started (and the running status) to the first model turn to publish.
    let prelude: BlockEvent[] | undefined = [{ type: 'agent_started' }];
    if (!lean) {
      await publish(prelude);
      prelude = undefined;
    }
    blocks.push({ type: 'agent_started' });

    const messages = [...granted!, { role: 'user' as const, content: input.message }];
    let output = '';
    let finished: RunFinished | undefined;
    for (let step = 1; step <= MAX_AGENT_STEPS; step++) {
      view.current_step = String(step);
      const seqStart = nextSeq;
      // The prelude's seqs are taken even if the turn fails before it returns.
      if (prelude) nextSeq += prelude.length;
      const turn = await model.modelTurn({
        taskId: input.taskId,
        session: input.session,
        seqStart,
        step,
        mode: input.mode,
        streamTokens: input.streamTokens,
        system: input.system,
        rules: input.rules,
        messages,
        ...(prelude && { prelude }),
        ...((prelude || finishInTurn) && { view: { ...view } }),
        ...(finishInTurn && { finish: { price: input.price, usage: { ...usage }, blocks: [...blocks] } }),
      });
      prelude = undefined;
      nextSeq = turn.nextSeq;
      blocks.push(...turn.events);
      usage.promptTokens += turn.usage.promptTokens;
      usage.completionTokens += turn.usage.completionTokens;
      output = turn.content;
      view.progress = Math.min(0.95, step / (step + 1));
      finished = turn.finished;
      // Tools come with later features; with none registered a turn is final.
      if (finished || !turn.toolCalls.length) break;
    }

    // A turn that ended the run on the relay says what it published there; the workflow agrees with it.
    const cost = finished?.cost ?? (lean ? costOf(usage, input.price) : await relay.computeCost({ mode: input.mode, usage }));
    newMessages.push({ role: 'assistant', content: output });
    blocks.push({ type: 'agent_cost', cost }, { type: 'agent_completed' });
    setStatus('completed');
    view.progress = 1;
    view.completed_at = finished?.completedAt ?? new Date(Date.now()).toISOString();
    const body = completedBody(input.taskId, input.session, output, blocks, cost);
    if (!finished) await publish([{ type: 'agent_cost', cost }, { type: 'agent_completed' }], { result: body });
    return { ...body, usage };
  } catch (err) {
    const cancelled = isCancellation(err);
    const failure = describeFailure(err, cancelled);
    await CancellationScope.nonCancellable(async () => {
      setStatus(cancelled ? 'cancelled' : 'failed');
      view.error = failure;
      view.completed_at = new Date(Date.now()).toISOString();
      // append: a failed model turn may have published events whose seqs this workflow never learnt.
      await publish([{ type: 'agent_error', error: failure }], { append: true });
    });
    if (cancelled) throw err;
    throw ApplicationFailure.nonRetryable(failure.message, failure.type);
  } finally {
    const release = () =>
      slotRequested ? CancellationScope.nonCancellable(() => slotsHandle.signal(releaseSignal, { taskId: input.taskId })).catch(() => undefined) : undefined;
    // The session's next run may start; only a completed run adds to the thread.
    const done = () => {
      if (!joined) return undefined;
      const turn = { taskId: input.taskId, messages: view.status === 'completed' ? newMessages : [] };
      return CancellationScope.nonCancellable(() =>
        sessionHandle.signal(turnDoneSignal, turn).catch(() => {
          // A run holding its turn from the start finds no session only if the gateway's start of it never
          // happened: create it now, so the thread the client was promised exists.
          if (input.ownsTurn) return sessions.finishTurn({ account: input.account, session: input.session, ...turn });
        }),
      ).catch(() => undefined);
    };
    if (quiet) {
      await Promise.all([release(), done()]);
    } else {
      await release();
      await done();
    }
  }
}

async function renewLoop(handle: ReturnType<typeof getExternalWorkflowHandle>, taskId: string, leaseMs: number, done: () => boolean): Promise<void> {
  await CancellationScope.nonCancellable(async () => {
    for (;;) {
      await condition(done, Math.max(1000, Math.floor(leaseMs / 3)));
      if (done()) return;
      await handle.signal(renewSignal, { taskId }).catch(() => undefined);
    }
  });
}

function describeFailure(err: unknown, cancelled: boolean): { type: string; message: string } {
  if (cancelled) return { type: 'cancelled', message: 'the task was cancelled' };
  let e = err as { message?: string; cause?: unknown; type?: string } | undefined;
  // Activity failures wrap the application failure that says what went wrong.
  while (e?.cause && (e as { cause?: { message?: string } }).cause?.message) e = e.cause as typeof e;
  return { type: e?.type ?? 'agent_error', message: e?.message ?? 'the agent failed' };
}

export { workflowInfo };
