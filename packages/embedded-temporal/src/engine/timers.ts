// User timers (StartTimer / CancelTimer commands).
import type { Engine } from './engine';
import type { Execution } from './state';
import { EventType, WftFailedCause, msFromDur } from '../proto';
import { BadCommand } from './commands';
import { scheduleWorkflowTask } from './workflow-tasks';

export function validateStartTimer(e: Execution, a: any, seen: Set<string>): void {
  if (!a.timerId) throw new BadCommand(WftFailedCause.BAD_START_TIMER_ATTRIBUTES, 'TimerId is not set on command.');
  if (!(msFromDur(a.startToFireTimeout) > 0)) {
    throw new BadCommand(
      WftFailedCause.BAD_START_TIMER_ATTRIBUTES,
      'A valid StartToFireTimeout is not set on command.',
    );
  }
  if (e.timers[a.timerId] || seen.has(a.timerId)) {
    throw new BadCommand(
      WftFailedCause.START_TIMER_DUPLICATE_ID,
      `invalid history builder state for action: add-timer-started-event, timer ID ${a.timerId} already exists`,
    );
  }
  seen.add(a.timerId);
}

export function startTimer(eng: Engine, e: Execution, a: any, completedEventId: number): void {
  const startedEventId = eng.appendEvent(
    e,
    eng.event(EventType.TIMER_STARTED, 'timerStartedEventAttributes', {
      timerId: a.timerId,
      startToFireTimeout: a.startToFireTimeout,
      workflowTaskCompletedEventId: completedEventId,
    }),
  );
  const fireTime = eng.now() + msFromDur(a.startToFireTimeout);
  e.timers[a.timerId] = { timerId: a.timerId, startedEventId, fireTime };
  armTimer(eng, e, a.timerId);
}

export function armTimer(eng: Engine, e: Execution, timerId: string): void {
  const t = e.timers[timerId];
  eng.setTimer(e, `timer:${timerId}`, t.fireTime, (run) => {
    const cur = run.timers[timerId];
    if (!cur || cur.startedEventId !== t.startedEventId || !eng.isOpen(run)) return;
    delete run.timers[timerId];
    eng.addWorkflowEvent(
      run,
      eng.event(EventType.TIMER_FIRED, 'timerFiredEventAttributes', { timerId, startedEventId: t.startedEventId }),
    );
    scheduleWorkflowTask(eng, run);
  });
}

/** A timer that fired while the cancelling task ran: its TimerFired waits in the buffer. */
function bufferedFire(e: Execution, timerId: string): number {
  return e.buffered.findIndex(
    (ev) => ev.eventType === EventType.TIMER_FIRED && ev.timerFiredEventAttributes?.timerId === timerId,
  );
}

export function validateCancelTimer(e: Execution, a: any): void {
  if (!a.timerId || (!e.timers[a.timerId] && bufferedFire(e, a.timerId) < 0)) {
    throw new BadCommand(
      WftFailedCause.BAD_CANCEL_TIMER_ATTRIBUTES,
      `invalid history builder state for action: cancel-timer, timer ID ${a.timerId} not found`,
    );
  }
}

export function cancelTimer(eng: Engine, e: Execution, a: any, completedEventId: number, identity?: string): void {
  let t = e.timers[a.timerId];
  if (!t) {
    // Like the real server: the cancel wins over a fire the workflow has not seen yet.
    const i = bufferedFire(e, a.timerId);
    if (i < 0) return;
    const [fired] = e.buffered.splice(i, 1);
    t = { timerId: a.timerId, startedEventId: fired.timerFiredEventAttributes.startedEventId, fireTime: 0 };
  }
  delete e.timers[a.timerId];
  eng.clearTimer(e, `timer:${a.timerId}`);
  eng.appendEvent(
    e,
    eng.event(EventType.TIMER_CANCELED, 'timerCanceledEventAttributes', {
      timerId: a.timerId,
      startedEventId: t.startedEventId,
      workflowTaskCompletedEventId: completedEventId,
      identity,
    }),
  );
}
