// The idle close a session is opened with (sessionRef): SESSION_IDLE_CLOSE_MS, or for the session
// the service makes for a run that named none ONE_OFF_SESSION_IDLE_CLOSE_MS, never later.
import { sessionRef } from '../../../src/common/sessions/session-signals';

const config = (idle: number, oneOff: number) => ({
  TEMPORAL_TASK_QUEUE: 'q',
  SESSION_IDLE_CLOSE_MS: idle,
  ONE_OFF_SESSION_IDLE_CLOSE_MS: oneOff,
  RUN_WATCH_MS: 60_000,
});
const idleOf = (idle: number, oneOff: number, opts?: { oneOff?: boolean }) =>
  sessionRef(config(idle, oneOff), 'a', 's', opts).idleCloseMs;

test('a named session keeps SESSION_IDLE_CLOSE_MS; a one-off one closes after the shorter of the two', () => {
  expect(idleOf(1_800_000, 60_000)).toBe(1_800_000);
  expect(idleOf(1_800_000, 60_000, { oneOff: true })).toBe(60_000);
  expect(idleOf(1500, 60_000, { oneOff: true })).toBe(1500);
});

test('sessions that never close stay so; ONE_OFF 0 means SESSION_IDLE_CLOSE_MS', () => {
  expect(idleOf(0, 60_000, { oneOff: true })).toBe(0);
  expect(idleOf(1_800_000, 0, { oneOff: true })).toBe(1_800_000);
});
