// End-to-end harness: the real processes (embedded engine, private redis-server,
// worker, gateway) and the scripted model, started by the same code as `npm start`.
import { Client, Connection } from '@temporalio/client';
import { startStack, Stack, StackOptions } from '../../src/dev/launcher/stack';
import { codecDataConverter, codecFromKeys } from '../../src/common/codec/data-converter';
import { waitUntil } from '../support/wait-until';

export const KEY_A = 'key-alice-0123456789';
export const KEY_B = 'key-bob-0123456789';

/** This process's environment without what would point a test stack at someone else's services. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [
    'TEMPORAL_ADDRESS',
    'REDIS_URL',
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'PORT',
    'API_KEYS',
    'DATA_DIR',
    'WORKER_METRICS_PORT',
    'METRICS_INCLUDE_URLS',
  ])
    delete base[k];
  return base;
}

/** A stack keeping its data in `dataDir` (engine file, Redis' append-only file), as npm start does: a restart on it finds everything again. */
export function startPersistentStack(dataDir: string, env: Record<string, string> = {}): Promise<Stack> {
  return startStack({
    dataDir,
    gatewayPort: 0,
    temporalPort: 0,
    demoMcpPort: 0,
    demoWebPort: 0,
    env: { ...cleanEnv(), API_KEYS: `${KEY_A}:alice`, LOG_LEVEL: 'warn', ...env },
  });
}

export async function startTestStack(
  env: Record<string, string> = {},
  opts: Pick<StackOptions, 'childLogs' | 'workerMetricsPort'> = {},
): Promise<Stack> {
  const base = cleanEnv();
  return startStack({
    gatewayPort: 0,
    temporalPort: 0,
    demoMcpPort: 0,
    demoWebPort: 0,
    env: { ...base, API_KEYS: `${KEY_A}:alice,${KEY_B}:bob`, LOG_LEVEL: 'warn', SSE_HEARTBEAT_MS: '1000', ...env },
    ...opts,
  });
}

/** One stack per test file: registers beforeAll/afterAll and returns accessors. */
export function useStack(
  env: Record<string, string> = {},
  opts: Pick<StackOptions, 'childLogs' | 'workerMetricsPort'> = {},
): { stack(): Stack; call: Api } {
  let stack: Stack | undefined;
  let caller: Api | undefined;
  beforeAll(async () => {
    stack = await startTestStack(env, opts);
    caller = api(stack);
  });
  afterAll(async () => {
    await stack?.stop();
  });
  return {
    stack: () => stack!,
    call: (method, path, opts) => caller!(method, path, opts),
  };
}

export interface Api {
  (
    method: string,
    path: string,
    opts?: {
      body?: unknown;
      key?: string | null;
      headers?: Record<string, string>;
      raw?: string | Buffer;
      contentType?: string;
      form?: FormData;
    },
  ): Promise<{ status: number; headers: Headers; json: any; text: string }>;
}

export function api(stack: Stack): Api {
  return async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.key !== null) headers.authorization = `Bearer ${opts.key ?? KEY_A}`;
    if (opts.contentType) headers['content-type'] = opts.contentType;
    // A form goes as multipart/form-data, its boundary in the Content-Type fetch writes.
    let body: string | Buffer | FormData | undefined = opts.form ?? opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${stack.gatewayUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, json, text };
  };
}

/** A multipart/form-data body: `fields`, and `file` as the part named file (with a filename and, when given, a type). */
export function formOf(
  fields: Record<string, string>,
  file?: { data: string | Buffer; name: string; type?: string },
): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) form.append('file', new Blob([file.data], { type: file.type ?? '' }), file.name);
  return form;
}

export interface SseEvent {
  id?: string;
  event?: string;
  data: any;
}

/** Reads an SSE response (fetch-based: POST streams) until it ends or `until` says stop. */
export async function readSse(res: Response, until?: (ev: SseEvent) => boolean): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const ev: Partial<SseEvent> & { lines: string[] } = { lines: [] };
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const [k, ...rest] = line.split(':');
        const v = rest.join(':').replace(/^ /, '');
        if (k === 'id') ev.id = v;
        else if (k === 'event') ev.event = v;
        else if (k === 'data') ev.lines.push(v);
      }
      if (!ev.lines.length) continue;
      const parsed: SseEvent = { id: ev.id, event: ev.event, data: JSON.parse(ev.lines.join('\n')) };
      out.push(parsed);
      if (until?.(parsed)) {
        await reader.cancel();
        return out;
      }
    }
  }
  return out;
}

export function postStream(stack: Stack, body: unknown, path = '/', key = KEY_A): Promise<Response> {
  return fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(body),
  });
}

// The suite's one poll (test/support/wait-until.ts), here too for the files that take everything from this one.
export { waitUntil } from '../support/wait-until';

/** A deliberate pause: only for time that must pass in the scenario, and the caller says why (docs/testing.md, "Waiting in tests"). */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `fn` with a Temporal client of the stack's engine (for what the API does
 * not show), then closes it. It has the service's payload codec: it reads and
 * writes payloads as the gateway and worker do (test/e2e/raw-history.ts reads
 * them as stored).
 */
export async function withTemporal<T>(stack: Stack, fn: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    return await fn(
      new Client({ connection, dataConverter: codecDataConverter(codecFromKeys(stack.env.PAYLOAD_KEYS!)) }),
    );
  } finally {
    await connection.close();
  }
}

/**
 * Waits until the schedule's first recent run (its scheduledRun workflow) has closed, as Temporal
 * records it: a trigger's run is never among the API's running_tasks (it may overlap anything).
 */
export function scheduleRunClosed(stack: Stack, scheduleId: string): Promise<void> {
  return withTemporal(stack, async (client) => {
    const [first] = (await client.schedule.getHandle(scheduleId).describe()).info.recentActions;
    const run = client.workflow.getHandle(first.action.workflow.workflowId, first.action.workflow.firstExecutionRunId);
    await waitUntil(
      `schedule ${scheduleId}'s first run closed`,
      async () => (await run.describe()).status.name !== 'RUNNING',
    );
  });
}
