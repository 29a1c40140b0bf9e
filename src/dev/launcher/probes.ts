// Health checks of `npm start`'s processes for the supervisor: each asks the
// process something only a running one can answer, within a short deadline.
import { Connection } from '@temporalio/client';
import Redis from 'ioredis';
import type { Child } from './processes';

const DEADLINE_MS = 1500;

/** The gateway's liveness route. */
export function httpProbe(url: string): () => Promise<boolean> {
  return async () => (await fetch(url, { signal: AbortSignal.timeout(DEADLINE_MS) })).ok;
}

/** A Node child that answers {type: 'ping'} with {type: 'pong'} over IPC (the worker). */
export function ipcProbe(child: () => Child): () => Promise<boolean> {
  let next = 0;
  return () =>
    new Promise<boolean>((resolve) => {
      const { proc } = child();
      const id = ++next;
      const done = (ok: boolean) => {
        clearTimeout(timer);
        proc.off('message', onMessage);
        resolve(ok);
      };
      const onMessage = (m: { type?: string; id?: number }) => m?.type === 'pong' && m.id === id && done(true);
      const timer = setTimeout(() => done(false), DEADLINE_MS);
      proc.on('message', onMessage);
      if (!proc.connected) return done(false);
      // With a callback, a channel that breaks under the write (the child dying: EPIPE) answers
      // here; without one, Node emits it as the child's 'error', which nothing handles, and the
      // launcher itself died of a worker's death (seen in a test run). A false return is only
      // backpressure: the ping is queued, and the deadline decides.
      proc.send({ type: 'ping', id }, (err) => err && done(false));
    });
}

export interface ClosableProbe {
  probe: () => Promise<boolean>;
  close(): Promise<void>;
}

/** The engine's frontend (GetSystemInfo), over one connection that reconnects by itself. */
export function temporalProbe(address: string): ClosableProbe {
  const connection = Connection.lazy({ address });
  return {
    probe: async () => {
      await connection.withDeadline(Date.now() + DEADLINE_MS, () => connection.workflowService.getSystemInfo({}));
      return true;
    },
    close: () => connection.close(),
  };
}

/** Redis' PING. */
export function redisProbe(url: string): ClosableProbe {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: DEADLINE_MS,
  });
  redis.on('error', () => undefined); // a failed check says it
  return {
    probe: async () => {
      if (redis.status === 'wait' || redis.status === 'end') await redis.connect().catch(() => undefined);
      const pong = await Promise.race([
        redis.ping(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), DEADLINE_MS)),
      ]);
      return pong === 'PONG';
    },
    close: async () => redis.disconnect(),
  };
}
