// One callback delivery attempt against a real receiver on loopback, through
// the outbound policy's fetch: a 2xx is delivered, a 410 ends the task's
// deliveries, anything else is retried after the schedule's wait (with
// jitter), an unreachable receiver too; a URL whose host resolves to a private address is
// refused at delivery time, before any connection, and not retried.
import pino from 'pino';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { createCallbackActivities, DeliverCallbackInput } from '../../activities/callbacks';
import { policyFetch, PolicyFetch } from '../../src/common/outbound/fetch';
import { OutboundPolicy } from '../../src/common/outbound/policy';
import { newWebhookSecret } from '../../src/common/callbacks/signature';
import { startReceiver, Receiver, verifiedBy } from '../e2e/callback-receiver';

const secret = newWebhookSecret();
// The registry's answer, as the activity reads it: one secret in force.
const temporal = {
  workflow: { getHandle: () => ({ query: async () => [{ secret, created_at: '2026-01-01T00:00:00Z' }] }) },
};
let receiver: Receiver;
let allowed: PolicyFetch;
let rebinding: PolicyFetch;

beforeAll(async () => {
  receiver = await startReceiver();
  allowed = policyFetch(new OutboundPolicy('127.0.0.1'));
  // A public-looking name whose DNS answer is a private address.
  rebinding = policyFetch(new OutboundPolicy('', async () => [{ address: '10.1.2.3', family: 4 }]));
});
afterAll(async () => {
  await Promise.all([receiver.close(), allowed.close(), rebinding.close()]);
});

function attempt(fetch: PolicyFetch, input: Partial<DeliverCallbackInput>, attemptNo = 1) {
  const deps = {
    temporal,
    outboundFetch: fetch,
    config: { TEMPORAL_TASK_QUEUE: 'q' },
    logger: pino({ level: 'silent' }),
  } as never;
  const env = new MockActivityEnvironment({ attempt: attemptNo });
  return env.run(createCallbackActivities(deps).deliverCallback, {
    account: 'acct',
    url: receiver.url('/a'),
    headers: { authorization: 'Bearer x' },
    webhookId: 'msg_t_1',
    body: '{"type":"agent_started"}',
    timeoutMs: 2000,
    retryDelaysMs: [1000, 60_000],
    ...input,
  });
}

async function failure(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

test('a 2xx is delivered, signed, with the given headers', async () => {
  receiver.answer('/a', 204);
  const r = await attempt(allowed, {});
  expect(r).toMatchObject({ status: 204, attempt: 1 });
  const d = receiver.deliveries[receiver.deliveries.length - 1];
  expect(verifiedBy(d, [secret])).toEqual([secret]);
  expect(d.headers).toMatchObject({
    authorization: 'Bearer x',
    'webhook-id': 'msg_t_1',
    'content-type': 'application/json',
  });
});

test("a 5xx is retried after the schedule's wait for that attempt, give or take 10%", async () => {
  receiver.answer('/b', 500);
  const first = await failure(attempt(allowed, { url: receiver.url('/b') }, 1));
  expect(first.nonRetryable).toBe(false);
  expect(Number(first.nextRetryDelay)).toBeGreaterThanOrEqual(900);
  expect(Number(first.nextRetryDelay)).toBeLessThanOrEqual(1100);
  expect(first.details?.[0]).toEqual({ status: 500, attempt: 1 });
  const second = await failure(attempt(allowed, { url: receiver.url('/b') }, 2));
  expect(Number(second.nextRetryDelay)).toBeGreaterThanOrEqual(54_000);
});

test('a 410 ends the deliveries, not retried', async () => {
  receiver.answer('/c', 410);
  const f = await failure(attempt(allowed, { url: receiver.url('/c') }));
  expect(f).toMatchObject({ type: 'callback_gone', nonRetryable: true });
});

test('a receiver that cannot be reached is retried', async () => {
  const f = await failure(attempt(allowed, { url: 'http://127.0.0.1:9/never', timeoutMs: 300 }));
  expect(f.nonRetryable).toBe(false);
  expect(f.message).toMatch(/could not deliver/);
});

test('a host that resolves to a private address is refused at delivery time, before connecting', async () => {
  const before = receiver.deliveries.length;
  const f = await failure(attempt(rebinding, { url: 'http://hooks.example.com/x' }));
  expect(f).toMatchObject({ type: 'callback_refused', nonRetryable: true });
  expect(receiver.deliveries.length).toBe(before);
});
