// The mutable state of a reset run, rebuilt from the events it takes over from its base run, as
// the real server's state rebuilder replays them: what was scheduled and not finished by the
// reset point is pending again (activities, timers, children not yet closed, signals and cancels
// of other workflows not yet carried out), memo and search attributes are as the events left
// them, and the workflow task the reset point ends in is the one the reset fails.
import type { Engine } from './engine';
import type { ActivityInfo, ChildInfo, Execution, HistoryEvent, Payload, TimerInfo } from './state';
import { EventType, ParentClosePolicy, msFromDur, msFromTs } from '../proto';
import { normalizeRetryPolicy } from './retry';
import { isNilPayload } from './search-attributes';
import type { ResetPoint } from './worker-versions';

type Effect = NonNullable<Execution['pendingEffects']>[number];

export interface RebuiltState {
  activities: Record<number, ActivityInfo>;
  timers: Record<string, TimerInfo>;
  children: Record<number, ChildInfo>;
  pendingEffects: Effect[];
  cancelRequested: boolean;
  /** The workflow task open at the reset point (scheduled, maybe started). */
  wft?: { scheduledEventId: number; startedEventId?: number };
  lastCompletedWftStartedEventId: number;
  memo?: Record<string, Payload>;
  searchAttributes?: Record<string, Payload>;
  requestIds: string[];
  workerVersionStamp?: Execution['workerVersionStamp'];
}

type Step = (s: RebuiltState, ev: HistoryEvent, now: number) => void;

/** Replays `events` (the base run's, up to the reset point) into the state they leave. */
export function rebuildState(base: Execution, events: HistoryEvent[], now: number): RebuiltState {
  const started = events[0]?.workflowExecutionStartedEventAttributes ?? {};
  const s: RebuiltState = {
    activities: {},
    timers: {},
    children: {},
    pendingEffects: [],
    cancelRequested: false,
    lastCompletedWftStartedEventId: 0,
    memo: started.memo?.fields,
    searchAttributes: started.searchAttributes?.indexedFields,
    requestIds: [base.startRequestId],
  };
  for (const ev of events) STEPS[ev.eventType]?.(s, ev, now);
  // The system's own attributes (the builds that ran the run) are not in any event.
  for (const name of ['BuildIds', 'BinaryChecksums']) {
    const value = base.searchAttributes?.[name];
    if (value) s.searchAttributes = { ...(s.searchAttributes ?? {}), [name]: value };
  }
  return s;
}

/** The base run's reset points before the reset point, as the reset run's own. */
export function carriedResetPoints(
  eng: Engine,
  base: Execution,
  runId: string,
  finishEventId: number,
): ResetPoint[] | undefined {
  const points = (base.resetPoints ?? []).filter((p) => p.firstWorkflowTaskCompletedId < finishEventId);
  return points.length ? points.map((p) => ({ ...p, runId, createTime: eng.now() })) : undefined;
}

/** An activity the reset run has to run (again), as its scheduled event describes it; its clock starts now. */
function pendingActivity(ev: HistoryEvent, now: number): ActivityInfo {
  const a = ev.activityTaskScheduledEventAttributes ?? {};
  return {
    scheduledEventId: ev.eventId,
    activityId: a.activityId,
    activityType: a.activityType?.name ?? '',
    taskQueue: a.taskQueue?.name ?? '',
    attempt: 1,
    scheduledTime: now,
    currentAttemptScheduledTime: now,
    scheduleToCloseMs: msFromDur(a.scheduleToCloseTimeout),
    scheduleToStartMs: msFromDur(a.scheduleToStartTimeout),
    startToCloseMs: msFromDur(a.startToCloseTimeout),
    heartbeatMs: msFromDur(a.heartbeatTimeout),
    retryPolicy: a.retryPolicy ? normalizeRetryPolicy(a.retryPolicy, 'RetryPolicy') : undefined,
    cancelRequested: false,
  };
}

function merged(into: Record<string, Payload> | undefined, fields: Record<string, Payload> | undefined) {
  const out = { ...(into ?? {}) };
  for (const [k, v] of Object.entries(fields ?? {})) {
    if (isNilPayload(v)) delete out[k];
    else out[k] = v;
  }
  return out;
}

function dropEffect(s: RebuiltState, initiatedEventId: number | undefined): void {
  s.pendingEffects = s.pendingEffects.filter((x) => x.initiatedEventId !== Number(initiatedEventId));
}

/** The event's attributes (every event has one `...EventAttributes` field). */
function attributesOf(ev: HistoryEvent): Record<string, any> {
  for (const [k, v] of Object.entries(ev)) if (k.endsWith('EventAttributes') && v) return v;
  return {};
}

const activityDone: Step = (s, ev) => void delete s.activities[Number(attributesOf(ev).scheduledEventId)];

const timerDone: Step = (s, ev) => void delete s.timers[attributesOf(ev).timerId];

const childDone: Step = (s, ev) => {
  const initiatedEventId = attributesOf(ev).initiatedEventId;
  delete s.children[Number(initiatedEventId)];
  dropEffect(s, initiatedEventId);
};

const effectDone: Step = (s, ev) => dropEffect(s, attributesOf(ev).initiatedEventId);

const STEPS: Partial<Record<number, Step>> = {
  [EventType.WORKFLOW_TASK_SCHEDULED]: (s, ev) => void (s.wft = { scheduledEventId: ev.eventId }),
  [EventType.WORKFLOW_TASK_STARTED]: (s, ev) => void (s.wft && (s.wft.startedEventId = ev.eventId)),
  [EventType.WORKFLOW_TASK_COMPLETED]: (s, ev) => {
    const a = ev.workflowTaskCompletedEventAttributes ?? {};
    s.lastCompletedWftStartedEventId = Number(a.startedEventId);
    s.workerVersionStamp = a.workerVersion?.buildId || a.workerVersion?.useVersioning ? a.workerVersion : undefined;
    s.wft = undefined;
  },
  [EventType.WORKFLOW_TASK_FAILED]: (s) => void (s.wft = undefined),
  [EventType.WORKFLOW_TASK_TIMED_OUT]: (s) => void (s.wft = undefined),
  [EventType.ACTIVITY_TASK_SCHEDULED]: (s, ev, now) => void (s.activities[ev.eventId] = pendingActivity(ev, now)),
  [EventType.ACTIVITY_TASK_CANCEL_REQUESTED]: (s, ev) => {
    const info = s.activities[Number(ev.activityTaskCancelRequestedEventAttributes?.scheduledEventId)];
    if (info) info.cancelRequested = true;
  },
  [EventType.ACTIVITY_TASK_COMPLETED]: activityDone,
  [EventType.ACTIVITY_TASK_FAILED]: activityDone,
  [EventType.ACTIVITY_TASK_TIMED_OUT]: activityDone,
  [EventType.ACTIVITY_TASK_CANCELED]: activityDone,
  [EventType.TIMER_STARTED]: (s, ev) => {
    const a = ev.timerStartedEventAttributes ?? {};
    // A timer keeps its deadline, counted from when it started in the base run.
    const fireTime = msFromTs(ev.eventTime) + msFromDur(a.startToFireTimeout);
    s.timers[a.timerId] = { timerId: a.timerId, startedEventId: ev.eventId, fireTime };
  },
  [EventType.TIMER_FIRED]: timerDone,
  [EventType.TIMER_CANCELED]: timerDone,
  [EventType.START_CHILD_WORKFLOW_EXECUTION_INITIATED]: (s, ev) => {
    const a = ev.startChildWorkflowExecutionInitiatedEventAttributes ?? {};
    s.children[ev.eventId] = {
      initiatedEventId: ev.eventId,
      namespace: a.namespace,
      workflowId: a.workflowId,
      workflowType: a.workflowType?.name ?? '',
      parentClosePolicy: a.parentClosePolicy || ParentClosePolicy.TERMINATE,
    };
    s.pendingEffects.push({ kind: 'child', initiatedEventId: ev.eventId });
  },
  [EventType.CHILD_WORKFLOW_EXECUTION_STARTED]: (s, ev) => {
    const a = ev.childWorkflowExecutionStartedEventAttributes ?? {};
    const child = s.children[Number(a.initiatedEventId)];
    if (child) child.runId = a.workflowExecution?.runId;
    dropEffect(s, a.initiatedEventId);
  },
  [EventType.START_CHILD_WORKFLOW_EXECUTION_FAILED]: childDone,
  [EventType.CHILD_WORKFLOW_EXECUTION_COMPLETED]: childDone,
  [EventType.CHILD_WORKFLOW_EXECUTION_FAILED]: childDone,
  [EventType.CHILD_WORKFLOW_EXECUTION_CANCELED]: childDone,
  [EventType.CHILD_WORKFLOW_EXECUTION_TIMED_OUT]: childDone,
  [EventType.CHILD_WORKFLOW_EXECUTION_TERMINATED]: childDone,
  [EventType.SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED]: (s, ev) =>
    void s.pendingEffects.push({ kind: 'signal', initiatedEventId: ev.eventId }),
  [EventType.EXTERNAL_WORKFLOW_EXECUTION_SIGNALED]: effectDone,
  [EventType.SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED]: effectDone,
  [EventType.REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED]: (s, ev) =>
    void s.pendingEffects.push({ kind: 'cancel', initiatedEventId: ev.eventId }),
  [EventType.EXTERNAL_WORKFLOW_EXECUTION_CANCEL_REQUESTED]: effectDone,
  [EventType.REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED]: effectDone,
  [EventType.WORKFLOW_EXECUTION_CANCEL_REQUESTED]: (s) => void (s.cancelRequested = true),
  [EventType.WORKFLOW_EXECUTION_SIGNALED]: (s, ev) => {
    const requestId = ev.workflowExecutionSignaledEventAttributes?.requestId;
    if (requestId) s.requestIds.push(requestId);
  },
  [EventType.UPSERT_WORKFLOW_SEARCH_ATTRIBUTES]: (s, ev) => {
    const fields = ev.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    s.searchAttributes = merged(s.searchAttributes, fields);
  },
  [EventType.WORKFLOW_PROPERTIES_MODIFIED]: (s, ev) => {
    s.memo = merged(s.memo, ev.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields);
  },
};
