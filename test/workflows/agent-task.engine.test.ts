// The task and slots workflows on the engine: the state machine, the tool loop, caps,
// messages into a running task, failure, concurrency slots, and the watch that frees a
// terminated run's slot (agent-task-sessions.engine.test.ts: turn order in a session).
// Histories of these runs are saved (UPDATE_HISTORIES=1) for the replay test.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createEnv, saveHistories as save, worker } from './env';
import { fakeActivities, recorder } from './fake-activities';
import { input, TaskHandles } from './task-handles';
import type { PartialResult } from '../../workflows/types';
import { waitUntil } from '../support/wait-until';
import { messagesQuery, messageUpdate, slotsQuery, threadQuery, watchQueueOf } from '../../workflows/definitions';

jest.setTimeout(90_000);
let env: TestWorkflowEnvironment;
const taskQueue = `wf-${randomUUID()}`;
const rec = recorder();
const { published, calls, seen } = rec;
const activities = () => fakeActivities(() => env, taskQueue, rec);

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

const {
  start,
  statusOf,
  statusBecomes,
  hasEvent,
  eventTypes,
  submitLikeGateway,
  openLikeGateway,
  startLazyLikeGateway,
} = new TaskHandles(() => env, taskQueue);

const types = (taskId: string) => published[taskId].map((e) => e.type);

test('a task runs through queued -> running -> completed, publishes in order and joins the thread', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('hello', { price: { input: 100, output: 200 } });
    const h = await start(i);
    const r = await h.result();
    // 3 prompt and 2 completion tokens at 100 and 200 USD per million.
    expect(r).toMatchObject({
      status: 'completed',
      output: 'echo:hello',
      cost: '0.000700',
      usage: { promptTokens: 3, completionTokens: 2 },
    });
    expect(r.events.map((e: { type: string }) => e.type)).toEqual([
      'agent_started',
      'agent_response_start',
      'agent_response',
      'agent_step',
      'agent_cost',
      'agent_completed',
    ]);
    expect((await statusOf(h)).status).toBe('completed');
    expect(types(i.taskId)).toEqual([
      'agent_started',
      'agent_response_start',
      'agent_response',
      'agent_step',
      'agent_cost',
      'agent_completed',
    ]);
    expect(published[i.taskId].map((e) => e.producer)).toEqual(['s1', 's1', 's1', 's1', 'end', 'end']);
    // A new session: the run creates it after the grace period (in the service the gateway does, alongside).
    expect(calls[i.taskId]).toEqual(['joinSession', 'modelTurn', 'publishEnd']);
    const session = env.client.workflow.getHandle(`session:${i.account}:${i.session}`);
    expect(await session.query(messagesQuery)).toEqual([
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'echo:hello' },
    ]);
    await save('completed', h, session);
  });
});

test('the tool loop: parallel calls run as activities, their results go back to the model, which then answers', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('tools:3', { ownsTurn: true });
    const h = await start(i);
    const r = await h.result();
    expect(r.output).toBe('results:10,20,30');
    expect(calls[i.taskId]).toEqual([
      'modelTurn',
      'runTool',
      'runTool',
      'runTool',
      'modelTurn',
      'finishTurn',
      'publishEnd',
    ]);
    // Usage of both turns.
    expect(r.usage).toEqual({ promptTokens: 6, completionTokens: 4 });
    const ev = r.events.map((e: { type: string }) => e.type);
    expect(ev).toEqual([
      'agent_started',
      ...Array(3).fill(['agent_tool_use_start', 'agent_tool_use']).flat(),
      ...Array(3).fill('agent_tool_response'),
      'agent_step',
      'agent_response_start',
      'agent_response',
      'agent_step',
      'agent_cost',
      'agent_completed',
    ]);
    // Each response published once, by its own producer; the first step in the second turn's prelude.
    const relay = published[i.taskId];
    expect(
      relay
        .filter((e) => e.type === 'agent_tool_response')
        .map((e) => e.producer)
        .sort(),
    ).toEqual(['s1:t0', 's1:t1', 's1:t2']);
    expect(relay.find((e) => e.type === 'agent_step')?.producer).toBe('s2');
    // The second turn read the whole thread by query: the task, the calls, the results.
    expect(seen[i.taskId][1]).toEqual(['tools:3', '', '10', '20', '30']);
    const thread = await h.query(threadQuery, 0);
    expect(thread.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'assistant']);
    await save('tool-loop', h);
  });
});

test('a failing tool and an unknown tool come back to the model as error results; the run completes', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const bad = await start(input('badtool', { ownsTurn: true }));
    expect((await bad.result()).output).toMatch(/^tool said: Error: /);
    const responses = (await bad.result()).events.filter((e: { type: string }) => e.type === 'agent_tool_response');
    expect(responses).toEqual([expect.objectContaining({ is_error: true })]);
    const unknown = await start(input('unknowntool', { ownsTurn: true }));
    expect((await unknown.result()).output).toBe('tool said: Error: no tool named "no_such_tool" is offered');
    // Not run as an activity, so its response is published in the next turn's prelude.
    expect(published[unknown.workflowId].find((e) => e.type === 'agent_tool_response')?.producer).toBe('s2');
  });
});

test('max_steps ends the run with step_limit, keeping what it produced', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const h = await start(input('loop:10', { ownsTurn: true, maxSteps: 3 }));
    const err = await h.result().catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = err.cause as ApplicationFailure;
    expect(cause.type).toBe('step_limit');
    const partial = cause.details?.[0] as PartialResult;
    expect(partial.events.filter((e) => e.type === 'agent_step')).toHaveLength(3);
    expect(partial.events.slice(-2).map((e) => e.type)).toEqual(['agent_cost', 'agent_error']);
    expect(calls[h.workflowId].filter((c) => c === 'modelTurn')).toHaveLength(3);
    const v = await statusOf(h);
    expect(v).toMatchObject({ status: 'failed', error: { type: 'step_limit' } });
    // The third step's agent_step was pending: it went out with the end.
    expect(published[h.workflowId].slice(-3).map((e) => [e.type, e.producer])).toEqual([
      ['agent_step', 'end'],
      ['agent_cost', 'end'],
      ['agent_error', 'end'],
    ]);
    await save('step-limit', h);
  });
});

test('max_cost ends the run with budget_exceeded before a turn it cannot afford', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    // 0.0007 USD a turn: the budget is spent after the second.
    const h = await start(input('loop:10', { ownsTurn: true, price: { input: 100, output: 200 }, maxCost: 0.0012 }));
    const err = await h.result().catch((e) => e);
    expect((err.cause as ApplicationFailure).type).toBe('budget_exceeded');
    expect(((err.cause as ApplicationFailure).details?.[0] as PartialResult).cost).toBe('0.001400');
    expect(calls[h.workflowId].filter((c) => c === 'modelTurn')).toHaveLength(2);
  });
});

test('a message sent into a running task is read before its next model turn, announced by agent_input', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('slow one', { ownsTurn: true });
    const h = await start(i);
    await statusBecomes(h, 'running');
    const accepted = await h.executeUpdate(messageUpdate, { args: [{ message: 'and another thing' }] });
    expect(accepted).toEqual({ accepted: true, pending: 1 });
    const r = await h.result();
    // The first turn answered without tools, but a message was waiting: one more turn for it.
    expect(r.output).toBe('echo:and another thing');
    expect(types(i.taskId)).toContain('agent_input');
    expect(seen[i.taskId][1]).toEqual(['slow one', 'echo:slow one', 'and another thing']);
    // The session keeps both of the user's messages and the final answer.
    const s = env.client.workflow.getHandle(`session:${i.account}:${i.session}`);
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual([
      'slow one',
      'and another thing',
      'echo:and another thing',
    ]);
    // A finished task refuses messages.
    await expect(h.executeUpdate(messageUpdate, { args: [{ message: 'too late' }] })).rejects.toThrow();
    await save('message-in', h);
  });
});

test('a bug met in workflow code fails the workflow task, not the run', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const h = await start(input('malformed', { ownsTurn: true }));
    await hasEvent(h, 'EVENT_TYPE_WORKFLOW_TASK_FAILED', 'a failed workflow task');
    expect((await h.describe()).status.name).toBe('RUNNING');
    await h.terminate('test over');
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
    const slots = { limit: 1 };
    const a = await start(input('slow one', { account, background: true, slots }));
    // The first task's requestSlot made the account's slots workflow (waited for: a loaded machine may take a while).
    const slotsHandle = env.client.workflow.getHandle(`slots:${account}`);
    await waitUntil("the account's slots workflow", () => slotsHandle.describe(), { stepMs: 50 });
    const b = await start(input('two', { account, background: true, slots }));
    await waitUntil(
      'the second task waiting for a slot',
      () => slotsHandle.query(slotsQuery),
      (q) => q.waiting.includes(b.workflowId),
    );
    expect((await statusOf(b)).status).toBe('queued');
    await a.result();
    expect((await b.result()).output).toBe('echo:two');
    // The account's slots workflow existed for the second task: a signal, no activity.
    expect(calls[a.workflowId]).toEqual(['joinSession', 'requestSlot', 'modelTurn', 'publishEnd']);
    expect(calls[b.workflowId]).toEqual(['joinSession', 'modelTurn', 'publishEnd']);
    await save('slots', a, b, env.client.workflow.getHandle(`slots:${account}`));
  });
});

test('a background run gives its slot back from its end activity: it signals the slots workflow once, to ask', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const account = `acct-${randomUUID().slice(0, 8)}`;
    const slots = await env.client.workflow.start('accountSlots', {
      taskQueue,
      workflowId: `slots:${account}`,
      args: [{ account, limit: 1, holders: {}, waiting: [] }],
    });
    const given = input('given back', { account, background: true });
    // As the gateway starts a background run (src/common/tasks/task-input.ts).
    const i = { ...given, admission: { ...given.admission, slots: { limit: 1, releasedByEnd: true as const } } };
    const h = await startLazyLikeGateway(i);
    expect((await h.result()).output).toBe('echo:given back');
    await waitUntil(
      'the slot given back',
      () => slots.query(slotsQuery),
      (q) => q.running.length === 0,
    );
    expect(calls[h.workflowId]).toEqual(['modelTurn', 'publishEnd']);
    const events = (await h.fetchHistory()).events ?? [];
    const out = events
      .map((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName)
      .filter(Boolean);
    expect(out).toEqual(['acquire']);
    await save('slot-given-back-by-end', h, slots);
  });
});

test('slots free at the same time are granted together, in one workflow task', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const account = `acct-${randomUUID().slice(0, 8)}`;
    // Runs that exist and wait (for a session turn that does not come): they only have to receive a grant.
    const tasks = await Promise.all(
      [1, 2, 3].map((k) => start(input(`waiting ${k}`, { account, joinGraceMs: 60_000 }))),
    );
    const createdAt = new Date().toISOString();
    const slots = await env.client.workflow.start('accountSlots', {
      taskQueue,
      workflowId: `slots:${account}`,
      args: [{ account, limit: 3, holders: {}, waiting: tasks.map((t) => ({ taskId: t.workflowId, createdAt })) }],
    });
    const acked = async () =>
      (await eventTypes(slots)).filter((t) => t === 'EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED').length;
    await waitUntil('the three grants delivered', acked, (n) => n >= 3);
    expect((await slots.query(slotsQuery)).running.sort()).toEqual(tasks.map((t) => t.workflowId).sort());
    // The commands of the first workflow task: all three grants.
    const history = await eventTypes(slots);
    const first = history.indexOf('EVENT_TYPE_WORKFLOW_TASK_COMPLETED');
    const commands = history.slice(first + 1, history.indexOf('EVENT_TYPE_WORKFLOW_TASK_SCHEDULED', first));
    expect(commands.filter((t) => t === 'EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED')).toHaveLength(3);
    await Promise.all(tasks.map((t) => t.terminate('test over')));
    await slots.terminate('test over');
    await save('parallel-grants', slots);
  });
});

// Seen by the session either way: the watch of the run's close (the worker process serves the watch
// queue apart), or its periodic check alone (no worker on the watch queue; every 500 ms here).
test.each([
  ['the watch of its close', true],
  ['its periodic check alone', false],
])(
  "terminating a session's active run frees the turn and the account slot, seen by %s: the next runs complete",
  async (_how, watching) => {
    const w = await worker(env, taskQueue, activities());
    const watcher = watching
      ? await Worker.create({
          connection: env.nativeConnection,
          namespace: 'default',
          taskQueue: watchQueueOf(taskQueue),
          activities: { awaitRunClose: activities().awaitRunClose },
        })
      : undefined;
    const both = (body: () => Promise<void>) => (watcher ? watcher.runUntil(() => w.runUntil(body)) : w.runUntil(body));
    await both(async () => {
      const session = `sess_${randomUUID().replace(/-/g, '')}`;
      const account = `acct-${randomUUID().slice(0, 8)}`;
      const slots = { limit: 1 };
      // The slots workflow's own check of its holders is ten minutes away: only the session can free the slot.
      await env.client.workflow.start('accountSlots', {
        taskQueue,
        workflowId: `slots:${account}`,
        args: [{ account, limit: 1, watchMs: 600_000, holders: {}, waiting: [] }],
      });
      const a = await openLikeGateway(input('slow first', { session, account, background: true, slots }));
      await statusBecomes(a, 'running');
      const b = await submitLikeGateway(input('second', { session, account }));
      const c = await start(input('elsewhere', { account, background: true, slots, ownsTurn: true }));
      await a.terminate('operator stop');
      // The session waits for its active run's close (and checks every 500 ms here), hands the turn on
      // and gives back the slot the terminated run held.
      expect((await b.result()).output).toBe('echo:second');
      expect((await c.result()).output).toBe('echo:elsewhere');
      const s = env.client.workflow.getHandle(`session:${account}:${session}`);
      expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual(['second', 'echo:second']);
      await save(watching ? 'terminated-turn' : 'terminated-turn-checked', s);
      await save(
        watching ? 'terminated-turn-slot' : 'terminated-turn-slot-checked',
        env.client.workflow.getHandle(`slots:${account}`),
      );
    });
  },
);

// Its session never opened (a run that named none), so only the slots workflow can see the close: while
// a task waits it checks its holders every few seconds, though its watch interval here is ten minutes.
test('a terminated holder loses its slot to the next task: checked every few seconds while tasks wait', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const account = `acct-${randomUUID().slice(0, 8)}`;
    const slots = { limit: 1 };
    await env.client.workflow.start('accountSlots', {
      taskQueue,
      workflowId: `slots:${account}`,
      args: [{ account, limit: 1, watchMs: 600_000, holders: {}, waiting: [] }],
    });
    const a = await start(input('slow one', { account, background: true, slots, ownsTurn: true }));
    await statusBecomes(a, 'running');
    const b = await start(input('two', { account, background: true, slots, ownsTurn: true }));
    await waitUntil(
      'the second task waiting for a slot',
      () => env.client.workflow.getHandle(`slots:${account}`).query(slotsQuery),
      (q) => q.waiting.includes(b.workflowId),
    );
    expect((await statusOf(b)).status).toBe('queued');
    await a.terminate('operator stop');
    expect((await b.result()).output).toBe('echo:two');
    await save('terminated-slot-waiting-check', env.client.workflow.getHandle(`slots:${account}`));
  });
});
