// The gateway's start thread against the embedded engine: a start made there
// is a real run, its errors reach the main thread with the name and gRPC code
// the gateway's error mapping reads, and a thread that dies fails its calls as
// "unavailable" (503) and is replaced by the next call.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import pino from 'pino';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { StartCallError, ThreadedStarter, WorkflowStarter, inProcessStarter, relayAwareStarter } from '../../../src/gateway/start-thread/starter';
import type { StartRequest } from '../../../src/gateway/start-thread/protocol';
import { mapTemporalError } from '../../../src/gateway/temporal-errors';
import { DependencyUnavailableError } from '../../../src/errors';
import { createEnv } from '../../workflows/env';

jest.setTimeout(60_000);
const logger = pino({ level: 'silent' });
let env: TestWorkflowEnvironment;
const starters: ThreadedStarter[] = [];

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  for (const s of starters) await s.close();
  await env?.teardown();
});

function threaded(address = env.address, entry?: string): ThreadedStarter {
  const s = new ThreadedStarter({ config: { address, namespace: 'default', logLevel: 'silent', logJson: true }, logger, entry });
  starters.push(s);
  return s;
}

const request = (workflowId: string, extra: Partial<StartRequest['options']> = {}): StartRequest => ({
  workflowType: 'neverWorked',
  deadlineMs: 5000,
  options: { workflowId, taskQueue: `nobody-${randomUUID()}`, args: [{ nested: { list: [1, 'two'] } }], memo: { account: 'a1' }, ...extra },
});

describe.each([
  ['in process', () => inProcessStarter(env.client, env.connection)],
  ['on the start thread', () => threaded()],
] as [string, () => WorkflowStarter][])('starting %s', (_name, make) => {
  test('starts the run with its args and memo', async () => {
    const id = `wf_${randomUUID()}`;
    await make().start(request(id));
    const desc = await env.client.workflow.getHandle(id).describe();
    expect(desc.type).toBe('neverWorked');
    expect(desc.memo).toEqual({ account: 'a1' });
    const history = await env.client.workflow.getHandle(id).fetchHistory();
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    expect(JSON.parse(Buffer.from(input!.data!).toString())).toEqual({ nested: { list: [1, 'two'] } });
    await env.client.workflow.getHandle(id).terminate();
  });

  test('a second start of the same id fails with WorkflowExecutionAlreadyStartedError', async () => {
    const id = `wf_${randomUUID()}`;
    const starter = make();
    await starter.start(request(id, { workflowIdReusePolicy: 'REJECT_DUPLICATE' }));
    const err = await starter.start(request(id, { workflowIdReusePolicy: 'REJECT_DUPLICATE' })).catch((e) => e);
    expect(err.name).toBe('WorkflowExecutionAlreadyStartedError');
    await env.client.workflow.getHandle(id).terminate();
  });
});

test('an unreachable engine is a 503 for the gateway, within the call deadline', async () => {
  const starter = threaded('127.0.0.1:1');
  const t0 = Date.now();
  const err = await starter.start({ ...request(`wf_${randomUUID()}`), deadlineMs: 1500 }).catch((e) => e);
  expect(Date.now() - t0).toBeLessThan(10_000);
  expect(err).toBeInstanceOf(StartCallError);
  expect(typeof err.code).toBe('number');
  expect(mapTemporalError(err)).toBeInstanceOf(DependencyUnavailableError);
});

test('a thread that dies fails its calls as unavailable; the next call gets a new thread', async () => {
  const dying = threaded(env.address, path.join(__dirname, 'fixtures/exit-on-start.ts'));
  await dying.ready();
  const err = await dying.start(request(`wf_${randomUUID()}`)).catch((e) => e);
  expect(err).toBeInstanceOf(StartCallError);
  expect(err.message).toMatch(/exited \(code 3\)/);
  expect(mapTemporalError(err)).toBeInstanceOf(DependencyUnavailableError);
  // The replacement is the same (dying) entry: it answers "ready" again, so a new thread was made.
  await expect(dying.ready()).resolves.toBeUndefined();
});

test('after close, starts fail at once as unavailable', async () => {
  const s = threaded();
  await s.ready();
  await s.close();
  const err = await s.start(request(`wf_${randomUUID()}`)).catch((e) => e);
  expect(mapTemporalError(err)).toBeInstanceOf(DependencyUnavailableError);
});

test('the relay-aware starter uses the thread only while streams are open, and closes both', async () => {
  const calls: string[] = [];
  const fake = (name: string): WorkflowStarter => ({
    start: async (req) => void calls.push(`${name}:${req.options.workflowId}`),
    close: async () => void calls.push(`${name}:closed`),
  });
  let streams = 0;
  const starter = relayAwareStarter(fake('here'), fake('thread'), () => streams > 0);
  await starter.start(request('a'));
  streams = 2;
  await starter.start(request('b'));
  streams = 0;
  await starter.start(request('c'));
  await starter.close();
  expect(calls).toEqual(['here:a', 'thread:b', 'here:c', 'here:closed', 'thread:closed']);
});
