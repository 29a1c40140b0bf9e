// Redis connections. Commands fail fast while Redis is unreachable (so the
// gateway answers 503 instead of hanging); the subscriber reconnects and
// resubscribes on its own.
import Redis from 'ioredis';
import type { Logger } from 'pino';

export function commandClient(url: string, logger: Logger, name: string): Redis {
  const r = new Redis(url, {
    connectionName: name,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  let down = false;
  r.on('error', (err) => {
    if (!down) logger.warn({ err: err.message, redis: name }, 'redis unavailable');
    down = true;
  });
  r.on('ready', () => {
    if (down) logger.info({ redis: name }, 'redis reconnected');
    down = false;
  });
  return r;
}

export function subscriberClient(url: string, logger: Logger, name: string): Redis {
  const r = new Redis(url, {
    connectionName: name,
    autoResubscribe: true,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  r.on('error', (err) => logger.debug({ err: err.message, redis: name }, 'redis subscriber error'));
  return r;
}
