// Overlap policies: given the buffered starts and whether a tracked run is still
// going, decide what starts now, what waits, what is skipped and whether the
// running workflow must be cancelled or terminated first. Pure, so the rules
// can be read (and tested) apart from the engine.
import { OverlapPolicy } from '../proto';
import type { BufferedStart } from './scheduler-state';

export interface BufferPlan {
  /** ALLOW_ALL starts: all of them start now, running or not. */
  overlapping: BufferedStart[];
  /** At most one start that must not overlap another run. */
  nonOverlapping?: BufferedStart;
  /** What stays buffered for later. */
  remaining: BufferedStart[];
  needCancel: boolean;
  needTerminate: boolean;
  overlapSkipped: number;
}

export function planBuffer(buffer: BufferedStart[], isRunning: boolean, resolve: (p: number) => number): BufferPlan {
  const plan: BufferPlan = {
    overlapping: [],
    remaining: [],
    needCancel: false,
    needTerminate: false,
    overlapSkipped: 0,
  };
  for (const start of buffer) {
    // Resolved here, not when buffered, so that a policy update also governs waiting starts.
    const policy = resolve(start.overlapPolicy);
    if (policy === OverlapPolicy.ALLOW_ALL) {
      plan.overlapping.push(start);
      continue;
    }
    if (!isRunning && !plan.nonOverlapping) {
      plan.nonOverlapping = start;
      continue;
    }
    switch (policy) {
      case OverlapPolicy.BUFFER_ONE:
        if (plan.remaining.length === 0) plan.remaining.push(start);
        else plan.overlapSkipped++;
        break;
      case OverlapPolicy.BUFFER_ALL:
        plan.remaining.push(start);
        break;
      case OverlapPolicy.CANCEL_OTHER:
      case OverlapPolicy.TERMINATE_OTHER:
        if (isRunning) {
          // The running one goes first; this start waits until it has closed.
          if (policy === OverlapPolicy.CANCEL_OTHER) plan.needCancel = true;
          else plan.needTerminate = true;
          plan.remaining.push(start);
        } else {
          // Only the start chosen above would overlap, and it has not started: this one replaces it.
          plan.nonOverlapping = start;
        }
        break;
      default: // SKIP
        plan.overlapSkipped++;
    }
  }
  // Anything started now would be cancelled/terminated right away along with the running run.
  if (plan.needCancel || plan.needTerminate) plan.overlapping = [];
  return plan;
}
