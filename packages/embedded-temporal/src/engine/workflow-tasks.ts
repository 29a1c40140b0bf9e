// Workflow task lifecycle: schedule, dispatch to a poller (sticky or normal
// queue), complete, fail, time out. Commands are applied by commands.ts; the
// retries of a failing task are transient (transient-task.ts).
import { Engine, PollResponse } from './engine';
import { Execution, WorkflowTaskInfo } from './state';
import { EventType, TaskQueueKind, TimeoutType, WftFailedCause, durFromMs, msFromDur, tsFromMs } from '../proto';
import { encodeToken, decodeToken } from './task-token';
import { RpcError, invalidArgument, notFound, workflowCompleted } from '../errors';
import { applyCommands, isCloseCommand, validateCommands, BadCommand } from './commands';
import { attachQueries, answerQueries, dispatchQueuedQueries, failAttachedQueries } from './queries';
import { activityNeedsWorkflowTask, dispatchActivity } from './activities';
import { attachUpdates, updatesWaitingForTask, processUpdateMessages, requeueUpdates } from './updates';
import {
  isTransient,
  startTransientTask,
  taskTimeoutMs,
  transientSuffix,
  writeTransientEvents,
} from './transient-task';
import { pollerStamp, recordCompletedTask } from './worker-versions';
import { historyHints } from './history-limits';
import { failTaskAndTerminate, messageSizeViolation } from './command-limits';

const STICKY = 'wft-s2s';
const TIMEOUT = 'wft-timeout';

/**
 * The first task waits for the start delay / backoff, except when `duringBackoff`
 * (a cancel request starts the run early, as on the real server); once a run has
 * had a task, later ones are not held back.
 */
export function scheduleWorkflowTask(eng: Engine, e: Execution, duringBackoff = false): void {
  if (!eng.isOpen(e) || e.wft) return;
  const now = eng.now();
  if (
    e.executionTime > now &&
    !duringBackoff &&
    !e.history.some((h) => h.eventType === EventType.WORKFLOW_TASK_SCHEDULED)
  )
    return;
  // A sticky queue nobody polls (its worker shut down, maybe while completing
  // the task that set it) would only cost a schedule-to-start timeout.
  if (!liveStickyQueue(eng, e)) e.sticky = undefined;
  // Events that arrived while the last task ran come first, and a task that has
  // new events to show is a normal one again, as on the real server.
  if (e.buffered.length > 0) {
    e.wftAttempt = 1;
    eng.flushBuffered(e);
  }
  const sticky = !!e.sticky;
  const queue = sticky ? e.sticky!.queue : e.taskQueue;
  const attempt = e.wftAttempt || 1;
  const timeoutMs = taskTimeoutMs(e, attempt);
  // A retry (always on the normal queue: a failure clears stickiness) is transient:
  // its scheduled event is only written if it completes.
  const transient = attempt > 1;
  const scheduledEventId = transient
    ? e.nextEventId
    : eng.appendEvent(
        e,
        eng.event(EventType.WORKFLOW_TASK_SCHEDULED, 'workflowTaskScheduledEventAttributes', {
          taskQueue: {
            name: queue,
            kind: sticky ? TaskQueueKind.STICKY : TaskQueueKind.NORMAL,
            normalName: sticky ? e.taskQueue : undefined,
          },
          startToCloseTimeout: durFromMs(timeoutMs),
          attempt,
        }),
      );
  e.wftAttempt = attempt;
  e.wft = {
    scheduledEventId,
    attempt,
    sticky,
    taskQueue: queue,
    scheduledTime: now,
    timeoutMs,
    transient: transient || undefined,
  };
  if (transient) eng.markDirty(e);
  eng.hold(e, 'wft');
  if (sticky) {
    eng.setTimer(e, STICKY, now + e.sticky!.scheduleToStartMs, (run) => stickyTimeout(eng, run, scheduledEventId));
  }
  enqueueWft(eng, e);
}

/**
 * The open run's sticky queue while its worker still polls it (or did in the last 10 s);
 * undefined when the run has none or its worker is gone. Workflow tasks and queries both
 * go to the normal queue (with the whole history) then.
 */
export function liveStickyQueue(eng: Engine, e: Execution): string | undefined {
  return e.sticky && eng.isOpen(e) && stickyAlive(eng, e.namespace, e.sticky.queue) ? e.sticky.queue : undefined;
}

function stickyAlive(eng: Engine, namespace: string, queue: string): boolean {
  if (eng.matching.hasPollers(namespace, 'workflow', queue)) return true;
  const d = eng.matching.describe(namespace, 'workflow', queue);
  return !!d && Date.now() - d.lastPollTime < 10_000;
}

function enqueueWft(eng: Engine, e: Execution): void {
  const wft = e.wft!;
  const task = { t: 'wft' as const, key: eng.key(e), scheduledEventId: wft.scheduledEventId, attempt: wft.attempt };
  // Deferred so the mutation that scheduled the task finishes before a poller sees it;
  // by then an eager start may have handed the task to its starter already.
  queueMicrotask(() => {
    if (wft.startedEventId === undefined) eng.matching.add(e.namespace, 'workflow', wft.taskQueue, task);
  });
}

function historyFor(e: Execution, sticky: boolean, identity: string): object[] {
  const persisted = sticky ? e.history.filter((ev) => ev.eventId > e.lastCompletedWftStartedEventId) : e.history;
  const suffix = transientSuffix(e, identity);
  return suffix.length ? persisted.concat(suffix) : persisted;
}

/** Starts the scheduled task for `identity` (a poller, or the starter of an eager start, whose request id it takes). */
export function dispatchWorkflowTask(
  eng: Engine,
  key: string,
  scheduledEventId: number,
  attempt: number,
  identity: string,
  requestId = eng.newId(),
): PollResponse | undefined {
  const e = eng.byKey(key);
  const wft = e?.wft;
  if (
    !e ||
    !eng.isOpen(e) ||
    !wft ||
    wft.scheduledEventId !== scheduledEventId ||
    wft.attempt !== attempt ||
    wft.startedEventId !== undefined
  ) {
    return undefined;
  }
  const now = eng.now();
  eng.clearTimer(e, STICKY);
  const transient = startTransientTask(eng, e);
  // Kept with the task: a transient task's made-up started event says the same.
  const hints = historyHints(eng, e);
  const startedEventId = transient
    ? wft.scheduledEventId + 1
    : eng.appendEvent(
        e,
        eng.event(EventType.WORKFLOW_TASK_STARTED, 'workflowTaskStartedEventAttributes', {
          scheduledEventId: wft.scheduledEventId,
          identity,
          requestId,
          ...hints,
          workerVersion: pollerStamp(eng, identity),
        }),
      );
  Object.assign(wft, { startedEventId, startedTime: now, identity, requestId, hints });
  eng.markDirty(e);
  armTimeout(eng, e, now);
  const queries = attachQueries(eng, e, wft.scheduledEventId);
  const messages = attachUpdates(eng, e, wft.scheduledEventId, startedEventId);
  return { ...startedTaskResponse(e), queries, messages };
}

/** The poll response of the run's started workflow task (also what a retried eager start gets again). */
export function startedTaskResponse(e: Execution): PollResponse {
  const wft = e.wft!;
  return {
    taskToken: encodeToken({
      n: e.namespace,
      w: e.workflowId,
      r: e.runId,
      k: 'w',
      s: wft.scheduledEventId,
      a: wft.attempt,
    }),
    workflowExecution: { workflowId: e.workflowId, runId: e.runId },
    workflowType: { name: e.workflowType },
    previousStartedEventId: e.lastCompletedWftStartedEventId,
    startedEventId: wft.startedEventId,
    attempt: wft.attempt,
    history: { events: historyFor(e, wft.sticky, wft.identity ?? '') },
    workflowExecutionTaskQueue: { name: e.taskQueue, kind: TaskQueueKind.NORMAL },
    scheduledTime: tsFromMs(wft.scheduledTime),
    startedTime: tsFromMs(wft.startedTime!),
  };
}

/** The started task's start-to-close timeout, from when it started. */
function armTimeout(eng: Engine, e: Execution, startedTime: number): void {
  const { scheduledEventId, attempt, timeoutMs } = e.wft!;
  eng.setTimer(e, TIMEOUT, startedTime + (timeoutMs ?? e.workflowTaskTimeoutMs), (run) =>
    timeoutStarted(eng, run, scheduledEventId, attempt),
  );
}

function startedTaskOf(eng: Engine, token: Uint8Array | undefined): Execution {
  const t = decodeToken(token, 'w');
  const e = eng.run(eng.key({ namespace: t.n, workflowId: t.w, runId: t.r } as Execution));
  if (!e) throw notFound('Workflow task not found.');
  if (!eng.isOpen(e)) throw workflowCompleted();
  const wft = e.wft;
  // Tokens from before attempts were in them carry none.
  if (
    !wft ||
    wft.scheduledEventId !== t.s ||
    wft.startedEventId === undefined ||
    (t.a !== undefined && t.a !== wft.attempt)
  ) {
    throw notFound('Workflow task not found.');
  }
  return e;
}

export interface CompleteResult {
  newTask?: PollResponse;
  /** Activities dispatched eagerly to the completing worker, in command order. */
  activityTasks: PollResponse[];
  /** The completion was refused (the task failed): answered once the failure is durable. */
  error?: RpcError;
}

export function completeWorkflowTask(eng: Engine, req: any): CompleteResult {
  const e = startedTaskOf(eng, req.taskToken);
  const wft = e.wft!;
  const commands: any[] = req.commands ?? [];

  const bad = refusalOf(eng, e, req, commands);
  // A retry that keeps failing is not failed again: it is left to time out.
  if (bad && wft.attempt > 1 && bad.reason !== WftFailedCause.UNHANDLED_COMMAND) throw invalidArgument(bad.message);
  eng.clearTimer(e, TIMEOUT);
  answerQueries(eng, e, wft.scheduledEventId, req.queryResults ?? {});
  if (bad) {
    if (bad.terminate) failTaskAndTerminate(eng, e, { cause: bad.reason, message: bad.message }, req.identity);
    else failTask(eng, e, bad.reason, req.identity, undefined, bad.message);
    return { activityTasks: [], error: invalidArgument(bad.message) };
  }

  const completedEventId = recordCompletion(eng, e, wft, req);
  const messages = new Map<string, any>((req.messages ?? []).map((m: any) => [m.id, m]));
  const eager = applyCommands(eng, e, commands, completedEventId, messages, req.identity);
  processUpdateMessages(eng, e, messages, completedEventId, commands);
  requeueUpdates(eng, e, wft.scheduledEventId);

  if (!eng.isOpen(e)) return { activityTasks: [] };
  return afterCommands(eng, e, req, eager);
}

/** Why the completion must be refused (the task then fails), or undefined when its commands and messages stand. */
function refusalOf(eng: Engine, e: Execution, req: any, commands: any[]): BadCommand | undefined {
  // A completion that closes the run while new events wait would lose them: the
  // real server rejects it with UNHANDLED_COMMAND and hands the events to a new task.
  if (commands.some(isCloseCommand) && (e.buffered.length > 0 || updatesWaitingForTask(eng, e))) {
    return new BadCommand(WftFailedCause.UNHANDLED_COMMAND, 'UnhandledCommand');
  }
  try {
    validateCommands(eng, e, commands);
    const tooLarge = messageSizeViolation(eng, e, req.messages ?? []);
    if (tooLarge) throw new BadCommand(tooLarge.cause, tooLarge.message, true);
  } catch (err) {
    if (!(err instanceof BadCommand)) throw err;
    return err;
  }
  return undefined;
}

/** Writes WorkflowTaskCompleted (after a transient task's own events) and ends the task; returns the event's id. */
function recordCompletion(eng: Engine, e: Execution, wft: WorkflowTaskInfo, req: any): number {
  if (isTransient(wft)) writeTransientEvents(eng, e, req.identity);
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_TASK_COMPLETED, 'workflowTaskCompletedEventAttributes', {
      scheduledEventId: wft.scheduledEventId,
      startedEventId: wft.startedEventId,
      identity: req.identity,
      binaryChecksum: req.binaryChecksum,
      sdkMetadata: req.sdkMetadata,
      meteringMetadata: req.meteringMetadata,
      workerVersion: req.workerVersionStamp,
    }),
  );
  const completedEventId = e.nextEventId - 1;
  recordCompletedTask(eng, e, req, completedEventId);
  e.lastCompletedWftStartedEventId = wft.startedEventId!;
  e.wft = undefined;
  e.wftAttempt = 1;
  eng.release(e, 'wft');
  const sa = req.stickyAttributes;
  e.sticky = sa?.workerTaskQueue?.name
    ? { queue: sa.workerTaskQueue.name, scheduleToStartMs: msOr(sa.scheduleToStartTimeout, 10_000) }
    : undefined;
  return completedEventId;
}

/** With the run still open after the commands: the eager activities, the next workflow task, and the answer. */
function afterCommands(eng: Engine, e: Execution, req: any, eager: number[]): CompleteResult {
  // Eager activities start now, on the completing worker (it reserved a slot
  // for each); one it cannot get (none here) would time out like any other.
  const activityTasks: PollResponse[] = [];
  for (const id of eager) {
    const task = dispatchActivity(eng, eng.key(e), id, 1, req.identity ?? '');
    if (task) activityTasks.push(task);
  }
  const flushed = eng.flushBuffered(e);
  const activityResolved = activityNeedsWorkflowTask(e);
  if (flushed > 0 || activityResolved || req.forceCreateNewWorkflowTask || updatesWaitingForTask(eng, e)) {
    scheduleWorkflowTask(eng, e);
  }
  const next = e.wft as WorkflowTaskInfo | undefined;
  if (!next) dispatchQueuedQueries(eng, e);
  let newTask: PollResponse | undefined;
  if (req.returnNewWorkflowTask && req.forceCreateNewWorkflowTask && next && next.startedEventId === undefined) {
    newTask = dispatchWorkflowTask(eng, eng.key(e), next.scheduledEventId, next.attempt, req.identity ?? '');
  }
  return { newTask, activityTasks };
}

function msOr(d: unknown, dflt: number): number {
  const ms = msFromDur(d);
  return ms > 0 ? ms : dflt;
}

export function failWorkflowTask(eng: Engine, req: any): void {
  const e = startedTaskOf(eng, req.taskToken);
  eng.clearTimer(e, TIMEOUT);
  failTask(eng, e, req.cause ?? WftFailedCause.UNSPECIFIED, req.identity, req.failure);
}

/** A transient task's failure writes nothing: only its attempt count grows. */
function failTask(
  eng: Engine,
  e: Execution,
  cause: number,
  identity?: string,
  failure?: object,
  message?: string,
): void {
  const wft = e.wft!;
  if (!isTransient(wft)) {
    eng.appendEvent(
      e,
      eng.event(EventType.WORKFLOW_TASK_FAILED, 'workflowTaskFailedEventAttributes', {
        scheduledEventId: wft.scheduledEventId,
        startedEventId: wft.startedEventId,
        cause,
        failure: failure ?? (message ? { message, source: 'Server' } : undefined),
        identity,
      }),
    );
  }
  endTaskAndRetry(eng, e);
}

function endTaskAndRetry(eng: Engine, e: Execution): void {
  const wft = e.wft!;
  failAttachedQueries(eng, e, wft.scheduledEventId);
  requeueUpdates(eng, e, wft.scheduledEventId);
  e.wft = undefined;
  // A task that failed on a sticky queue is first retried, as attempt 1 again, on
  // the normal queue with the whole history (the worker's cache may be stale);
  // only a failure there makes the retries transient. The real server's rule.
  e.wftAttempt = e.sticky ? 1 : wft.attempt + 1;
  e.sticky = undefined;
  eng.markDirty(e);
  eng.release(e, 'wft');
  eng.clearTimer(e, TIMEOUT);
  eng.clearTimer(e, STICKY);
  // The retry is dispatched at once: a failing task is slowed by its longer timeout (taskTimeoutMs).
  scheduleWorkflowTask(eng, e);
}

function timeoutStarted(eng: Engine, e: Execution, scheduledEventId: number, attempt: number): void {
  const wft = e.wft;
  if (
    !eng.isOpen(e) ||
    wft?.scheduledEventId !== scheduledEventId ||
    wft.attempt !== attempt ||
    wft.startedEventId === undefined
  )
    return;
  if (!isTransient(wft)) {
    eng.appendEvent(
      e,
      eng.event(EventType.WORKFLOW_TASK_TIMED_OUT, 'workflowTaskTimedOutEventAttributes', {
        scheduledEventId,
        startedEventId: wft.startedEventId,
        timeoutType: TimeoutType.START_TO_CLOSE,
      }),
    );
  }
  endTaskAndRetry(eng, e);
}

/** Sticky worker did not pick the task up in time: fall back to the normal queue. */
function stickyTimeout(eng: Engine, e: Execution, scheduledEventId: number): void {
  if (!eng.isOpen(e) || e.wft?.scheduledEventId !== scheduledEventId || e.wft.startedEventId !== undefined) return;
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_TASK_TIMED_OUT, 'workflowTaskTimedOutEventAttributes', {
      scheduledEventId,
      timeoutType: TimeoutType.SCHEDULE_TO_START,
    }),
  );
  requeueUpdates(eng, e, scheduledEventId);
  e.wft = undefined;
  e.sticky = undefined;
  // Not the task's fault: the retry on the normal queue is no transient one.
  e.wftAttempt = 1;
  eng.release(e, 'wft');
  scheduleWorkflowTask(eng, e);
}

/** The worker owning a sticky queue shut down: move its pending tasks to the normal queue. */
export function resetStickyQueue(eng: Engine, namespace: string, stickyQueue: string): void {
  for (const e of eng.executions.values()) {
    if (e.namespace !== namespace || e.sticky?.queue !== stickyQueue || !eng.isOpen(e)) continue;
    e.sticky = undefined;
    eng.markDirty(e);
    if (e.wft && e.wft.startedEventId === undefined && e.wft.sticky) {
      eng.clearTimer(e, STICKY);
      e.wft.sticky = false;
      e.wft.taskQueue = e.taskQueue;
      enqueueWft(eng, e);
    }
  }
  eng.matching.drainTo(namespace, 'workflow', stickyQueue, () => undefined);
}

/** How long a worker that said ShutdownWorker has to finish the workflow tasks it holds. */
export const SHUTDOWN_TASK_GRACE_MS = 3000;

/**
 * A worker shutting down (ShutdownWorker) gets a short grace for the workflow
 * tasks it started; any it has not answered by then time out and are retried
 * elsewhere. The TypeScript SDK drops a task that reaches it while it drains
 * (one its poll picked up just before the stop), and without this the run would
 * wait out the whole task timeout (a minute for the account slots workflow) after
 * every restart. The shortened deadline is stored, so an engine restart keeps it.
 */
export function expediteShutDownWorkerTasks(eng: Engine, namespace: string, identity: string): void {
  const deadline = eng.now() + SHUTDOWN_TASK_GRACE_MS;
  for (const e of eng.executions.values()) {
    const wft = e.wft;
    if (
      e.namespace !== namespace ||
      !eng.isOpen(e) ||
      !wft ||
      wft.startedEventId === undefined ||
      wft.identity !== identity
    )
      continue;
    const started = wft.startedTime ?? eng.now();
    if (started + (wft.timeoutMs ?? e.workflowTaskTimeoutMs) <= deadline) continue;
    wft.timeoutMs = deadline - started;
    eng.markDirty(e);
    armTimeout(eng, e, started);
  }
}

/** Re-arms timers and queues for a recovered run's workflow task. */
export function recoverWorkflowTask(eng: Engine, e: Execution): void {
  const wft = e.wft;
  if (!wft) {
    if (e.executionTime > eng.now()) return;
    // Buffered events, or a retry that older versions held back for a backoff.
    if (e.buffered.length || e.wftAttempt > 1) scheduleWorkflowTask(eng, e);
    return;
  }
  eng.hold(e, 'wft');
  if (wft.startedEventId !== undefined) {
    armTimeout(eng, e, wft.startedTime ?? eng.now());
  } else {
    // The sticky worker is gone after a restart: go straight to the normal queue.
    wft.sticky = false;
    wft.taskQueue = e.taskQueue;
    e.sticky = undefined;
    enqueueWft(eng, e);
  }
}
