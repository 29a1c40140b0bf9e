// Protobuf access for the embedded server. We use the descriptors the SDK ships
// (@temporalio/proto json-module) so the wire format is exactly the SDK's own.
import * as protobuf from 'protobufjs/light';

const root: protobuf.Root = require('@temporalio/proto/protos/json-module.js');

export { root };

const typeCache = new Map<string, protobuf.Type>();
export function lookupType(fullName: string): protobuf.Type {
  let t = typeCache.get(fullName);
  if (!t) {
    t = root.lookupType(fullName);
    typeCache.set(fullName, t);
  }
  return t;
}

export function lookupService(fullName: string): protobuf.Service {
  return root.lookupService(fullName);
}

function enumValues(name: string): Record<string, number> {
  return root.lookupEnum(`temporal.api.enums.v1.${name}`).values;
}

/** Enum values without their long prefixes, e.g. EventType.WORKFLOW_EXECUTION_STARTED. */
function stripped(name: string, prefix: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(enumValues(name))) out[k.slice(prefix.length)] = v;
  return out;
}

export const EventType = stripped('EventType', 'EVENT_TYPE_');
export const CommandType = stripped('CommandType', 'COMMAND_TYPE_');
export const WfStatus = stripped('WorkflowExecutionStatus', 'WORKFLOW_EXECUTION_STATUS_');
export const WftFailedCause = stripped('WorkflowTaskFailedCause', 'WORKFLOW_TASK_FAILED_CAUSE_');
export const TimeoutType = stripped('TimeoutType', 'TIMEOUT_TYPE_');
export const RetryState = stripped('RetryState', 'RETRY_STATE_');
export const ReusePolicy = stripped('WorkflowIdReusePolicy', 'WORKFLOW_ID_REUSE_POLICY_');
export const ConflictPolicy = stripped('WorkflowIdConflictPolicy', 'WORKFLOW_ID_CONFLICT_POLICY_');
export const ParentClosePolicy = stripped('ParentClosePolicy', 'PARENT_CLOSE_POLICY_');
export const ContinueAsNewInitiator = stripped('ContinueAsNewInitiator', 'CONTINUE_AS_NEW_INITIATOR_');
export const HistoryFilter = stripped('HistoryEventFilterType', 'HISTORY_EVENT_FILTER_TYPE_');
export const TaskQueueKind = stripped('TaskQueueKind', 'TASK_QUEUE_KIND_');
export const IndexedValueType = stripped('IndexedValueType', 'INDEXED_VALUE_TYPE_');
export const QueryResultType = stripped('QueryResultType', 'QUERY_RESULT_TYPE_');
export const UpdateStage = stripped(
  'UpdateWorkflowExecutionLifecycleStage',
  'UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_',
);
export const PendingActivityState = stripped('PendingActivityState', 'PENDING_ACTIVITY_STATE_');
export const OverlapPolicy = stripped('ScheduleOverlapPolicy', 'SCHEDULE_OVERLAP_POLICY_');
export const QueryRejectCondition = stripped('QueryRejectCondition', 'QUERY_REJECT_CONDITION_');
export const SuggestCanReason = stripped('SuggestContinueAsNewReason', 'SUGGEST_CONTINUE_AS_NEW_REASON_');
export const StartChildFailedCause = stripped(
  'StartChildWorkflowExecutionFailedCause',
  'START_CHILD_WORKFLOW_EXECUTION_FAILED_CAUSE_',
);
export const CancelExternalFailedCause = stripped(
  'CancelExternalWorkflowExecutionFailedCause',
  'CANCEL_EXTERNAL_WORKFLOW_EXECUTION_FAILED_CAUSE_',
);
export const SignalExternalFailedCause = stripped(
  'SignalExternalWorkflowExecutionFailedCause',
  'SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED_CAUSE_',
);

export const ResetReapplyType = stripped('ResetReapplyType', 'RESET_REAPPLY_TYPE_');
export const ResetReapplyExcludeType = stripped('ResetReapplyExcludeType', 'RESET_REAPPLY_EXCLUDE_TYPE_');

const eventTypeNames = new Map(Object.entries(EventType).map(([k, v]) => [v, k]));
export function eventTypeName(t: number): string {
  return eventTypeNames.get(t) ?? String(t);
}

/** int64 fields arrive as Long (or string/number); the engine works in plain numbers. */
export function num(v: unknown): number {
  if (v == null) return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return Number(v);
  if (typeof v === 'object' && 'toNumber' in (v as object)) return (v as { toNumber(): number }).toNumber();
  return Number(v);
}

export interface Timestamp {
  seconds: number;
  nanos: number;
}

export function tsFromMs(ms: number): Timestamp {
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

/** Timestamps and Durations share a shape; absent means 0. */
export function msFromTs(t: unknown): number {
  if (!t) return 0;
  const o = t as { seconds?: unknown; nanos?: unknown };
  return num(o.seconds) * 1000 + Math.floor(num(o.nanos) / 1e6);
}

export const durFromMs = tsFromMs;
export const msFromDur = msFromTs;

/** Optional duration: undefined stays undefined so "not set" survives. */
export function optDur(ms: number | undefined): Timestamp | undefined {
  return ms === undefined ? undefined : durFromMs(ms);
}

export function encode(typeName: string, msg: object): Uint8Array {
  return lookupType(typeName)
    .encode(msg as protobuf.Message)
    .finish();
}

export function decode<T = any>(typeName: string, bytes: Uint8Array): T {
  return lookupType(typeName).decode(bytes) as unknown as T;
}

/** google.protobuf.Any wrapper for temporal messages. */
export function toAny(typeName: string, msg: object): { type_url: string; value: Uint8Array } {
  // google.protobuf.Any keeps its snake_case field name in the SDK's descriptors.
  return { type_url: `type.googleapis.com/${typeName}`, value: encode(typeName, msg) };
}
