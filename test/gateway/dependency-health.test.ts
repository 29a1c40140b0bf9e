// DependencyHealth with stand-in probes (no network): a dependency is away
// after two probes in a row failed or went unanswered, back at the first that
// answers, and a request that needs it meanwhile gets the 503 at once.
import pino from 'pino';
import { DependencyHealth } from '../../src/gateway/dependency-health';
import { DependencyUnavailableError } from '../../src/common/errors';
import { waitUntil } from '../support/wait-until';

const never = () => new Promise(() => undefined);

test('one slow probe is not an outage; two in a row are, and one answer ends it', async () => {
  let probe: () => Promise<unknown> = never;
  let asked = 0;
  const redis = () => {
    asked++;
    return probe();
  };
  const health = new DependencyHealth({ redis, temporal: async () => 'ok' }, pino({ level: 'silent' }), {
    timeoutMs: 50,
  });
  expect(await health.probe('redis')).toBe(false);
  expect(health.isAway('redis')).toBe(false);
  expect(await health.probe('redis')).toBe(false);
  expect(health.isAway('redis')).toBe(true);
  expect(health.isAway('temporal')).toBe(false);
  // The 503 comes from what the probes found, at once: require() throws synchronously (it cannot
  // have waited for the dead dependency) and asks it nothing.
  const askedBefore = asked;
  let refused: unknown;
  try {
    health.require('redis');
  } catch (err) {
    refused = err;
  }
  expect(asked).toBe(askedBefore);
  expect(refused).toBeInstanceOf(DependencyUnavailableError);
  expect(refused).toMatchObject({ status: 503, dependency: 'redis', retryAfterSeconds: 1 });
  probe = async () => 'PONG';
  expect(await health.probe('redis')).toBe(true);
  expect(health.isAway('redis')).toBe(false);
  expect(() => health.require('redis')).not.toThrow();
});

test('a probe that fails outright counts like one that never answers', async () => {
  const health = new DependencyHealth(
    { redis: async () => 'ok', temporal: () => Promise.reject(new Error('ECONNREFUSED')) },
    pino({ level: 'silent' }),
    { timeoutMs: 50 },
  );
  await health.probe('temporal');
  await health.probe('temporal');
  expect(() => health.require('temporal')).toThrow(/Temporal is unavailable/);
});

test('started, it probes in the background until stopped', async () => {
  let calls = 0;
  const health = new DependencyHealth(
    { redis: async () => calls++, temporal: async () => 'ok' },
    pino({ level: 'silent' }),
    { intervalMs: 20, timeoutMs: 50 },
  );
  health.start();
  await waitUntil(
    'three background probes',
    () => calls,
    (n) => n >= 3,
    { timeoutMs: 5000, stepMs: 10 },
  );
  health.stop();
  const seen = calls;
  // Deliberate: five probe intervals (20 ms each) in which a probe that was not stopped would run.
  await new Promise((r) => setTimeout(r, 100));
  expect(calls).toBe(seen);
});
