// The task and session workflows on the engine: a run takes its turn in its session as the
// gateway submits it (enqueued, or opening a new session), hands its exchange over, an idle
// session closes and reopens, runs of one session take turns, an interrupted run hands its exchange
// over marked, and a cancelled or terminated run
// gives its turn back (agent-task.engine.test.ts: the run itself and the slots). Histories of
// these runs are saved (UPDATE_HISTORIES=1) for the replay test.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createEnv, saveHistories as save, worker } from './env';
import { fakeActivities, recorder } from './fake-activities';
import { input, TaskHandles } from './task-handles';
import { interruptSignal, messagesQuery } from '../../workflows/definitions';

jest.setTimeout(90_000);
let env: TestWorkflowEnvironment;
const taskQueue = `wf-${randomUUID()}`;
const rec = recorder();
const { calls, seen } = rec;
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

test('a run the gateway enqueued waits for its turn without signalling its session', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const session = `sess_${randomUUID().replace(/-/g, '')}`;
    const a = await submitLikeGateway(input('first', { session }));
    expect((await a.result()).output).toBe('echo:first');
    const b = await submitLikeGateway(input('second', { session }));
    expect((await b.result()).output).toBe('echo:second');
    for (const h of [a, b]) {
      expect(calls[h.workflowId]).toEqual(['modelTurn', 'publishEnd']);
      const types = await eventTypes(h);
      // One signal only, turnDone at the end; the grace timer was cancelled by the turn.
      expect(types.filter((t) => t === 'EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED')).toHaveLength(1);
      expect(types).toContain('EVENT_TYPE_TIMER_CANCELED');
    }
    const s = env.client.workflow.getHandle(`session:acct:${session}`);
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual([
      'first',
      'echo:first',
      'second',
      'echo:second',
    ]);
    await save('gateway-joined', a, b, s);
  });
});

test('a large exchange does not ride on the hand-over signal: the session reads it from the run, and the next run sees it', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const session = `sess_${randomUUID().replace(/-/g, '')}`;
    const long = `say ${'x'.repeat(5000)}`;
    const a = await openLikeGateway(input(long, { session }));
    await a.result();
    const b = await submitLikeGateway(input('after it', { session }));
    await b.result();
    const s = env.client.workflow.getHandle(`session:acct:${session}`);
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual([
      long,
      `echo:${long}`,
      'after it',
      'echo:after it',
    ]);
    // The first run's hand-over carried no messages; the session's readExchange activity brought them.
    const turnDone = (await a.fetchHistory()).events!.find(
      (e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'turnDone',
    )!;
    expect(
      turnDone.signalExternalWorkflowExecutionInitiatedEventAttributes!.input!.payloads![0].data!.length,
    ).toBeLessThan(500);
    expect(
      (await s.fetchHistory()).events!.filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'readExchange',
      ),
    ).toHaveLength(1);
    expect(seen[b.workflowId].at(-1)).toEqual([long, `echo:${long}`, 'after it']);
    await save('large-exchange', a, s);
  });
});

test('an idle session closes with its thread as its result; the next run reopens it with that thread', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const session = `sess_${randomUUID().replace(/-/g, '')}`;
    const a = await openLikeGateway(input('first', { session }), 1500);
    await a.result();
    const s = env.client.workflow.getHandle(`session:acct:${session}`);
    const t0 = Date.now();
    expect(((await s.result()) as { messages: { content: string }[] }).messages.map((m) => m.content)).toEqual([
      'first',
      'echo:first',
    ]);
    expect(Date.now() - t0).toBeGreaterThan(500);
    const closed = await s.describe();
    expect(closed.status.name).toBe('COMPLETED');
    // A closed session still answers for its thread.
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual(['first', 'echo:first']);
    const b = await submitLikeGateway(input('second', { session }));
    expect((await b.result()).output).toBe('echo:second');
    expect(seen[b.workflowId]).toEqual([['first', 'echo:first', 'second']]);
    const reopened = env.client.workflow.getHandle(`session:acct:${session}`);
    expect((await reopened.describe()).status.name).toBe('RUNNING');
    expect((await reopened.query(messagesQuery)).map((m) => m.content)).toEqual([
      'first',
      'echo:first',
      'second',
      'echo:second',
    ]);
    await save('idle-close', a, env.client.workflow.getHandle(`session:acct:${session}`, closed.runId), b, reopened);
  });
});

test("a new session's first run holds its turn from the start; the next run waits for it", async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const session = `sess_${randomUUID().replace(/-/g, '')}`;
    const a = await openLikeGateway(input('slow first', { session }));
    // Enqueued at once, before the first run can have started (submitLikeGateway returns once the session has it).
    const b = await submitLikeGateway(input('second', { session }));
    await statusBecomes(a, 'running');
    expect((await statusOf(b)).status).toBe('queued');
    expect((await a.result()).output).toBe('echo:slow first');
    expect((await b.result()).output).toBe('echo:second');
    expect(calls[a.workflowId]).toEqual(['modelTurn', 'publishEnd']);
    const typesA = await eventTypes(a);
    // No grant came in, no grace timer ran, and the only signal out is turnDone.
    expect(typesA).not.toContain('EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED');
    expect(typesA).not.toContain('EVENT_TYPE_TIMER_STARTED');
    expect(typesA.filter((t) => t === 'EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED')).toHaveLength(1);
    const s = env.client.workflow.getHandle(`session:acct:${session}`);
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual([
      'slow first',
      'echo:slow first',
      'second',
      'echo:second',
    ]);
    // The session granted one turn only: the second run's.
    expect(
      (await eventTypes(s)).filter((t) => t === 'EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED'),
    ).toHaveLength(1);
    await save('owned-turn', a, b, s);
  });
});

describe('a run whose session is made lazily (no workflow until it is used)', () => {
  const sessionOf = (h: WorkflowHandle) => `session:acct:${h.workflowId.replace(/^task_/, 'sess_')}`;
  const contents = async (wid: string) =>
    (await env.client.workflow.getHandle(wid).query(messagesQuery)).map((m) => m.content);

  test('used while it runs: the session opens with it holding the turn and takes its handover at its close', async () => {
    const w = await worker(env, taskQueue, activities());
    await w.runUntil(async () => {
      const a = await startLazyLikeGateway(input('slow lazy first'));
      const session = a.workflowId.replace(/^task_/, 'sess_');
      await statusBecomes(a, 'running');
      await expect(env.client.workflow.getHandle(sessionOf(a)).describe()).rejects.toThrow(/not found/i);
      const b = await submitLikeGateway(input('second', { session }));
      expect((await statusOf(b)).status).toBe('queued');
      expect((await a.result()).output).toBe('echo:slow lazy first');
      expect((await b.result()).output).toBe('echo:second');
      // The first run signalled no session, and the session granted one turn only: the second run's.
      const typesA = await eventTypes(a);
      expect(typesA).not.toContain('EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED');
      expect(typesA).not.toContain('EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED');
      expect(await contents(sessionOf(a))).toEqual([
        'slow lazy first',
        'echo:slow lazy first',
        'second',
        'echo:second',
      ]);
      const s = env.client.workflow.getHandle(sessionOf(a));
      expect(
        (await eventTypes(s)).filter((t) => t === 'EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED'),
      ).toHaveLength(1);
      await save('lazy-session-opened-while-running', a, b, s);
    });
  });

  test('used after it ended: the session opens with its handover as the thread', async () => {
    const w = await worker(env, taskQueue, activities());
    await w.runUntil(async () => {
      const a = await startLazyLikeGateway(input('lazy alone'));
      expect((await a.result()).output).toBe('echo:lazy alone');
      expect(calls[a.workflowId]).toEqual(['modelTurn', 'publishEnd']);
      await expect(env.client.workflow.getHandle(sessionOf(a)).describe()).rejects.toThrow(/not found/i);
      const b = await submitLikeGateway(input('then', { session: a.workflowId.replace(/^task_/, 'sess_') }));
      expect((await b.result()).output).toBe('echo:then');
      expect(await contents(sessionOf(a))).toEqual(['lazy alone', 'echo:lazy alone', 'then', 'echo:then']);
      await save('lazy-session-opened-after', a, b, env.client.workflow.getHandle(sessionOf(a)));
    });
  });
});

test('a run holding its turn whose session was never opened creates it at its end, with the thread', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('lonely', { ownsTurn: true });
    const h = await start(i);
    expect((await h.result()).output).toBe('echo:lonely');
    expect(calls[i.taskId]).toEqual(['modelTurn', 'finishTurn', 'publishEnd']);
    const s = env.client.workflow.getHandle(`session:${i.account}:${i.session}`);
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual(['lonely', 'echo:lonely']);
    // The session it created serves the next run as usual.
    const b = await submitLikeGateway(input('again', { session: i.session }));
    expect((await b.result()).output).toBe('echo:again');
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual([
      'lonely',
      'echo:lonely',
      'again',
      'echo:again',
    ]);
    await save('owned-turn-no-session', h, s);
  });
});

test('a run the gateway meant to enqueue but never did joins its session after the grace period', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('orphan', { joinGraceMs: 3000 });
    const t0 = Date.now();
    const h = await start(i);
    // In its grace period: the timer runs, the run waits.
    await hasEvent(h, 'EVENT_TYPE_TIMER_STARTED', 'the grace timer started');
    expect((await statusOf(h)).status).toBe('queued');
    expect((await h.result()).output).toBe('echo:orphan');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2900);
    // The session did not exist: the run created it through the fallback activity.
    expect(calls[i.taskId]).toEqual(['joinSession', 'modelTurn', 'publishEnd']);
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
    // The second run's join has reached the session (the signal is recorded as delivered): it waits its turn.
    await hasEvent(
      b,
      'EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED',
      "the second run's join delivered to its session",
    );
    expect((await statusOf(a)).status).toBe('running');
    expect((await statusOf(b)).status).toBe('queued');
    await a.cancel();
    const err = await a.result().catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((await statusOf(a)).status).toBe('cancelled');
    expect((await b.result()).output).toBe('echo:second');
    // The session existed: the second run joined it by signal, no activity.
    expect(calls[b.workflowId]).toEqual(['modelTurn', 'publishEnd']);
    // The cancelled run added nothing to the thread.
    const s = env.client.workflow.getHandle(`session:acct:${session}`);
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual(['second', 'echo:second']);
    await save('session-turns', a, b, s);
  });
});

test('an interrupted run (interrupt, then cancel) ends cancelled as interrupted and hands its exchange, marked, to the session; the next run sees it', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const session = `sess_${randomUUID().replace(/-/g, '')}`;
    const a = await start(input('slow first', { session }));
    await statusBecomes(a, 'running');
    const b = await start(input('second', { session }));
    await hasEvent(
      b,
      'EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED',
      "the second run's join delivered to its session",
    );
    await a.signal(interruptSignal);
    await a.cancel();
    expect(await a.result().catch((e) => e)).toBeInstanceOf(WorkflowFailedError);
    expect(await statusOf(a)).toMatchObject({ status: 'cancelled', error: { type: 'interrupted' } });
    expect((await b.result()).output).toBe('echo:second');
    const s = env.client.workflow.getHandle(`session:acct:${session}`);
    expect((await s.query(messagesQuery)).map((m) => m.content)).toEqual([
      'slow first',
      '[interrupted: a new message arrived before this answer was finished]',
      'second',
      'echo:second',
    ]);
    // The second run's model turn read the thread with the interrupted exchange in it.
    expect(seen[b.workflowId]).toEqual([
      ['slow first', '[interrupted: a new message arrived before this answer was finished]', 'second'],
    ]);
    await save('session-interrupted', a, b, s);
  });
});
