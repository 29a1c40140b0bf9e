// Schedules API (placeholder until the scheduler lands: every schedule RPC
// answers UNIMPLEMENTED naming the method, through grpc-service's default).
import type { Engine } from '../engine/engine';
import type { Handlers } from '../rpc/grpc-service';

export interface Scheduler {
  stop(): void;
}

export function startScheduler(_eng: Engine): Scheduler {
  return { stop: () => undefined };
}

export function scheduleHandlers(_eng: Engine, _s: Scheduler): Handlers {
  return {};
}
