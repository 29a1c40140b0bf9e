// The gateway's start thread against the embedded engine: a start made there
// is a real run, a describe reads its memo, an enqueue reaches (or opens) the
// session, errors reach the main thread with the name and gRPC code the
// gateway's error mapping reads, and a thread that dies fails its calls as
// "unavailable" (503) and is replaced by the next call.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import pino from 'pino';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  StartCallError,
  ThreadedStarter,
  WorkflowStarter,
  inProcessStarter,
  relayAwareStarter,
} from '../../../src/gateway/start-thread/starter';
import type { StartRequest } from '../../../src/gateway/start-thread/protocol';
import { mapTemporalError } from '../../../src/gateway/services/temporal-errors';
import { DependencyUnavailableError, NotFoundError } from '../../../src/common/errors';
import { SEARCH_ATTRIBUTES, sessionWorkflowId } from '../../../workflows/types';
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
  const s = new ThreadedStarter({
    config: { address, namespace: 'default', logLevel: 'silent', logJson: true },
    logger,
    entry,
  });
  starters.push(s);
  return s;
}

const request = (workflowId: string, extra: Partial<StartRequest['options']> = {}): StartRequest => ({
  workflowType: 'neverWorked',
  deadlineMs: 5000,
  options: {
    workflowId,
    taskQueue: `nobody-${randomUUID()}`,
    args: [{ nested: { list: [1, 'two'] } }],
    memo: { account: 'a1' },
    ...extra,
  },
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

  test('describe reads the memo and start time; a missing workflow is a 404 for the gateway', async () => {
    const id = `wf_${randomUUID()}`;
    const starter = make();
    const before = Date.now();
    await starter.start(request(id));
    const d = await starter.describe({ workflowId: id, deadlineMs: 5000 });
    expect(d.memo).toEqual({ account: 'a1' });
    expect(Date.parse(d.startTime)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(d.startTime)).toBeLessThanOrEqual(Date.now() + 1000);
    const err = await starter.describe({ workflowId: `missing_${randomUUID()}`, deadlineMs: 5000 }).catch((e) => e);
    expect(err.name).toBe('WorkflowNotFoundError');
    const mapped = mapTemporalError(err, 'session s1 not found');
    expect(mapped).toBeInstanceOf(NotFoundError);
    expect(mapped.message).toBe('session s1 not found');
    await env.client.workflow.getHandle(id).terminate();
  });

  test('enqueue opens a missing session with the signal, then signals the open one', async () => {
    const ref = {
      account: `acct_${randomUUID().slice(0, 8)}`,
      session: 'sess_1',
      taskQueue: `nobody-${randomUUID()}`,
      idleCloseMs: 0,
      watchMs: 60_000,
    };
    const starter = make();
    await starter.enqueue({ ref, taskId: 'task_a', deadlineMs: 5000 });
    await starter.enqueue({ ref, taskId: 'task_b', deadlineMs: 5000 });
    const handle = env.client.workflow.getHandle(sessionWorkflowId(ref.account, ref.session));
    const desc = await handle.describe();
    expect(desc.type).toBe('agentSession');
    // Findable per account in visibility (GET /sessions), with its creation time.
    expect(desc.memo).toEqual({
      account: ref.account,
      session: ref.session,
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/),
    });
    expect(desc.searchAttributes).toMatchObject({
      [SEARCH_ATTRIBUTES.account]: [ref.account],
      [SEARCH_ATTRIBUTES.session]: [ref.session],
    });
    const history = await handle.fetchHistory();
    const started = history.events!.filter((e) => e.workflowExecutionStartedEventAttributes);
    const signals = history.events!.flatMap((e) => {
      const a = e.workflowExecutionSignaledEventAttributes;
      return a ? [[a.signalName, JSON.parse(Buffer.from(a.input!.payloads![0].data!).toString())]] : [];
    });
    expect(started).toHaveLength(1);
    expect(signals).toEqual([
      ['enqueue', { taskId: 'task_a' }],
      ['enqueue', { taskId: 'task_b' }],
    ]);
    await handle.terminate();
  });
});

test('an unreachable engine is a 503 for the gateway, within the call deadline', async () => {
  // Nothing ever answers there: a call its deadline did not end would hold the test to its timeout.
  const starter = threaded('127.0.0.1:1');
  const err = await starter.start({ ...request(`wf_${randomUUID()}`), deadlineMs: 1500 }).catch((e) => e);
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

test('the relay-aware starter makes every call on the thread only while streams are open, and closes both', async () => {
  const calls: string[] = [];
  const fake = (name: string): WorkflowStarter => ({
    start: async (req) => void calls.push(`${name}:start ${req.options.workflowId}`),
    describe: async (req) => {
      calls.push(`${name}:describe ${req.workflowId}`);
      return { type: 'agentTask', status: 'RUNNING', memo: {}, startTime: new Date(0).toISOString() };
    },
    enqueue: async (req) => void calls.push(`${name}:enqueue ${req.taskId}`),
    close: async () => void calls.push(`${name}:closed`),
  });
  let streams = 0;
  const starter = relayAwareStarter(fake('here'), fake('thread'), () => streams > 0);
  const ref = { account: 'a', session: 's', taskQueue: 'q', idleCloseMs: 0, watchMs: 60_000 };
  await starter.start(request('a'));
  await starter.describe({ workflowId: 'd1', deadlineMs: 1 });
  streams = 2;
  await starter.start(request('b'));
  await starter.describe({ workflowId: 'd2', deadlineMs: 1 });
  await starter.enqueue({ ref, taskId: 't2', deadlineMs: 1 });
  streams = 0;
  await starter.enqueue({ ref, taskId: 't3', deadlineMs: 1 });
  await starter.close();
  expect(calls).toEqual([
    'here:start a',
    'here:describe d1',
    'thread:start b',
    'thread:describe d2',
    'thread:enqueue t2',
    'here:enqueue t3',
    'here:closed',
    'thread:closed',
  ]);
});
