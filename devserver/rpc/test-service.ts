// temporal.api.testservice.v1.TestService: time-skipping controls used by
// TestWorkflowEnvironment.createTimeSkipping().
import type { Clock } from '../clock';
import type { Handlers } from './grpc-service';
import { failedPrecondition } from '../errors';
import { msFromDur, msFromTs, tsFromMs } from '../proto';

export function testHandlers(clock: Clock): Handlers {
  const sleepUntil = (at: number) => new Promise<void>((resolve) => clock.at(at, resolve));
  return {
    lockTimeSkipping: () => {
      clock.lockExplicit();
      return {};
    },
    unlockTimeSkipping: () => {
      if (clock.lockCount <= 0) throw failedPrecondition('Time skipping is not locked.');
      clock.unlock();
      return {};
    },
    sleep: async (req) => {
      await sleepUntil(clock.now() + msFromDur(req.duration));
      return {};
    },
    sleepUntil: async (req) => {
      const at = msFromTs(req.timestamp);
      if (at > clock.now()) await sleepUntil(at);
      return {};
    },
    unlockTimeSkippingWithSleep: async (req) => {
      // Hold our own lock across the sleep's end so time stops at its deadline.
      const done = sleepUntil(clock.now() + msFromDur(req.duration));
      if (clock.lockCount > 0) clock.unlock();
      await done;
      clock.lockExplicit();
      return {};
    },
    getCurrentTime: () => ({ time: tsFromMs(clock.now()) }),
  };
}
