// One attempt of one callback delivery: sign, POST, classify the answer. The
// delivery workflow owns order and the retry policy; the attempt picks its
// own next wait from the delivery schedule (nextRetryDelay), with jitter, so
// the waits are the schedule's whatever Temporal's backoff would have been.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from './index';
import { OutboundLookupError, OutboundRefusedError } from '../src/common/outbound/policy';
import { deliveryHeaders, signatureHeader } from '../src/common/callbacks/signature';
import { WebhookSecrets } from '../src/common/accounts/webhook-secrets';
import { CALLBACK_GONE, CALLBACK_REFUSED } from '../workflows/definitions';

export interface DeliverCallbackInput {
  account: string;
  url: string;
  headers: Record<string, string>;
  webhookId: string;
  body: string;
  timeoutMs: number;
  retryDelaysMs: number[];
}

export interface DeliveredCallback {
  status: number;
  attempt: number;
  at: string;
}

/** Each retry's wait is the schedule's, give or take this share (receivers that failed together do not all come back at once). */
const JITTER = 0.1;

export function createCallbackActivities(deps: ActivityDeps) {
  const secrets = new WebhookSecrets(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE);
  return {
    async deliverCallback(input: DeliverCallbackInput): Promise<DeliveredCallback> {
      const { attempt } = Context.current().info;
      const fetch = deps.outboundFetch;
      if (!fetch) throw new Error('the worker has no outbound fetch for callbacks');
      const signing = (await secrets.inForce(input.account)).map((s) => s.secret);
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = deliveryHeaders(
        input.headers,
        input.webhookId,
        timestamp,
        signatureHeader(signing, input.webhookId, timestamp, input.body),
      );
      let status: number;
      try {
        const res = await fetch(input.url, {
          method: 'POST',
          headers,
          body: input.body,
          redirect: 'manual',
          signal: AbortSignal.timeout(input.timeoutMs),
        });
        status = res.status;
        await res.body?.cancel();
      } catch (err) {
        if (err instanceof OutboundRefusedError) {
          throw ApplicationFailure.create({
            message: `the outbound policy refuses the callback URL (${err.reason})`,
            type: CALLBACK_REFUSED,
            nonRetryable: true,
            details: [{ attempt }],
          });
        }
        const why =
          err instanceof OutboundLookupError
            ? (err.code ?? 'DNS lookup failed')
            : describeFetchError(err, input.timeoutMs);
        // The origin only: a callback URL's path may itself be the receiver's secret (as chat webhooks are).
        throw retry(
          `could not deliver to ${new URL(input.url).origin}: ${why}`,
          attempt,
          input.retryDelaysMs,
          undefined,
        );
      }
      if (status >= 200 && status < 300) return { status, attempt, at: new Date().toISOString() };
      if (status === 410) {
        throw ApplicationFailure.create({
          message: 'the receiver answered 410 Gone: no more deliveries to this callback',
          type: CALLBACK_GONE,
          nonRetryable: true,
          details: [{ status, attempt }],
        });
      }
      throw retry(`the receiver answered HTTP ${status}`, attempt, input.retryDelaysMs, status);
    },
  };
}

/** A failure Temporal retries after the schedule's next wait (the retry policy's attempts end it after the last). */
function retry(message: string, attempt: number, delaysMs: number[], status: number | undefined): ApplicationFailure {
  const base = delaysMs[Math.min(attempt - 1, delaysMs.length - 1)] ?? 0;
  const wait = Math.round(base * (1 - JITTER + 2 * JITTER * Math.random()));
  return ApplicationFailure.create({
    message,
    type: 'callback_failed',
    nextRetryDelay: wait,
    details: [{ status, attempt }],
  });
}

function describeFetchError(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? 'connection failed';
}
