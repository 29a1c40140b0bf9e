// The other half of the bench's relay baseline (bench-bare-relay.ts): the
// least the gateway's side of a token relay can cost. Express, like the
// gateway: POST / subscribes one shared ioredis subscriber to a fresh channel,
// asks the publisher process to stream the reply into it, and writes each
// message to the client as an SSE `data:` line until the end marker. No auth,
// no validation, no Temporal, no catch-up from a stream. Prints its port as one
// JSON line on stdout, then serves until SIGTERM.
//
//   node -r tsx/cjs scripts/bench-bare-relay-server.ts <redis-url> <publisher-port>
import http from 'node:http';
import express from 'express';
import Redis from 'ioredis';
import { BARE_RELAY_END } from './bench-bare-relay-publisher';
import { serveAndAnnounce } from './bench-proc';

async function main(): Promise<void> {
  const [redisUrl, publisherPort] = process.argv.slice(2);
  if (!redisUrl || !publisherPort) throw new Error('usage: bench-bare-relay-server.ts <redis-url> <publisher-port>');
  const sub = new Redis(redisUrl, { connectionName: 'bench-bare-subscriber' });
  await sub.ping();
  const agent = new http.Agent({ keepAlive: true });
  const clients = new Map<string, express.Response>();
  sub.on('message', (channel: string, message: string) => {
    const res = clients.get(channel);
    if (!res) return;
    if (message !== BARE_RELAY_END) {
      res.write(`data: ${message}\n\n`);
      return;
    }
    clients.delete(channel);
    res.end();
    void sub.unsubscribe(channel).catch(() => undefined);
  });
  let next = 0;
  const app = express();
  app.disable('x-powered-by');
  app.post('/', express.json(), async (req, res) => {
    const channel = `bench:bare:${process.pid}:${next++}`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    clients.set(channel, res);
    await sub.subscribe(channel);
    const body = JSON.stringify({ channel, message: String(req.body?.message ?? '') });
    const run = http.request({ host: '127.0.0.1', port: Number(publisherPort), method: 'POST', path: '/run', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (r) => r.resume());
    run.on('error', () => {
      clients.delete(channel);
      res.end();
    });
    run.end(body);
  });
  await serveAndAnnounce(http.createServer(app), () => {
    agent.destroy();
    sub.disconnect();
  });
}

main().catch((err) => {
  process.stderr.write(`bare relay server failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
