// Payload limits of a completed workflow task, as the real history service applies
// them: a command or protocol message carrying more than `limit.blobSize.error`
// bytes (memos: `limit.memoSize.error`) fails the task with the command's cause and
// terminates the run, both saying "<Cause>: <Field> exceeds size limit.". The cause
// and wording of each field are the server's own, slips included (an oversized
// workflow result is reported as BadScheduleActivityAttributes).
import type { Engine } from './engine';
import type { Execution, Payload } from './state';
import { CommandType, EventType, WftFailedCause } from '../proto';
import { terminateRun } from './lifecycle';
import { failAttachedQueries } from './queries';
import {
  HISTORY_SERVICE_IDENTITY,
  anySize,
  failureSize,
  memoSize,
  overLimit,
  payloadDataMapSize,
  payloadsMapSize,
  payloadsSize,
  serverFailure,
} from './limits';

type Attrs = Record<string, any>;
/** A field's size, the server's words when it is too large, and which limit applies. */
type Check = [size: (a: Attrs, e: Execution) => number, message: string, kind?: 'memo'];

interface Rule {
  attrs: string;
  cause: string;
  checks: Check[];
}

const mergedMemo = (a: Attrs, e: Execution) =>
  memoSize({ fields: { ...(e.memo ?? {}), ...(a.upsertedMemo?.fields ?? {}) } as Record<string, Payload> });

const RULES: Record<number, Rule> = {
  [CommandType.SCHEDULE_ACTIVITY_TASK]: {
    attrs: 'scheduleActivityTaskCommandAttributes',
    cause: 'BAD_SCHEDULE_ACTIVITY_ATTRIBUTES',
    checks: [[(a) => payloadsSize(a.input), 'ScheduleActivityTaskCommandAttributes.Input exceeds size limit.']],
  },
  [CommandType.COMPLETE_WORKFLOW_EXECUTION]: {
    attrs: 'completeWorkflowExecutionCommandAttributes',
    cause: 'BAD_SCHEDULE_ACTIVITY_ATTRIBUTES',
    checks: [[(a) => payloadsSize(a.result), 'CompleteWorkflowExecutionCommandAttributes.Result exceeds size limit.']],
  },
  [CommandType.FAIL_WORKFLOW_EXECUTION]: {
    attrs: 'failWorkflowExecutionCommandAttributes',
    cause: 'BAD_FAIL_WORKFLOW_EXECUTION_ATTRIBUTES',
    checks: [[(a) => failureSize(a.failure), 'FailWorkflowExecutionCommandAttributes.Failure exceeds size limit.']],
  },
  [CommandType.RECORD_MARKER]: {
    attrs: 'recordMarkerCommandAttributes',
    cause: 'BAD_RECORD_MARKER_ATTRIBUTES',
    checks: [[(a) => payloadsMapSize(a.details), 'RecordMarkerCommandAttributes.Details exceeds size limit.']],
  },
  [CommandType.CONTINUE_AS_NEW_WORKFLOW_EXECUTION]: {
    attrs: 'continueAsNewWorkflowExecutionCommandAttributes',
    cause: 'BAD_CONTINUE_AS_NEW_ATTRIBUTES',
    checks: [
      [(a) => payloadsSize(a.input), 'ContinueAsNewWorkflowExecutionCommandAttributes. Input exceeds size limit.'],
      [(a) => memoSize(a.memo), 'ContinueAsNewWorkflowExecutionCommandAttributes. Memo exceeds size limit.', 'memo'],
    ],
  },
  [CommandType.START_CHILD_WORKFLOW_EXECUTION]: {
    attrs: 'startChildWorkflowExecutionCommandAttributes',
    cause: 'BAD_START_CHILD_EXECUTION_ATTRIBUTES',
    checks: [
      [(a) => payloadsSize(a.input), 'StartChildWorkflowExecutionCommandAttributes. Input exceeds size limit.'],
      [(a) => memoSize(a.memo), 'StartChildWorkflowExecutionCommandAttributes.Memo exceeds size limit.', 'memo'],
    ],
  },
  [CommandType.SIGNAL_EXTERNAL_WORKFLOW_EXECUTION]: {
    attrs: 'signalExternalWorkflowExecutionCommandAttributes',
    cause: 'BAD_SIGNAL_WORKFLOW_EXECUTION_ATTRIBUTES',
    checks: [
      [(a) => payloadsSize(a.input), 'SignalExternalWorkflowExecutionCommandAttributes.Input exceeds size limit.'],
    ],
  },
  [CommandType.UPSERT_WORKFLOW_SEARCH_ATTRIBUTES]: {
    attrs: 'upsertWorkflowSearchAttributesCommandAttributes',
    cause: 'BAD_SEARCH_ATTRIBUTES',
    checks: [
      [
        (a) => payloadDataMapSize(a.searchAttributes?.indexedFields),
        'UpsertWorkflowSearchAttributesCommandAttributes exceeds size limit.',
      ],
    ],
  },
  [CommandType.MODIFY_WORKFLOW_PROPERTIES]: {
    attrs: 'modifyWorkflowPropertiesCommandAttributes',
    cause: 'BAD_MODIFY_WORKFLOW_PROPERTIES_ATTRIBUTES',
    checks: [
      [
        (a) => payloadDataMapSize(a.upsertedMemo?.fields),
        'ModifyWorkflowPropertiesCommandAttributes exceeds size limit.',
      ],
      [mergedMemo, 'ModifyWorkflowPropertiesCommandAttributes. Memo exceeds size limit.', 'memo'],
    ],
  },
};

export interface SizeViolation {
  cause: number;
  /** "<Cause>: <what>", the task failure's message and the termination's reason. */
  message: string;
}

/** The server's name of an enum value (Go's String()): BAD_SEARCH_ATTRIBUTES -> BadSearchAttributes. */
function goName(constant: string): string {
  return constant
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

function violation(cause: string, what: string): SizeViolation {
  return { cause: WftFailedCause[cause], message: `${goName(cause)}: ${what}` };
}

/** The first of a command's payload fields past its limit, if any. */
export function commandSizeViolation(eng: Engine, e: Execution, c: Attrs): SizeViolation | undefined {
  const rule = RULES[c.commandType];
  if (!rule) return undefined;
  const attrs = c[rule.attrs] ?? {};
  const ctx = {
    namespace: e.namespace,
    workflowId: e.workflowId,
    runId: e.runId,
    operation: goName(commandName(c.commandType)),
  };
  for (const [size, what, kind] of rule.checks) {
    if (overLimit(eng, size(attrs, e), ctx, kind)) return violation(rule.cause, what);
  }
  return undefined;
}

/** A protocol message (an update's acceptance, rejection or response) past the blob limit, if any. */
export function messageSizeViolation(eng: Engine, e: Execution, messages: Attrs[]): SizeViolation | undefined {
  for (const m of messages) {
    const type = String(m.body?.type_url ?? '').replace(/^.*\//, '');
    if (
      overLimit(eng, anySize(m.body), {
        namespace: e.namespace,
        workflowId: e.workflowId,
        runId: e.runId,
        operation: type,
      })
    ) {
      return violation('BAD_UPDATE_WORKFLOW_EXECUTION_MESSAGE', `Message type ${type} exceeds size limit.`);
    }
  }
  return undefined;
}

function commandName(type: number): string {
  return Object.keys(CommandType).find((k) => CommandType[k] === type) ?? 'UNSPECIFIED';
}

/**
 * The started task fails with the violation's cause and the run is terminated right
 * after it, by the history service; no task is scheduled again.
 */
export function failTaskAndTerminate(eng: Engine, e: Execution, v: SizeViolation, identity: string | undefined): void {
  const wft = e.wft!;
  eng.appendEvent(
    e,
    eng.event(EventType.WORKFLOW_TASK_FAILED, 'workflowTaskFailedEventAttributes', {
      scheduledEventId: wft.scheduledEventId,
      startedEventId: wft.startedEventId,
      cause: v.cause,
      failure: serverFailure(v.message, false),
      identity,
    }),
  );
  failAttachedQueries(eng, e, wft.scheduledEventId);
  e.wft = undefined; // failed already: the termination must not fail it again
  terminateRun(eng, e, v.message, undefined, HISTORY_SERVICE_IDENTITY);
}
