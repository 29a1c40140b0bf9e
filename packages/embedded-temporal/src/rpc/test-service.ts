// temporal.api.testservice.v1.TestService: time-skipping controls used by
// TestWorkflowEnvironment.createTimeSkipping(). Semantics follow the Java test
// server: one lock counter shared by clients and outstanding work; time skips to
// the next timer only while it is zero.
import type { Clock } from '../clock';
import type { Handlers } from './grpc-service';
import { failedPrecondition } from '../errors';
import { msFromDur, msFromTs, tsFromMs } from '../proto';

export function testHandlers(clock: Clock): Handlers {
  /** Resolves once virtual time reaches `at`; `onDue` runs inside the timer, before time moves on. */
  const until = (at: number, onDue?: () => void) =>
    new Promise<void>((resolve) =>
      clock.at(at, () => {
        onDue?.();
        resolve();
      }),
    );
  return {
    lockTimeSkipping: () => {
      clock.lockExplicit();
      return {};
    },
    unlockTimeSkipping: () => {
      if (clock.lockCount <= 0) throw failedPrecondition('Time skipping is not locked.');
      clock.unlockExplicit();
      return {};
    },
    // Plain sleeps change no lock: they wait for virtual time, skipped or not.
    sleep: async (req) => {
      await until(clock.now() + msFromDur(req.duration));
      return {};
    },
    sleepUntil: async (req) => {
      await until(msFromTs(req.timestamp));
      return {};
    },
    unlockTimeSkippingWithSleep: async (req) => {
      // Unlock, let time run to the deadline, and lock again right inside the
      // timer so time stops exactly there. With nothing locked (e.g. a result()
      // already unlocked concurrently) the Java server fails the call; we just
      // sleep and leave the lock count as it was, which keeps it balanced.
      if (clock.lockCount <= 0) {
        await until(clock.now() + msFromDur(req.duration));
        return {};
      }
      const done = until(clock.now() + msFromDur(req.duration), () => clock.lockExplicit());
      clock.unlockExplicit();
      await done;
      return {};
    },
    getCurrentTime: () => ({ time: tsFromMs(clock.now()) }),
  };
}
