// The run's side of its callback: the task's delivery workflow is started with
// the run (so it can watch a task that never gets to send its end), and after
// each turn and at its end the run's new complete-block events (those the
// callback asked for) go to it. The delivery workflow outlives the run
// (ABANDON): a task's end is delivered after it.
import { CancellationScope, ParentClosePolicy, getExternalWorkflowHandle, startChild } from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { BlockEvent, CallbackConfig, DeliveryItem, TaskInput } from './types';
import { callbackDelivery } from './callback-delivery';
import { endDelivery, TaskEnd } from './callback-end';
import { callbackWorkflowId, deliverSignal } from './definitions';

/** What the feed keeps across a continue-as-new. */
export interface CallbackProgress {
  /** state.blocks[0..sent) have been handed over (or filtered out). */
  sent: number;
  started: boolean;
  /** After a rewind: its relay epoch, in the webhook-ids of the new branch's deliveries. */
  epoch?: number;
}

export class CallbackFeed {
  constructor(
    /** The task and its callback (input.request.callback). */
    private readonly input: Pick<TaskInput, 'taskId' | 'account' | 'session'> & { callback: CallbackConfig },
    readonly progress: CallbackProgress,
  ) {}

  /**
   * Starts the task's delivery workflow when the run starts, outside the run's cancellation scope:
   * a child is cancelled with the scope it was started in, and cancelling a task must not cancel
   * the delivery of its end.
   */
  async open(): Promise<void> {
    if (!this.progress.started) await CancellationScope.nonCancellable(() => this.start());
  }

  private async start(): Promise<void> {
    const { taskId, account, callback } = this.input;
    try {
      await startChild(callbackDelivery, {
        workflowId: callbackWorkflowId(taskId),
        args: [{ taskId, account, callback }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    } catch (err) {
      // A task reset in the Web UI runs again from before this point while its delivery workflow
      // still runs: that one takes this run's events (a closed one is started anew).
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    this.progress.started = true;
  }

  /** Hands over the events not handed over yet; with `end`, the final notification too, and says it was the last. */
  async flush(blocks: readonly BlockEvent[], end?: TaskEnd): Promise<void> {
    const { taskId, session, callback } = this.input;
    const items: DeliveryItem[] = [];
    for (let i = this.progress.sent; i < blocks.length; i++) {
      if (this.wants(blocks[i].type))
        items.push({
          id: `msg_${taskId}${this.progress.epoch ? `_r${this.progress.epoch}` : ''}_${i + 1}`,
          type: blocks[i].type,
          body: JSON.stringify({ ...blocks[i], task_id: taskId, session }),
        });
    }
    this.progress.sent = blocks.length;
    const last = end && endDelivery(taskId, callback, end, this.progress.epoch);
    if (last) items.push(last);
    if (!items.length && !(end && this.progress.started)) return;
    // Runs from before open() start it here, with their first events (in the scope they did).
    if (!this.progress.started) await this.start();
    await getExternalWorkflowHandle(callbackWorkflowId(taskId)).signal(deliverSignal, {
      items,
      end: end !== undefined,
    });
  }

  /**
   * The run was rewound: the new branch's deliveries get webhook-ids of their own (receivers that
   * drop repeats would drop them), and go to a delivery workflow started again if the first one
   * has ended with the task's first end (a running one is kept: start() finds it).
   */
  rewound(epoch: number): void {
    this.progress.epoch = epoch;
    this.progress.started = false;
  }

  private wants(type: string): boolean {
    const events = this.input.callback.events;
    return !events || events.includes(type);
  }
}
