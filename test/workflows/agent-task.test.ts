// The task, session and slots workflows on the embedded engine: the state
// machine, turn order, cancellation, failure, concurrency slots. Histories of
// these runs are saved (UPDATE_HISTORIES=1) for the replay test.
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError, WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createEnv, saveHistories as save, worker } from './env';
import { createSessionActivities } from '../../activities/sessions';
import { temporal } from '@temporalio/proto';
import type { TaskInput, TaskView } from '../../workflows/types';
import { costOf } from '../../workflows/types';
import type { RunSoFar } from '../../activities/model-turn';
import { statusQuery } from '../../workflows/agent-task';
import { messagesQuery } from '../../workflows/session';
import { slotsQuery } from '../../workflows/account-slots';

jest.setTimeout(60_000);
let env: TestWorkflowEnvironment;
const taskQueue = `wf-${randomUUID()}`;
const published: Record<string, { type: string; seq: number }[]> = {};
/** Activity calls by task id: the workflows should reach existing sessions and slots by signal. */
const calls: Record<string, string[]> = {};
const record = (taskId: string, name: string) => void (calls[taskId] ??= []).push(name);
/** The thread each model turn was given, by task id. */
const seen: Record<string, string[]> = {};

const activities = () => {
  const real = createSessionActivities({ temporal: env.client, config: { TEMPORAL_TASK_QUEUE: taskQueue } } as never);
  return {
    async joinSession(input: Parameters<typeof real.joinSession>[0]) {
      record(input.taskId, 'joinSession');
      return real.joinSession(input);
    },
    async finishTurn(input: Parameters<typeof real.finishTurn>[0]) {
      record(input.taskId, 'finishTurn');
      return real.finishTurn(input);
    },
    async requestSlot(input: Parameters<typeof real.requestSlot>[0]) {
      record(input.taskId, 'requestSlot');
      return real.requestSlot(input);
    },
    async publishEvents(input: { taskId: string; seqStart: number; events: { type: string }[] }) {
      record(input.taskId, 'publishEvents');
      (published[input.taskId] ??= []).push(...input.events.map((e, i) => ({ type: e.type, seq: input.seqStart + i })));
      return input.seqStart + input.events.length;
    },
    async computeCost() {
      throw new Error('runs started now compute their cost in the workflow');
    },
    async modelTurn(input: { taskId: string; seqStart: number; messages: { content: string }[]; prelude?: { type: string }[]; finish?: RunSoFar }) {
      record(input.taskId, 'modelTurn');
      seen[input.taskId] = input.messages.map((m) => m.content);
      const prelude = input.prelude ?? [];
      (published[input.taskId] ??= []).push(...prelude.map((e, i) => ({ type: e.type, seq: input.seqStart + i })));
      const seqStart = input.seqStart + prelude.length;
      const last = input.messages[input.messages.length - 1].content;
      if (last.startsWith('reject')) throw ApplicationFailure.nonRetryable('the model rejected the request (HTTP 400)', 'ModelBadRequest');
      if (last.startsWith('slow')) {
        for (let i = 0; i < 50; i++) {
          Context.current().heartbeat();
          await Context.current().sleep(100);
        }
      }
      const usage = { promptTokens: 3, completionTokens: 2 };
      const out = {
        content: `echo:${last}`,
        thinking: '',
        toolCalls: [],
        usage,
        nextSeq: seqStart + 3,
        events: [{ type: 'agent_response_start' }, { type: 'agent_response', content: `echo:${last}` }, { type: 'agent_step', step: '1' }],
      };
      if (!input.finish) return out;
      // Without tool calls the turn ends the run, as the real one does.
      const cost = costOf({ promptTokens: input.finish.usage.promptTokens + 3, completionTokens: input.finish.usage.completionTokens + 2 }, input.finish.price);
      published[input.taskId].push({ type: 'agent_cost', seq: out.nextSeq }, { type: 'agent_completed', seq: out.nextSeq + 1 });
      return { ...out, nextSeq: out.nextSeq + 2, finished: { cost, completedAt: new Date().toISOString() } };
    },
  };
};

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

function input(message: string, over: Partial<TaskInput> = {}): TaskInput {
  return {
    taskId: `task_${randomUUID().replace(/-/g, '')}`,
    account: 'acct',
    session: `sess_${randomUUID().replace(/-/g, '')}`,
    message,
    mode: 'base',
    streamTokens: false,
    background: false,
    createdAt: new Date().toISOString(),
    metadata: {},
    multitask: 'queue',
    modelHeartbeatTimeoutMs: 5000,
    ...over,
  };
}

function start(i: TaskInput): Promise<WorkflowHandle> {
  return env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
}

async function statusOf(h: WorkflowHandle): Promise<TaskView> {
  return h.query(statusQuery);
}

async function statusBecomes(h: WorkflowHandle, status: TaskView['status'], timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while ((await statusOf(h)).status !== status) {
    if (Date.now() > end) throw new Error(`${h.workflowId} did not become ${status} in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a task runs through queued -> running -> completed, publishes in order and joins the thread', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('hello', { price: { input: 100, output: 200 } });
    const h = await start(i);
    const r = await h.result();
    // 3 prompt and 2 completion tokens at 100 and 200 USD per million.
    expect(r).toMatchObject({ status: 'completed', output: 'echo:hello', cost: '0.000700' });
    expect((await statusOf(h)).status).toBe('completed');
    // The model turn (faked) used seqs 2-4 and, as the run's last, published its end after them.
    expect(published[i.taskId].map((e) => e.seq)).toEqual([1, 5, 6]);
    expect(published[i.taskId].map((e) => e.type)).toEqual(['agent_started', 'agent_cost', 'agent_completed']);
    // A new session: the run creates it (in the service the gateway does, alongside).
    expect(calls[i.taskId]).toEqual(['joinSession', 'modelTurn']);
    const session = env.client.workflow.getHandle(`session:${i.account}:${i.session}`);
    expect(await session.query(messagesQuery)).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'echo:hello' },
    ]);
    await save('completed', h, session);
  });
});

const EventType = temporal.api.enums.v1.EventType;

/** As the gateway submits: the run starts while its session (created if new) enqueues it. */
async function submitLikeGateway(i: TaskInput): Promise<WorkflowHandle> {
  const { joinSession } = createSessionActivities({ temporal: env.client, config: { TEMPORAL_TASK_QUEUE: taskQueue } } as never);
  const [h] = await Promise.all([start({ ...i, enqueued: true }), joinSession({ taskId: i.taskId, account: i.account, session: i.session })]);
  return h;
}

const eventTypes = async (h: WorkflowHandle) => ((await h.fetchHistory()).events ?? []).map((e) => EventType[e.eventType ?? 0]);

test('a run the gateway enqueued waits for its turn without signalling its session', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const session = `sess_${randomUUID().replace(/-/g, '')}`;
    const a = await submitLikeGateway(input('first', { session }));
    expect((await a.result()).output).toBe('echo:first');
    const b = await submitLikeGateway(input('second', { session }));
    expect((await b.result()).output).toBe('echo:second');
    for (const h of [a, b]) {
      expect(calls[h.workflowId]).toEqual(['modelTurn']);
      const types = await eventTypes(h);
      // One signal only, turnDone at the end; the grace timer was cancelled by the turn.
      expect(types.filter((t) => t === 'EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED')).toHaveLength(1);
      expect(types).toContain('EVENT_TYPE_TIMER_CANCELED');
    }
    const s = env.client.workflow.getHandle(`session:acct:${session}`);
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual(['first', 'echo:first', 'second', 'echo:second']);
    await save('gateway-joined', a, b, s);
  });
});

/** As the gateway submits a run that starts a new session: the session opens with the run holding its turn. */
async function openLikeGateway(i: TaskInput, idleCloseMs?: number): Promise<WorkflowHandle> {
  const [h] = await Promise.all([
    start({ ...i, enqueued: true, ownsTurn: true }),
    env.client.workflow.start('agentSession', {
      taskQueue,
      workflowId: `session:${i.account}:${i.session}`,
      args: [{ account: i.account, session: i.session, messages: [], queue: [], active: i.taskId, idleCloseMs }],
    }),
  ]);
  return h;
}

test('an idle session closes with its thread as its result; the next run reopens it with that thread', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const session = `sess_${randomUUID().replace(/-/g, '')}`;
    const a = await openLikeGateway(input('first', { session }), 1500);
    await a.result();
    const s = env.client.workflow.getHandle(`session:acct:${session}`);
    const t0 = Date.now();
    expect(((await s.result()) as { messages: { content: string }[] }).messages.map((m) => m.content)).toEqual(['first', 'echo:first']);
    expect(Date.now() - t0).toBeGreaterThan(500);
    const closed = await s.describe();
    expect(closed.status.name).toBe('COMPLETED');
    // A closed session still answers for its thread.
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual(['first', 'echo:first']);
    const b = await submitLikeGateway(input('second', { session }));
    expect((await b.result()).output).toBe('echo:second');
    expect(seen[b.workflowId]).toEqual(['first', 'echo:first', 'second']);
    const reopened = env.client.workflow.getHandle(`session:acct:${session}`);
    expect((await reopened.describe()).status.name).toBe('RUNNING');
    expect((await reopened.query(messagesQuery)).map((m) => m.content)).toEqual(['first', 'echo:first', 'second', 'echo:second']);
    await save('idle-close', a, env.client.workflow.getHandle(`session:acct:${session}`, closed.runId), b, reopened);
  });
});

test("a new session's first run holds its turn from the start; the next run waits for it", async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const session = `sess_${randomUUID().replace(/-/g, '')}`;
    const a = await openLikeGateway(input('slow first', { session }));
    await new Promise((r) => setTimeout(r, 300));
    const b = await submitLikeGateway(input('second', { session }));
    await new Promise((r) => setTimeout(r, 300));
    expect((await statusOf(a)).status).toBe('running');
    expect((await statusOf(b)).status).toBe('queued');
    expect((await a.result()).output).toBe('echo:slow first');
    expect((await b.result()).output).toBe('echo:second');
    expect(calls[a.workflowId]).toEqual(['modelTurn']);
    const typesA = await eventTypes(a);
    // No grant came in, no grace timer ran, and the only signal out is turnDone.
    expect(typesA).not.toContain('EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED');
    expect(typesA).not.toContain('EVENT_TYPE_TIMER_STARTED');
    expect(typesA.filter((t) => t === 'EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED')).toHaveLength(1);
    const s = env.client.workflow.getHandle(`session:acct:${session}`);
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual(['slow first', 'echo:slow first', 'second', 'echo:second']);
    // The session granted one turn only: the second run's.
    expect((await eventTypes(s)).filter((t) => t === 'EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED')).toHaveLength(1);
    await save('owned-turn', a, b, s);
  });
});

test('a run holding its turn whose session was never opened creates it at its end, with the thread', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('lonely', { enqueued: true, ownsTurn: true });
    const h = await start(i);
    expect((await h.result()).output).toBe('echo:lonely');
    expect(calls[i.taskId]).toEqual(['modelTurn', 'finishTurn']);
    const s = env.client.workflow.getHandle(`session:${i.account}:${i.session}`);
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual(['lonely', 'echo:lonely']);
    // The session it created serves the next run as usual.
    const b = await submitLikeGateway(input('again', { session: i.session }));
    expect((await b.result()).output).toBe('echo:again');
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual(['lonely', 'echo:lonely', 'again', 'echo:again']);
    await save('owned-turn-no-session', h, s);
  });
});

test('a run the gateway meant to enqueue but never did joins its session after the grace period', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('orphan', { enqueued: true, joinGraceMs: 3000 });
    const t0 = Date.now();
    const h = await start(i);
    await new Promise((r) => setTimeout(r, 1000));
    expect((await statusOf(h)).status).toBe('queued');
    expect((await h.result()).output).toBe('echo:orphan');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2900);
    // The session did not exist: the run created it through the fallback activity.
    expect(calls[i.taskId]).toEqual(['joinSession', 'modelTurn']);
    await save('join-after-grace', h);
  });
});

test('runs of one session take turns; a cancelled run gives the turn back', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const session = `sess_${randomUUID().replace(/-/g, '')}`;
    const a = await start(input('slow first', { session }));
    // How soon the first run holds the turn depends on the engine: wait for it.
    await statusBecomes(a, 'running');
    const b = await start(input('second', { session }));
    await new Promise((r) => setTimeout(r, 300));
    expect((await statusOf(a)).status).toBe('running');
    expect((await statusOf(b)).status).toBe('queued');
    await a.cancel();
    const err = await a.result().catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((await statusOf(a)).status).toBe('cancelled');
    expect((await b.result()).output).toBe('echo:second');
    // The session existed: the second run joined it by signal, no activity.
    expect(calls[b.workflowId]).toEqual(['modelTurn']);
    // The cancelled run added nothing to the thread.
    const s = env.client.workflow.getHandle(`session:acct:${session}`);
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual(['second', 'echo:second']);
    await save('session-turns', a, b, s);
  });
});

test('a model 400 fails the task with its type; status carries the error', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const h = await start(input('reject me'));
    const err = await h.result().catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err.cause as ApplicationFailure).type).toBe('ModelBadRequest');
    const v = await statusOf(h);
    expect(v.status).toBe('failed');
    expect(v.error?.type).toBe('ModelBadRequest');
    await save('failed', h);
  });
});

test('background tasks of an account wait for a slot', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const account = `acct-${randomUUID().slice(0, 8)}`;
    const slots = { limit: 1, leaseMs: 5000 };
    const a = await start(input('slow one', { account, background: true, slots }));
    await new Promise((r) => setTimeout(r, 400));
    const b = await start(input('two', { account, background: true, slots }));
    await new Promise((r) => setTimeout(r, 400));
    expect((await statusOf(b)).status).toBe('queued');
    await a.result();
    expect((await b.result()).output).toBe('echo:two');
    // The account's slots workflow existed for the second task: a signal, no activity.
    expect(calls[a.workflowId]).toEqual(['joinSession', 'requestSlot', 'modelTurn']);
    expect(calls[b.workflowId]).toEqual(['joinSession', 'modelTurn']);
    await save('slots', a, b, env.client.workflow.getHandle(`slots:${account}`));
  });
});

test('slots free at the same time are granted together, in one workflow task', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const account = `acct-${randomUUID().slice(0, 8)}`;
    // Runs that exist and wait (for a session turn that does not come): they only have to receive a grant.
    const tasks = await Promise.all([1, 2, 3].map((k) => start(input(`waiting ${k}`, { account, enqueued: true, joinGraceMs: 60_000 }))));
    const createdAt = new Date().toISOString();
    const slots = await env.client.workflow.start('accountSlots', {
      taskQueue,
      workflowId: `slots:${account}`,
      args: [{ account, limit: 3, leaseMs: 60_000, holders: {}, waiting: tasks.map((t) => ({ taskId: t.workflowId, createdAt })) }],
    });
    const acked = async () => (await eventTypes(slots)).filter((t) => t === 'EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED').length;
    for (let i = 0; i < 100 && (await acked()) < 3; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await slots.query(slotsQuery)).running.sort()).toEqual(tasks.map((t) => t.workflowId).sort());
    // The commands of the first workflow task: the patch marker and all three grants.
    const types = await eventTypes(slots);
    const first = types.indexOf('EVENT_TYPE_WORKFLOW_TASK_COMPLETED');
    const commands = types.slice(first + 1, types.indexOf('EVENT_TYPE_WORKFLOW_TASK_SCHEDULED', first));
    expect(commands).toContain('EVENT_TYPE_MARKER_RECORDED');
    expect(commands.filter((t) => t === 'EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED')).toHaveLength(3);
    await Promise.all(tasks.map((t) => t.terminate('test over')));
    await slots.terminate('test over');
    await save('parallel-grants', slots);
  });
});
