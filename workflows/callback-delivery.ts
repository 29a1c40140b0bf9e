// A task's callback deliveries: one workflow per task (`callbacks:<task id>`),
// started by the task's run when it has something to deliver and left running
// after the task ends (parent close policy ABANDON) until every delivery is
// done. The run signals it each batch of events, in order; it delivers them
// one at a time, in that order, each as an activity whose retries follow the
// delivery schedule. A receiver's 410 stops the task's deliveries; a delivery
// whose retries run out is recorded as failed and the next one goes on.
// While it waits, it checks now and then that its task still runs: a task
// terminated or timed out from outside never sends its end, so this workflow
// makes it (task.failed, error terminated | timeout | vanished) and ends.
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { CallbackConfig, DeliveryItem, DeliveryRecord } from './types';
import { endDelivery, endFromOutside } from './callback-end';
import { CALLBACK_GONE, CALLBACK_REFUSED, deliveriesQuery, deliverSignal } from './definitions';

export interface CallbackDeliveryInput {
  taskId: string;
  account: string;
  callback: CallbackConfig;
  /** Carried over a continue-as-new. */
  queue?: DeliveryItem[];
  ended?: boolean;
  log?: DeliveryRecord[];
  gone?: boolean;
}

/** Records kept for GET /tasks/{id}/deliveries across continue-as-new (the oldest give way). */
const LOG_LIMIT = 1000;
/** How often an idle delivery workflow checks its task, when the callback does not say (RUN_WATCH_MS). */
const DEFAULT_WATCH_MS = 60_000;

const { runState } = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { maximumInterval: '30s' } });

// eslint-disable-next-line max-lines-per-function -- the delivery loop and its signal and query handlers share the queue and log; workflow code is held to saved histories, so it is not reshaped for length
export async function callbackDelivery(input: CallbackDeliveryInput): Promise<void> {
  const queue: DeliveryItem[] = [...(input.queue ?? [])];
  const log: DeliveryRecord[] = [...(input.log ?? [])];
  let gone = input.gone ?? false;
  let ended = input.ended ?? false;
  const enqueue = (item: DeliveryItem) => {
    queue.push(item);
    log.push({
      webhook_id: item.id,
      type: item.type,
      status: 'pending',
      attempts: 0,
      last_status: null,
      last_error: null,
      delivered_at: null,
    });
  };
  setHandler(deliverSignal, ({ items, end }) => {
    if (end) ended = true;
    items.forEach(enqueue);
  });
  setHandler(deliveriesQuery, () => log.slice(-LOG_LIMIT));

  const { callback } = input;
  const deliver = proxyActivities<Activities>({
    // The receiver's own timeout, and the time to sign and connect.
    startToCloseTimeout: callback.timeoutMs + 5000,
    retry: {
      maximumAttempts: callback.retryDelaysMs.length + 1,
      nonRetryableErrorTypes: [CALLBACK_GONE, CALLBACK_REFUSED],
    },
  }).deliverCallback;

  /** Whether the task's run closed without sending its end: then that end is made here, and the deliveries end after it. */
  async function checkTask(): Promise<void> {
    const state = await runState({ workflowId: input.taskId });
    if (ended) return; // its end came meanwhile
    const seen = endFromOutside(state, new Date(Date.now()).toISOString());
    if (seen === 'running') return;
    const item = seen === 'closed' ? undefined : endDelivery(input.taskId, callback, seen);
    if (item) enqueue(item);
    ended = true;
  }

  const ready = () => queue.length > 0 || ended || workflowInfo().continueAsNewSuggested;
  for (;;) {
    // Runs in flight from before the watch wait as they did (a timer here would not replay).
    if (patched('callback-delivery-watches-its-task')) {
      while (!(await condition(ready, callback.watchMs ?? DEFAULT_WATCH_MS))) await checkTask();
    } else await condition(ready);
    if (queue.length === 0) {
      if (ended) return;
      break;
    }
    const item = queue.shift()!;
    const current = log.find((r) => r.webhook_id === item.id);
    if (gone) {
      settle(current, { status: 'skipped', last_error: 'the receiver answered 410 Gone to an earlier delivery' });
    } else {
      try {
        const r = await deliver({
          account: input.account,
          url: callback.url,
          headers: callback.headers,
          webhookId: item.id,
          body: item.body,
          timeoutMs: callback.timeoutMs,
          retryDelaysMs: callback.retryDelaysMs,
        });
        settle(current, { status: 'delivered', attempts: r.attempt, last_status: r.status, delivered_at: r.at });
      } catch (err) {
        const cause = err instanceof ActivityFailure ? err.cause : err;
        const type = cause instanceof ApplicationFailure ? cause.type : undefined;
        const details =
          cause instanceof ApplicationFailure
            ? (cause.details?.[0] as { status?: number; attempt?: number } | undefined)
            : undefined;
        gone = type === CALLBACK_GONE;
        settle(current, {
          status: gone ? 'gone' : 'failed',
          attempts: details?.attempt ?? callback.retryDelaysMs.length + 1,
          last_status: details?.status ?? null,
          last_error: (cause as Error | undefined)?.message ?? 'delivery failed',
        });
      }
    }
    if (workflowInfo().continueAsNewSuggested) break;
  }
  await continueAsNew<typeof callbackDelivery>({ ...input, queue, log: log.slice(-LOG_LIMIT), gone, ended });
}

function settle(record: DeliveryRecord | undefined, change: Partial<DeliveryRecord>): void {
  if (record) Object.assign(record, change);
}
