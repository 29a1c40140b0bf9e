// A task's events, live: the client's EventStream (GET /tasks/{id}/events, resumed with
// Last-Event-ID after a dropped connection, each event once); when it gives up (the gateway away
// for longer than its reconnections), the page opens it again after the last event it has, every
// few seconds, until the task has ended. The events are kept by seq, so nothing shows twice.
import { useEffect, useState } from 'preact/hooks';
import type { AgentEvent } from '../../../client/types';
import { AgentApiError } from '../../../client/errors';
import { api } from './api';

export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'ended' | 'refused';

const TERMINAL = new Set(['agent_completed', 'agent_error']);
const REOPEN_MS = 2000;

/** A 4xx other than 408 and 429: the same request would be refused again. */
const refused = (err: unknown) =>
  err instanceof AgentApiError &&
  err.status !== undefined &&
  err.status >= 400 &&
  err.status < 500 &&
  err.status !== 408 &&
  err.status !== 429;

export function useTaskStream(taskId: string): { events: AgentEvent[]; state: StreamState; reconnects: number } {
  const [events, setEvents] = useState<AgentEvent[]>([]);
  const [state, setState] = useState<StreamState>('connecting');
  const [reconnects, setReconnects] = useState(0);
  useEffect(() => {
    const stop = new AbortController();
    const seen = new Map<number, AgentEvent>();
    let lastSeq = 0;
    let pending: number | undefined;
    // Renders at most once a frame: a token stream is many events a second.
    const flush = () => {
      pending = undefined;
      setEvents([...seen.values()].sort((a, b) => a.seq - b.seq));
    };
    const follow = async () => {
      while (!stop.signal.aborted) {
        let ended = false;
        try {
          const stream = await api().tasks.events(taskId, {
            after: lastSeq,
            signal: stop.signal,
            onReconnect: () => {
              setState('reconnecting');
              setReconnects((n) => n + 1);
            },
          });
          setState('live');
          for await (const e of stream) {
            setState('live');
            seen.set(e.seq, e);
            lastSeq = Math.max(lastSeq, e.seq);
            pending ??= requestAnimationFrame(flush);
            // A terminal event that a later rewind supersedes is not the end: the stream goes on.
            if (TERMINAL.has(e.type) && !e.superseded) ended = true;
          }
        } catch (err) {
          if (stop.signal.aborted) return;
          // Asking again changes nothing for a refusal (no such task for this key, a key revoked).
          if (refused(err)) return void setState('refused');
        }
        if (ended) {
          setState('ended');
          return;
        }
        setState('reconnecting');
        setReconnects((n) => n + 1);
        await new Promise((r) => setTimeout(r, REOPEN_MS));
      }
    };
    void follow();
    return () => {
      stop.abort();
      if (pending !== undefined) cancelAnimationFrame(pending);
    };
  }, [taskId]);
  return { events, state, reconnects };
}
