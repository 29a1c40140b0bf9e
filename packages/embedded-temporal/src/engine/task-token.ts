// Task tokens: opaque to SDKs, self-describing to us. A token names the run and
// the exact task attempt, so a late or repeated response is recognised as stale.
import { invalidArgument, notFound } from '../errors';

export interface TaskToken {
  /** namespace, workflowId, runId */
  n: string;
  w: string;
  r: string;
  /** w = workflow task, a = activity, q = legacy query */
  k: 'w' | 'a' | 'q';
  /** scheduled event id of the task */
  s?: number;
  /** attempt (activities; workflow tasks, whose transient retries share a scheduled event id) */
  a?: number;
  /** query id */
  q?: string;
  /** activity id of a standalone activity (whose token names no workflow: w is empty, r is its run id) */
  i?: string;
}

export function encodeToken(t: TaskToken): Buffer {
  return Buffer.from(JSON.stringify(t));
}

export function decodeToken(b: Uint8Array | undefined, expect: TaskToken['k']): TaskToken {
  if (!b || b.length === 0) throw invalidArgument('Task token not set on request.');
  let t: TaskToken;
  try {
    t = JSON.parse(Buffer.from(b).toString('utf8'));
  } catch {
    throw invalidArgument('Error deserializing task token.');
  }
  if (
    !t ||
    typeof t !== 'object' ||
    typeof t.n !== 'string' ||
    typeof t.w !== 'string' ||
    typeof t.r !== 'string' ||
    !['w', 'a', 'q'].includes(t.k)
  ) {
    throw invalidArgument('Error deserializing task token.');
  }
  // The real server's workflow and activity tokens share one format, so a token of the
  // other kind names no such task: NOT_FOUND. Query tokens have a format of their own.
  if (t.k !== expect) {
    if (expect === 'q' || t.k === 'q') throw invalidArgument('Invalid TaskToken.');
    throw notFound(expect === 'w' ? 'Workflow task not found.' : 'Activity task not found.');
  }
  return t;
}
