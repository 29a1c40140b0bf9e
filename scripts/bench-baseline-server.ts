// The bench's baseline: the least an Express route backed by one Redis GET can
// cost on this machine. Runs as its own Node process (like the gateway, so it
// gets its own event loop and competes for the same two cores), against the
// stack's Redis, reading a key the bench names. Prints its port as one JSON
// line on stdout, then serves until SIGTERM.
//
//   node -r tsx/cjs scripts/bench-baseline-server.ts <redis-url> <key>
import http from 'node:http';
import express from 'express';
import Redis from 'ioredis';
import { serveAndAnnounce } from './bench-proc';

async function main(): Promise<void> {
  const [redisUrl, key] = process.argv.slice(2);
  if (!redisUrl || !key) throw new Error('usage: bench-baseline-server.ts <redis-url> <key>');
  const redis = new Redis(redisUrl);
  await redis.ping();
  const app = express();
  app.disable('x-powered-by');
  // Same response work as the gateway's status route: GET, JSON.parse, res.json.
  app.get('/get', async (_req, res) => {
    const raw = await redis.get(key);
    res.json(raw ? JSON.parse(raw) : null);
  });
  await serveAndAnnounce(http.createServer(app), () => redis.disconnect());
}

main().catch((err) => {
  process.stderr.write(`baseline server failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
