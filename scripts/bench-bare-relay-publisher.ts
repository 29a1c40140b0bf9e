// Half of the bench's relay baseline (bench-bare-relay.ts): the least the
// worker's side of a token relay can cost. It reads a streamed chat completion
// from the scripted model over a keep-alive node:http connection, takes each
// chunk's content delta, and PUBLISHes it to a Redis channel with one ioredis
// command. No Temporal, no OpenAI SDK, no event log, no heartbeats. Prints its
// port as one JSON line on stdout, then serves until SIGTERM.
//
//   node -r tsx/cjs scripts/bench-bare-relay-publisher.ts <redis-url> <model-base-url>
//
// POST /run {"channel": "...", "message": "..."} answers 202 at once, then
// relays the reply: {"type":"agent_response","content":"<delta>"} per chunk and
// {"type":"end"} (BARE_RELAY_END) when the model's stream ends or fails.
import http from 'node:http';
import Redis from 'ioredis';
import { serveAndAnnounce } from './bench-proc';

export const BARE_RELAY_END = '{"type":"end"}';

function relay(redis: Redis, model: URL, agent: http.Agent, channel: string, message: string): void {
  const body = JSON.stringify({ model: 'scripted-base', stream: true, messages: [{ role: 'user', content: message }] });
  const end = () => void redis.publish(channel, BARE_RELAY_END).catch(() => undefined);
  const req = http.request(
    { host: model.hostname, port: model.port, method: 'POST', path: `${model.pathname.replace(/\/$/, '')}/chat/completions`, agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
    (res) => {
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i).trim();
          buf = buf.slice(i + 1);
          if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
          let content: string | undefined;
          try {
            content = (JSON.parse(line.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content;
          } catch {
            continue; // not a chunk: the bench counts the token as missing
          }
          if (content) void redis.publish(channel, JSON.stringify({ type: 'agent_response', content })).catch(() => undefined);
        }
      });
      res.on('end', end);
      res.on('error', end);
    },
  );
  req.on('error', end);
  req.end(body);
}

async function main(): Promise<void> {
  const [redisUrl, modelUrl] = process.argv.slice(2);
  if (!redisUrl || !modelUrl) throw new Error('usage: bench-bare-relay-publisher.ts <redis-url> <model-base-url>');
  const redis = new Redis(redisUrl, { connectionName: 'bench-bare-publisher' });
  await redis.ping();
  const model = new URL(modelUrl);
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      const job = JSON.parse(raw) as { channel: string; message: string };
      res.writeHead(202).end();
      relay(redis, model, agent, job.channel, job.message);
    });
  });
  await serveAndAnnounce(server, () => {
    agent.destroy();
    redis.disconnect();
  });
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`bare relay publisher failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
