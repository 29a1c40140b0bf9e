// Tools for errors-fuzz.engine.test.ts: a seeded PRNG, a raw gRPC client that sends
// arbitrary bytes to any method, gRPC status helpers, and generators of garbled
// inputs. Nothing here knows which server it talks to.
import * as grpc from '@grpc/grpc-js';
import { temporal, google } from '@temporalio/proto';

export const S = grpc.status;

/** mulberry32: small, fast, and the same sequence for the same seed on every run. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    pick: <T>(xs: readonly T[]): T => xs[int(xs.length)],
    bytes: (n: number) => Buffer.from(Array.from({ length: n }, () => int(256))),
    chance: (p: number) => next() < p,
  };
}
export type Rng = ReturnType<typeof prng>;

export interface CallOutcome {
  code: number;
  details: string;
  metadata?: grpc.Metadata;
}

/** Runs a call and reports its gRPC status (OK included) instead of throwing. */
export async function outcome(p: Promise<unknown>): Promise<CallOutcome> {
  try {
    await p;
    return { code: S.OK, details: '' };
  } catch (err: any) {
    if (typeof err?.code !== 'number') throw err;
    return { code: err.code, details: String(err.details ?? err.message), metadata: err.metadata };
  }
}

export function codeName(code: number): string {
  return S[code] ?? String(code);
}

/** The errordetails message type the server attached (grpc-status-details-bin), if any. */
export function detailType(o: CallOutcome): string | undefined {
  const bin = o.metadata?.get('grpc-status-details-bin')?.[0];
  if (!bin) return undefined;
  const st = google.rpc.Status.decode(Buffer.isBuffer(bin) ? bin : Buffer.from(bin));
  return st.details?.[0]?.type_url?.split('.').pop();
}

/** A client that sends raw bytes to any method path and hands back raw bytes. */
export class RawClient {
  private readonly client: grpc.Client;
  constructor(address: string) {
    this.client = new grpc.Client(address, grpc.credentials.createInsecure());
  }
  call(path: string, body: Buffer, timeoutMs = 2000): Promise<CallOutcome> {
    return new Promise((resolve) => {
      this.client.makeUnaryRequest(
        path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        body,
        new grpc.Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err) =>
          resolve(err ? { code: err.code, details: err.details, metadata: err.metadata } : { code: S.OK, details: '' }),
      );
    });
  }
  close(): void {
    this.client.close();
  }
}

export const WORKFLOW_SERVICE = 'temporal.api.workflowservice.v1.WorkflowService';

/**
 * Methods garbage may go to. Ones that create things (start, register, schedules,
 * search attributes...) are left out: garbage that happened to decode into a valid
 * request would leave workflows or namespaces behind on a shared server.
 */
export const GARBAGE_TARGETS = [
  'GetSystemInfo',
  'DescribeNamespace',
  'ListNamespaces',
  'DescribeWorkflowExecution',
  'GetWorkflowExecutionHistory',
  'GetWorkflowExecutionHistoryReverse',
  'ListWorkflowExecutions',
  'ScanWorkflowExecutions',
  'CountWorkflowExecutions',
  'GetSearchAttributes',
  'QueryWorkflow',
  'SignalWorkflowExecution',
  'RequestCancelWorkflowExecution',
  'TerminateWorkflowExecution',
  'RespondWorkflowTaskCompleted',
  'RespondWorkflowTaskFailed',
  'RespondActivityTaskCompleted',
  'RespondActivityTaskFailed',
  'RespondActivityTaskCanceled',
  'RecordActivityTaskHeartbeat',
  'RespondActivityTaskCompletedById',
  'RespondActivityTaskFailedById',
  'RespondActivityTaskCanceledById',
  'RecordActivityTaskHeartbeatById',
  'RespondQueryTaskCompleted',
  'DescribeTaskQueue',
  'ShutdownWorker',
] as const;

/** Long polls, for the all-random variant only (a valid namespace there would hold the call open). */
export const POLL_TARGETS = ['PollWorkflowTaskQueue', 'PollActivityTaskQueue'] as const;

/** Garbage request bodies: random bytes, broken varints/lengths, or a valid namespace followed by noise. */
export function garbageBody(rng: Rng, namespace: string): Buffer {
  switch (rng.int(4)) {
    case 0:
      return rng.bytes(1 + rng.int(64));
    case 1:
      // Field 1 as a length-delimited value whose length runs past the end.
      return Buffer.concat([Buffer.from([0x0a, 0x7f]), rng.bytes(rng.int(8))]);
    case 2:
      // An unterminated varint.
      return Buffer.from([0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    default: {
      const prefix = temporal.api.workflowservice.v1.DescribeNamespaceRequest.encode({ namespace }).finish();
      return Buffer.concat([Buffer.from(prefix), rng.bytes(1 + rng.int(48))]);
    }
  }
}

/** A task token a client might mangle: random bytes, a real one bit-flipped or cut short, JSON junk. */
export function garbledToken(rng: Rng, real: Buffer[]): Buffer {
  const base = real.length ? rng.pick(real) : rng.bytes(32);
  switch (rng.int(5)) {
    case 0:
      return rng.bytes(1 + rng.int(80));
    case 1: {
      const b = Buffer.from(base);
      b[rng.int(b.length)] ^= 1 << rng.int(8);
      return b;
    }
    case 2:
      return base.subarray(0, rng.int(base.length));
    case 3:
      return Buffer.from(
        JSON.stringify({ n: 'default', w: rng.int(1e6).toString(), r: 'x', k: rng.pick(['w', 'a', 'q', 'z']) }),
      );
    default:
      return Buffer.concat([base, rng.bytes(1 + rng.int(8))]);
  }
}

const ATTRS = [
  'WorkflowId',
  'WorkflowType',
  'ExecutionStatus',
  'StartTime',
  'CloseTime',
  'TaskQueue',
  'CustomKeyword',
  'CustomInt',
  'HistoryLength',
  'Bogus',
  '`Weird Name`',
];
const OPS = ['=', '!=', '<', '>=', 'IN', 'NOT IN', 'BETWEEN', 'STARTS_WITH', 'LIKE', 'IS', 'IS NOT', '=='];
const VALUES = [
  "'x'",
  '5',
  '-1',
  "'2024-01-01T00:00:00Z'",
  "('a', 'b')",
  'NULL',
  "'Running'",
  '1 AND 2',
  "'",
  '(',
  'TRUE',
  '1e99',
];
const JOINS = [' AND ', ' OR ', ' ', ') OR (', ' ORDER BY ', ' GROUP BY ', ' LIMIT '];

/** A visibility query made of real and bogus pieces; the server must accept it or say INVALID_ARGUMENT. */
export function randomQuery(rng: Rng): string {
  const parts: string[] = [];
  const n = 1 + rng.int(3);
  for (let i = 0; i < n; i++) {
    if (i > 0) parts.push(rng.pick(JOINS));
    if (rng.chance(0.2)) parts.push('(');
    parts.push(`${rng.pick(ATTRS)} ${rng.pick(OPS)} ${rng.pick(VALUES)}`);
    if (rng.chance(0.2)) parts.push(')');
  }
  return parts.join('');
}
