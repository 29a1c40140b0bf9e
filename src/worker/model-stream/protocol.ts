// Messages between the worker's main thread and its token thread.
import type { StreamOutcome, StreamRequest, TurnProgress } from '../../../activities/model-stream';

/** What the token thread builds its own clients from (workerData). Holds the API key: never log it. */
export interface StreamThreadConfig {
  openai: { apiKey: string; baseURL?: string; timeoutMs: number; idleMs: number };
  redisUrl: string;
  /** Event stream lifetime after the last event, ms. */
  ttlMs: number;
  logLevel: string;
  logJson: boolean;
}

export type ToThread =
  { type: 'run'; id: number; req: StreamRequest; progress: TurnProgress } | { type: 'cancel'; id: number };

/** A model client error reduced to what classification needs; no headers, so no secret crosses. */
export interface StreamError {
  name: string;
  message: string;
  status?: number;
}

export type FromThread =
  | { type: 'ready'; tid?: number }
  | { type: 'progress'; id: number; progress: TurnProgress }
  | { type: 'done'; id: number; outcome: StreamOutcome }
  | { type: 'failed'; id: number; error: StreamError };
