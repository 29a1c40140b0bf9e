// Transient workflow tasks, as the real server keeps them: once a workflow task
// has failed or timed out on the normal queue, its retries (attempt 2 and up)
// write nothing to history until one completes. A worker still needs their
// scheduled/started events, so they are made up on the fly: appended to the
// poll response and to the last page of GetWorkflowExecutionHistory, and only
// written for real, with their original times, when the attempt completes.
import type { Engine } from './engine';
import type { Execution, HistoryEvent, WorkflowTaskInfo } from './state';
import { EventType, TaskQueueKind, durFromMs, tsFromMs } from '../proto';

/** Attempts up to this one keep the run's workflow task timeout (see taskTimeoutMs). */
const BACKOFF_MIN_ATTEMPTS = 3;
const BACKOFF_INITIAL_MS = 5_000;
const BACKOFF_MAX_MS = 10 * 60_000;

/**
 * The flag, not attempt > 1 alone: a task converted to a normal one keeps a
 * written scheduled event, and runs persisted before transient tasks existed
 * have written every attempt's events.
 */
export function isTransient(wft: WorkflowTaskInfo | undefined): boolean {
  return !!wft?.transient;
}

/**
 * Start-to-close timeout of an attempt. The real server slows a task that keeps
 * failing by lengthening its timeout (not by delaying its dispatch): from attempt
 * 4 on, the run's timeout plus an exponential, jittered backoff.
 */
export function taskTimeoutMs(e: Execution, attempt: number): number {
  if (attempt <= BACKOFF_MIN_ATTEMPTS) return e.workflowTaskTimeoutMs;
  const backoff = Math.min(BACKOFF_INITIAL_MS * 2 ** (attempt - BACKOFF_MIN_ATTEMPTS - 1), BACKOFF_MAX_MS);
  return e.workflowTaskTimeoutMs + Math.floor(backoff * 0.8 + Math.random() * backoff * 0.2);
}

function scheduledEvent(e: Execution, wft: WorkflowTaskInfo): HistoryEvent {
  return {
    eventId: wft.scheduledEventId,
    eventTime: tsFromMs(wft.scheduledTime),
    eventType: EventType.WORKFLOW_TASK_SCHEDULED,
    version: 0,
    workflowTaskScheduledEventAttributes: {
      taskQueue: { name: e.taskQueue, kind: TaskQueueKind.NORMAL },
      startToCloseTimeout: durFromMs(wft.timeoutMs ?? e.workflowTaskTimeoutMs),
      attempt: wft.attempt,
    },
  };
}

function startedEvent(e: Execution, wft: WorkflowTaskInfo, identity: string | undefined): HistoryEvent {
  return {
    eventId: wft.scheduledEventId + 1,
    eventTime: tsFromMs(wft.startedTime ?? wft.scheduledTime),
    eventType: EventType.WORKFLOW_TASK_STARTED,
    version: 0,
    workflowTaskStartedEventAttributes: {
      scheduledEventId: wft.scheduledEventId,
      identity: identity || undefined,
      requestId: wft.requestId,
      ...(wft.hints ?? { historySizeBytes: e.historySizeBytes }),
    },
  };
}

/**
 * The events of the run's transient task, to follow its history: scheduled, and
 * started once a worker has it. None once an event was written after the task was
 * scheduled: that task becomes a normal one when it starts (startTransientTask).
 * The started event names `identity` (the poller; GetWorkflowExecutionHistory
 * passes none, as the real server does).
 */
export function transientSuffix(e: Execution, identity?: string): HistoryEvent[] {
  const wft = e.wft;
  if (!wft?.transient || wft.scheduledEventId !== e.nextEventId) return [];
  const events = [scheduledEvent(e, wft)];
  if (wft.startedEventId !== undefined) events.push(startedEvent(e, wft, identity));
  return events;
}

/**
 * A transient task about to start. If events were written since it was scheduled
 * (a signal, a timer...), its made-up ids are taken: like the real server, it
 * becomes a normal task of attempt 1 and its scheduled event is written now.
 * Returns whether the task stays transient.
 */
export function startTransientTask(eng: Engine, e: Execution): boolean {
  const wft = e.wft!;
  if (!wft.transient) return false;
  if (wft.scheduledEventId === e.nextEventId) return true;
  wft.transient = false;
  wft.attempt = 1;
  e.wftAttempt = 1;
  wft.scheduledTime = eng.now();
  wft.scheduledEventId = eng.appendEvent(e, scheduledEvent(e, wft));
  return false;
}

/**
 * A transient task completes: its scheduled and started events are written with
 * the times they happened, the started one naming the completing worker.
 */
export function writeTransientEvents(eng: Engine, e: Execution, identity: string | undefined): void {
  const wft = e.wft!;
  // Each event carries its own time (appendEvent keeps it).
  wft.scheduledEventId = eng.appendEvent(e, scheduledEvent(e, wft));
  wft.startedEventId = eng.appendEvent(e, startedEvent(e, wft, identity));
  wft.transient = false;
}
