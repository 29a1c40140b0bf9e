// What DescribeSchedule and ListSchedules show of a schedule: the stored
// schedule with defaults filled in, the info counters, and the list view that
// the real server keeps in the scheduler workflow's memo.
import type { Engine } from '../engine/engine';
import type { Payload } from '../engine/state';
import { typeName } from '../engine/search-attributes';
import { durFromMs, tsFromMs } from '../proto';
import type { Scheduler } from './scheduler';
import {
  ActionResult,
  FUTURE_ACTION_COUNT,
  FUTURE_ACTION_COUNT_FOR_LIST,
  RECENT_ACTION_COUNT_FOR_LIST,
  SPEC_FIELD_LIMIT_FOR_LIST,
  ScheduleRecord,
  catchupWindowMs,
  conflictTokenBytes,
  resolveOverlap,
} from './scheduler-state';

function actionResult(a: ActionResult): object {
  return {
    scheduleTime: tsFromMs(a.scheduleMs),
    actualTime: tsFromMs(a.actualMs),
    startWorkflowResult: { workflowId: a.workflowId, runId: a.runId },
    startWorkflowStatus: a.status,
  };
}

/**
 * Adds the registered type to search attribute payloads that lack one, as the
 * frontend does, so SDKs can decode them as typed search attributes.
 */
export function annotateTypes(
  eng: Engine,
  namespace: string,
  fields: Record<string, Payload> | undefined,
): Record<string, Payload> | undefined {
  if (!fields || Object.keys(fields).length === 0) return undefined;
  const registered = eng.namespace(namespace).searchAttributes;
  const out: Record<string, Payload> = {};
  for (const [name, p] of Object.entries(fields)) {
    const t = registered[name] !== undefined ? typeName(registered[name]) : undefined;
    out[name] = p.metadata?.type || !t ? p : { ...p, metadata: { ...(p.metadata ?? {}), type: Buffer.from(t) } };
  }
  return out;
}

function annotatedAction(eng: Engine, rec: ScheduleRecord): any {
  const sw = rec.action?.startWorkflow;
  if (!sw?.searchAttributes?.indexedFields) return rec.action;
  return {
    ...rec.action,
    startWorkflow: {
      ...sw,
      searchAttributes: { indexedFields: annotateTypes(eng, rec.namespace, sw.searchAttributes.indexedFields) },
    },
  };
}

export function describeSchedule(s: Scheduler, rec: ScheduleRecord): object {
  const eng = s.eng;
  const memo = rec.memo && Object.keys(rec.memo).length ? { fields: rec.memo } : undefined;
  const sa = annotateTypes(eng, rec.namespace, rec.searchAttributes);
  return {
    schedule: {
      spec: rec.spec,
      action: annotatedAction(eng, rec),
      // Describe shows the effective policy values, not what was sent.
      policies: {
        ...(rec.policies ?? {}),
        overlapPolicy: resolveOverlap(rec, undefined),
        catchupWindow: durFromMs(catchupWindowMs(rec)),
      },
      state: rec.state,
    },
    info: {
      actionCount: rec.actionCount,
      missedCatchupWindow: rec.missedCatchupWindow,
      overlapSkipped: rec.overlapSkipped,
      bufferDropped: rec.bufferDropped,
      bufferSize: rec.buffer.length,
      runningWorkflows: rec.running.map((w) => ({ workflowId: w.workflowId, runId: w.runId })),
      recentActions: rec.recent.map(actionResult),
      futureActionTimes: s.futureActionTimes(rec, FUTURE_ACTION_COUNT).map(tsFromMs),
      createTime: tsFromMs(rec.createTime),
      updateTime: rec.updateTime !== undefined ? tsFromMs(rec.updateTime) : undefined,
    },
    memo,
    searchAttributes: sa ? { indexedFields: sa } : undefined,
    conflictToken: conflictTokenBytes(rec.conflictToken),
  };
}

/** The ScheduleListInfo of one schedule: a trimmed spec plus the latest and next few actions. */
export function listInfo(s: Scheduler, rec: ScheduleRecord): object {
  const spec = rec.spec ?? {};
  const head = <T>(xs: T[] | undefined) => (xs ?? []).slice(0, SPEC_FIELD_LIMIT_FOR_LIST);
  const { timezoneData: _tzData, ...rest } = spec;
  return {
    spec: {
      ...rest,
      structuredCalendar: head(spec.structuredCalendar),
      excludeStructuredCalendar: head(spec.excludeStructuredCalendar),
      interval: head(spec.interval),
    },
    workflowType: rec.action?.startWorkflow?.workflowType,
    notes: rec.state.notes,
    paused: rec.state.paused,
    recentActions: rec.recent.slice(-RECENT_ACTION_COUNT_FOR_LIST).map(actionResult),
    futureActionTimes: s.futureActionTimes(rec, FUTURE_ACTION_COUNT_FOR_LIST).map(tsFromMs),
  };
}

export function listEntry(s: Scheduler, rec: ScheduleRecord): object {
  const sa = annotateTypes(s.eng, rec.namespace, rec.searchAttributes);
  return {
    scheduleId: rec.scheduleId,
    memo: rec.memo && Object.keys(rec.memo).length ? { fields: rec.memo } : undefined,
    searchAttributes: sa ? { indexedFields: sa } : undefined,
    info: listInfo(s, rec),
  };
}
