// The worker's metrics endpoint (WORKER_METRICS_PORT) on loopback: its
// registry's text at GET /metrics, METRICS_TOKEN when set, nothing else.
import pino from 'pino';
import { Counter, Registry } from 'prom-client';
import { bearerAccepted, serveMetrics } from '../../../src/common/metrics/metrics-server';

test("the worker's metrics endpoint: its registry's text at GET /metrics, the token when set", async () => {
  expect(bearerAccepted(undefined, undefined)).toBe(true);
  expect(bearerAccepted('Bearer abc', 'abc')).toBe(true);
  expect(bearerAccepted('Bearer abd', 'abc')).toBe(false);
  const registry = new Registry();
  new Counter({ name: 'aes_probe_total', help: 'probe', registers: [registry] }).inc();
  const server = await serveMetrics(registry, {
    port: 0,
    host: '127.0.0.1',
    token: 'tok-0123456789abcdef',
    logger: pino({ level: 'silent' }),
  });
  try {
    const at = `http://127.0.0.1:${server.port}`;
    expect((await fetch(`${at}/metrics`)).status).toBe(401);
    expect((await fetch(`${at}/other`)).status).toBe(404);
    const ok = await fetch(`${at}/metrics`, { headers: { authorization: 'Bearer tok-0123456789abcdef' } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('aes_probe_total 1');
  } finally {
    await server.close();
  }
});
