// Applies the commands of a completed workflow task, in order, writing their
// events. Side effects on other runs (child start, external signal/cancel) are
// recorded as "initiated" here and carried out by effects.ts right after.
import type { Engine } from './engine';
import type { Execution } from './state';
import { CommandType, EventType, WftFailedCause } from '../proto';
import {
  scheduleActivity,
  requestCancelActivity,
  validateScheduleActivity,
  validateCancelActivity,
} from './activities';
import { startTimer, cancelTimer, validateStartTimer, validateCancelTimer } from './timers';
import { completeRun, failRun, cancelRun, continueAsNew } from './lifecycle';
import { initiateChild, initiateSignalExternal, initiateCancelExternal, validateStartChild } from './effects';
import { applyProtocolMessage } from './updates';
import { upsertSearchAttributes, upsertMemo, validateUpsert } from './search-attributes';
import { commandSizeViolation } from './command-limits';

const CLOSE = new Set([
  CommandType.COMPLETE_WORKFLOW_EXECUTION,
  CommandType.FAIL_WORKFLOW_EXECUTION,
  CommandType.CANCEL_WORKFLOW_EXECUTION,
  CommandType.CONTINUE_AS_NEW_WORKFLOW_EXECUTION,
]);

export function isCloseCommand(c: any): boolean {
  return CLOSE.has(c.commandType);
}

/** Thrown while applying a command the server must refuse; fails the workflow task. */
export class BadCommand extends Error {
  constructor(
    readonly reason: number,
    message: string,
    /** The run is terminated after the task fails (a payload past its size limit, command-limits.ts). */
    readonly terminate = false,
  ) {
    super(message);
  }
}

/**
 * Applies a completed workflow task's commands. Returns the scheduled event ids
 * of activities the worker asked to run eagerly (on its own task queue): the
 * caller hands them out in the completion's response instead of queueing them.
 */
export function applyCommands(
  eng: Engine,
  e: Execution,
  commands: any[],
  completedEventId: number,
  messages: Map<string, any>,
  identity?: string,
): number[] {
  const eager: number[] = [];
  // Outcomes the real server buffers while it applies commands: written after the
  // command events, but before a close command's event.
  const buffered: (() => void)[] = [];
  const flush = () => buffered.splice(0).forEach((write) => write());
  const ctx: ApplyContext = { completedEventId, messages, identity, eager, buffered };
  for (const c of commands) {
    if (!eng.isOpen(e)) break;
    if (CLOSE.has(c.commandType)) flush();
    const metadata = c.userMetadata;
    const before = e.nextEventId;
    applyCommand(eng, e, c, ctx);
    if (metadata && e.nextEventId > before) {
      const ev = e.history.find((h) => h.eventId === before);
      if (ev) ev.userMetadata = metadata;
    }
  }
  if (eng.isOpen(e)) flush();
  return eager;
}

/** What applying one command needs of the task's completion, and where it leaves eager activities and buffered outcomes. */
interface ApplyContext {
  completedEventId: number;
  messages: Map<string, any>;
  identity?: string;
  eager: number[];
  buffered: (() => void)[];
}

/** Applies one command, writing its events. */
// eslint-disable-next-line max-lines-per-function -- a switch with one case per command type of Temporal's API
function applyCommand(eng: Engine, e: Execution, c: any, ctx: ApplyContext): void {
  const { completedEventId, messages, identity, eager, buffered } = ctx;
  switch (c.commandType) {
    case CommandType.SCHEDULE_ACTIVITY_TASK: {
      const a = c.scheduleActivityTaskCommandAttributes ?? {};
      // Like the real server, eager execution is granted whatever the activity's task
      // queue: the SDKs only ask for it on their own queue.
      const wantsEager = a.requestEagerExecution === true;
      const id = scheduleActivity(eng, e, a, completedEventId, wantsEager);
      if (wantsEager) eager.push(id);
      break;
    }
    case CommandType.REQUEST_CANCEL_ACTIVITY_TASK: {
      const outcome = requestCancelActivity(
        eng,
        e,
        c.requestCancelActivityTaskCommandAttributes ?? {},
        completedEventId,
        identity,
      );
      if (outcome) buffered.push(outcome);
      break;
    }
    case CommandType.START_TIMER:
      startTimer(eng, e, c.startTimerCommandAttributes ?? {}, completedEventId);
      break;
    case CommandType.CANCEL_TIMER:
      cancelTimer(eng, e, c.cancelTimerCommandAttributes ?? {}, completedEventId, identity);
      break;
    case CommandType.COMPLETE_WORKFLOW_EXECUTION:
      completeRun(eng, e, c.completeWorkflowExecutionCommandAttributes?.result, completedEventId);
      break;
    case CommandType.FAIL_WORKFLOW_EXECUTION:
      failRun(eng, e, c.failWorkflowExecutionCommandAttributes?.failure ?? {}, completedEventId);
      break;
    case CommandType.CANCEL_WORKFLOW_EXECUTION:
      cancelRun(eng, e, c.cancelWorkflowExecutionCommandAttributes?.details, completedEventId);
      break;
    case CommandType.CONTINUE_AS_NEW_WORKFLOW_EXECUTION:
      continueAsNew(eng, e, c.continueAsNewWorkflowExecutionCommandAttributes ?? {}, completedEventId);
      break;
    case CommandType.RECORD_MARKER: {
      const a = c.recordMarkerCommandAttributes ?? {};
      eng.appendEvent(
        e,
        eng.event(EventType.MARKER_RECORDED, 'markerRecordedEventAttributes', {
          markerName: a.markerName,
          details: a.details,
          workflowTaskCompletedEventId: completedEventId,
          header: a.header,
          failure: a.failure,
        }),
      );
      break;
    }
    case CommandType.START_CHILD_WORKFLOW_EXECUTION:
      initiateChild(eng, e, c.startChildWorkflowExecutionCommandAttributes ?? {}, completedEventId);
      break;
    case CommandType.SIGNAL_EXTERNAL_WORKFLOW_EXECUTION:
      initiateSignalExternal(eng, e, c.signalExternalWorkflowExecutionCommandAttributes ?? {}, completedEventId);
      break;
    case CommandType.REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION:
      initiateCancelExternal(eng, e, c.requestCancelExternalWorkflowExecutionCommandAttributes ?? {}, completedEventId);
      break;
    case CommandType.UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
      upsertSearchAttributes(eng, e, c.upsertWorkflowSearchAttributesCommandAttributes ?? {}, completedEventId);
      break;
    case CommandType.MODIFY_WORKFLOW_PROPERTIES:
      upsertMemo(eng, e, c.modifyWorkflowPropertiesCommandAttributes ?? {}, completedEventId);
      break;
    case CommandType.PROTOCOL_MESSAGE:
      applyProtocolMessage(eng, e, messages, c.protocolMessageCommandAttributes?.messageId, completedEventId);
      break;
    default:
      throw new BadCommand(0, `command type ${c.commandType} is not supported by the embedded dev server`);
  }
}

/** Validates every command before any is applied, so a bad one fails the task atomically. */
export function validateCommands(eng: Engine, e: Execution, commands: any[]): void {
  const seen: SeenIds = { activityIds: new Set<string>(), timerIds: new Set<string>() };
  let closed = false;
  for (const c of commands) {
    if (closed)
      throw new BadCommand(WftFailedCause.UNHANDLED_COMMAND, 'commands follow a command that closed the workflow');
    if (validateCommand(eng, e, c, seen)) closed = true;
    // Sizes are checked after the command's other attributes, as on the real server.
    const tooLarge = commandSizeViolation(eng, e, c);
    if (tooLarge) throw new BadCommand(tooLarge.cause, tooLarge.message, true);
    if (c.commandType === CommandType.CONTINUE_AS_NEW_WORKFLOW_EXECUTION) closed = true;
  }
}

/** The activity and timer ids the task's earlier commands used. */
interface SeenIds {
  activityIds: Set<string>;
  timerIds: Set<string>;
}

/** Checks one command's attributes; true when it completes, fails or cancels the workflow. */
// eslint-disable-next-line max-lines-per-function -- a switch with one case per command type of Temporal's API
function validateCommand(eng: Engine, e: Execution, c: any, seen: SeenIds): boolean {
  const { activityIds, timerIds } = seen;
  switch (c.commandType) {
    case CommandType.SCHEDULE_ACTIVITY_TASK:
      validateScheduleActivity(e, c.scheduleActivityTaskCommandAttributes ?? {}, activityIds);
      break;
    case CommandType.REQUEST_CANCEL_ACTIVITY_TASK:
      validateCancelActivity(e, c.requestCancelActivityTaskCommandAttributes ?? {});
      break;
    case CommandType.START_TIMER:
      validateStartTimer(e, c.startTimerCommandAttributes ?? {}, timerIds);
      break;
    case CommandType.CANCEL_TIMER:
      if (!timerIds.has(c.cancelTimerCommandAttributes?.timerId))
        validateCancelTimer(e, c.cancelTimerCommandAttributes ?? {});
      break;
    case CommandType.START_CHILD_WORKFLOW_EXECUTION:
      validateStartChild(eng, e, c.startChildWorkflowExecutionCommandAttributes ?? {});
      break;
    case CommandType.UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
      validateUpsert(eng, e, c.upsertWorkflowSearchAttributesCommandAttributes ?? {});
      break;
    case CommandType.CONTINUE_AS_NEW_WORKFLOW_EXECUTION: {
      const a = c.continueAsNewWorkflowExecutionCommandAttributes ?? {};
      if (a.searchAttributes) validateUpsert(eng, e, { searchAttributes: a.searchAttributes });
      break;
    }
    case CommandType.SIGNAL_EXTERNAL_WORKFLOW_EXECUTION:
      if (!c.signalExternalWorkflowExecutionCommandAttributes?.execution?.workflowId) {
        throw new BadCommand(
          WftFailedCause.BAD_SIGNAL_WORKFLOW_EXECUTION_ATTRIBUTES,
          'WorkflowId is not set on command.',
        );
      }
      break;
    case CommandType.REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION:
      if (!c.requestCancelExternalWorkflowExecutionCommandAttributes?.workflowId) {
        throw new BadCommand(
          WftFailedCause.BAD_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_ATTRIBUTES,
          'WorkflowId is not set on command.',
        );
      }
      break;
    case CommandType.COMPLETE_WORKFLOW_EXECUTION:
    case CommandType.FAIL_WORKFLOW_EXECUTION:
    case CommandType.CANCEL_WORKFLOW_EXECUTION:
      return true;
    case CommandType.RECORD_MARKER:
      if (!c.recordMarkerCommandAttributes?.markerName)
        throw new BadCommand(WftFailedCause.BAD_RECORD_MARKER_ATTRIBUTES, 'MarkerName is not set on command.');
      break;
    case CommandType.MODIFY_WORKFLOW_PROPERTIES:
    case CommandType.PROTOCOL_MESSAGE:
      break;
    default:
      throw new BadCommand(
        WftFailedCause.UNSPECIFIED,
        `command type ${c.commandType} is not supported by the embedded dev server`,
      );
  }
  return false;
}
