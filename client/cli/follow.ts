// Following a task's event stream in the terminal, shared by `agent run` and
// `agent tail`: renders each event (event-view.ts), shows reconnections, and on
// Ctrl-C leaves the task running and says how to come back to it.
import type { EventStream, StreamOptions } from '../event-stream';
import type { Output } from './output';
import { EventView } from './event-view';

export type OpenStream = (streamOpts: StreamOptions) => Promise<EventStream>;

/** Follows the stream to its end; resolves with the exit code (0 completed, 1 error, 130 interrupted). */
export async function follow(out: Output, json: boolean, open: OpenStream): Promise<number> {
  const view = new EventView(out, json);
  const stop = new AbortController();
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
    stop.abort();
  };
  process.once('SIGINT', onSigint);
  let stream: EventStream | undefined;
  try {
    stream = await open({ signal: stop.signal, onReconnect: (r) => view.reconnecting(r.attempt, r.lastEventId) });
    for await (const ev of stream) view.handle(ev);
  } catch (err) {
    if (!interrupted) throw err;
  } finally {
    view.end();
    process.removeListener('SIGINT', onSigint);
  }
  if (interrupted) {
    // The task does not depend on this connection: say how to find it again.
    const id = stream?.taskId;
    out.errLine(id ? `interrupted; the task goes on: agent tail ${id}   (agent cancel ${id} stops it)` : 'interrupted');
    return 130;
  }
  // A stream the service ended without a terminal event (resumed past the end): the task was over already.
  return view.exitCode ?? 0;
}
