// A private redis-server on a free port for one test file, and its clients.
import Redis from 'ioredis';
import { startChild, freePort, ensureRedisServer, waitFor } from '../../../src/dev/launcher/processes';

export interface PrivateRedis {
  url: string;
  redis: Redis;
  /** Stops the clients handed out and the server. */
  stop(): Promise<void>;
  client(): Redis;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const proc = startChild(
    'redis',
    ensureRedisServer(() => undefined),
    ['--port', String(port), '--save', '', '--appendonly', 'no'],
  );
  const url = `redis://127.0.0.1:${port}`;
  const redis = new Redis(url, { lazyConnect: true });
  await waitFor('redis', proc, async () => {
    await redis.connect().catch(() => undefined);
    return (await redis.ping()) === 'PONG';
  });
  const clients = [redis];
  return {
    url,
    redis,
    client() {
      const c = new Redis(url);
      clients.push(c);
      return c;
    },
    async stop() {
      for (const c of clients) c.disconnect();
      await proc.stop();
    },
  };
}
