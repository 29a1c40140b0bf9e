// DependencyHealth with stand-in probes (no network): a dependency is away
// after two probes in a row failed or went unanswered, back at the first that
// answers, and a request that needs it meanwhile gets the 503 at once.
import pino from 'pino';
import { DependencyHealth } from '../../src/gateway/dependency-health';
import { DependencyUnavailableError } from '../../src/errors';

const never = () => new Promise(() => undefined);

test('one slow probe is not an outage; two in a row are, and one answer ends it', async () => {
  let probe: () => Promise<unknown> = never;
  const health = new DependencyHealth({ redis: () => probe(), temporal: async () => 'ok' }, pino({ level: 'silent' }), { timeoutMs: 50 });
  expect(await health.probe('redis')).toBe(false);
  expect(health.isAway('redis')).toBe(false);
  expect(await health.probe('redis')).toBe(false);
  expect(health.isAway('redis')).toBe(true);
  expect(health.isAway('temporal')).toBe(false);
  const t0 = Date.now();
  let refused: unknown;
  try {
    health.require('redis');
  } catch (err) {
    refused = err;
  }
  expect(Date.now() - t0).toBeLessThan(50);
  expect(refused).toBeInstanceOf(DependencyUnavailableError);
  expect(refused).toMatchObject({ status: 503, dependency: 'redis', retryAfterSeconds: 1 });
  probe = async () => 'PONG';
  expect(await health.probe('redis')).toBe(true);
  expect(health.isAway('redis')).toBe(false);
  expect(() => health.require('redis')).not.toThrow();
});

test('a probe that fails outright counts like one that never answers', async () => {
  const health = new DependencyHealth({ redis: async () => 'ok', temporal: () => Promise.reject(new Error('ECONNREFUSED')) }, pino({ level: 'silent' }), { timeoutMs: 50 });
  await health.probe('temporal');
  await health.probe('temporal');
  expect(() => health.require('temporal')).toThrow(/Temporal is unavailable/);
});

test('started, it probes in the background until stopped', async () => {
  let calls = 0;
  const health = new DependencyHealth({ redis: async () => calls++, temporal: async () => 'ok' }, pino({ level: 'silent' }), { intervalMs: 20, timeoutMs: 50 });
  health.start();
  await new Promise((r) => setTimeout(r, 150));
  health.stop();
  const seen = calls;
  expect(seen).toBeGreaterThanOrEqual(3);
  await new Promise((r) => setTimeout(r, 100));
  expect(calls).toBe(seen);
});
