// What the server checks and fills in on ScheduleActivityTask and
// RequestCancelActivityTask commands before it applies them.
import type { Execution } from './state';
import { WftFailedCause, msFromDur } from '../proto';
import { BadCommand } from './commands';
import { normalizeRetryPolicy } from './retry';

const BAD = WftFailedCause.BAD_SCHEDULE_ACTIVITY_ATTRIBUTES;

export function validateScheduleActivity(e: Execution, a: any, seenIds: Set<string>): void {
  if (!a.activityId) throw new BadCommand(BAD, 'ActivityId is not set on command.');
  if (!a.activityType?.name) throw new BadCommand(BAD, 'ActivityType is not set on command.');
  if (!a.taskQueue?.name && !e.taskQueue) throw new BadCommand(BAD, 'TaskQueue is not set on command.');
  const open = Object.values(e.activities).some((x) => x.activityId === a.activityId);
  if (open || seenIds.has(a.activityId)) {
    throw new BadCommand(
      WftFailedCause.SCHEDULE_ACTIVITY_DUPLICATE_ID,
      `Activity ID ${a.activityId} is already used by an open activity.`,
    );
  }
  seenIds.add(a.activityId);
  if (!(msFromDur(a.scheduleToCloseTimeout) > 0) && !(msFromDur(a.startToCloseTimeout) > 0)) {
    throw new BadCommand(BAD, 'A valid StartToClose or ScheduleToCloseTimeout is not set on command.');
  }
  try {
    if (a.retryPolicy) normalizeRetryPolicy(a.retryPolicy, 'RetryPolicy');
  } catch (err) {
    throw new BadCommand(BAD, (err as Error).message);
  }
}

/**
 * The real server's deduction of missing timeouts (ms, 0 = none): schedule-to-close
 * bounds the others, a missing schedule-to-close becomes the run timeout, everything
 * is bounded by the run timeout, and heartbeat by start-to-close.
 */
export function deduceTimeouts(e: Execution, a: any) {
  let s2c = msFromDur(a.scheduleToCloseTimeout);
  let s2s = msFromDur(a.scheduleToStartTimeout);
  let st2c = msFromDur(a.startToCloseTimeout);
  let hb = msFromDur(a.heartbeatTimeout);
  const run = e.runTimeoutMs;
  if (s2c > 0) {
    s2s = s2s > 0 ? Math.min(s2s, s2c) : s2c;
    st2c = st2c > 0 ? Math.min(st2c, s2c) : s2c;
  } else {
    s2c = run;
    if (!(s2s > 0)) s2s = run;
  }
  if (run > 0) {
    s2c = s2c > 0 ? Math.min(s2c, run) : run;
    s2s = s2s > 0 ? Math.min(s2s, run) : run;
    st2c = Math.min(st2c, run);
  }
  hb = Math.min(hb, st2c);
  return { s2c, s2s, st2c, hb };
}

/** The activity finished while the cancelling task ran; its outcome waits in the buffer. */
export function finishBuffered(e: Execution, scheduledEventId: number): boolean {
  return e.buffered.some((ev) => {
    const attrs =
      ev.activityTaskCompletedEventAttributes ??
      ev.activityTaskFailedEventAttributes ??
      ev.activityTaskTimedOutEventAttributes ??
      ev.activityTaskCanceledEventAttributes;
    return attrs?.scheduledEventId === scheduledEventId;
  });
}

export function validateCancelActivity(e: Execution, a: any): void {
  if (!e.activities[a.scheduledEventId] && !finishBuffered(e, a.scheduledEventId)) {
    throw new BadCommand(
      WftFailedCause.BAD_REQUEST_CANCEL_ACTIVITY_ATTRIBUTES,
      `invalid history builder state for action: request-cancel-activity (scheduledEventId ${a.scheduledEventId})`,
    );
  }
}
