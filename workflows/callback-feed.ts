// The run's side of its callback: after each turn and at its end, the run's
// new complete-block events (those the callback asked for) go to the task's
// delivery workflow, which it starts with the first of them. The delivery
// workflow outlives the run (ABANDON): a task's end is delivered after it.
import { ParentClosePolicy, getExternalWorkflowHandle, startChild } from '@temporalio/workflow';
import type { BlockEvent, DeliveryItem, TaskInput } from './types';
import { callbackDelivery, callbackWorkflowId, deliverSignal } from './callback-delivery';

/** What the feed keeps across a continue-as-new. */
export interface CallbackProgress {
  /** state.blocks[0..sent) have been handed over (or filtered out). */
  sent: number;
  started: boolean;
}

export interface TaskEnd {
  status: 'completed' | 'failed' | 'cancelled';
  timestamp: string;
  output?: string;
  cost?: string;
  error?: { type: string; message: string };
}

export class CallbackFeed {
  constructor(
    private readonly input: TaskInput & { callback: NonNullable<TaskInput['callback']> },
    readonly progress: CallbackProgress,
  ) {}

  /** Hands over the events not handed over yet; with `end`, the final notification too, and says it was the last. */
  async flush(blocks: readonly BlockEvent[], end?: TaskEnd): Promise<void> {
    const { taskId, session } = this.input;
    const items: DeliveryItem[] = [];
    for (let i = this.progress.sent; i < blocks.length; i++) {
      if (this.wants(blocks[i].type)) items.push({ id: `msg_${taskId}_${i + 1}`, type: blocks[i].type, body: JSON.stringify({ ...blocks[i], task_id: taskId, session }) });
    }
    this.progress.sent = blocks.length;
    if (end && this.wants(end.status)) items.push({ id: `msg_${taskId}_end`, type: `task.${end.status}`, body: JSON.stringify(finalNotification(taskId, end)) });
    if (!items.length && !(end && this.progress.started)) return;
    const id = callbackWorkflowId(taskId);
    if (!this.progress.started) {
      await startChild(callbackDelivery, {
        workflowId: id,
        args: [{ taskId, account: this.input.account, callback: this.input.callback }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
      this.progress.started = true;
    }
    await getExternalWorkflowHandle(id).signal(deliverSignal, { items, end: end !== undefined });
  }

  private wants(type: string): boolean {
    const events = this.input.callback.events;
    return !events || events.includes(type);
  }
}

/** The task's last delivery (SPEC 6.4): what happened, when, and its result or error. */
function finalNotification(taskId: string, end: TaskEnd): Record<string, unknown> {
  const base = { type: `task.${end.status}`, taskId, status: end.status, timestamp: end.timestamp };
  return end.status === 'completed' ? { ...base, result: { output: end.output ?? '', cost: end.cost ?? null } } : { ...base, error: end.error ?? null };
}
