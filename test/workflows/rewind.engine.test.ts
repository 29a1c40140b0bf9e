// Rewind on the engine (src/gateway/services/rewind-service.ts, the service's own code, over a
// real reset): a running task sent back to its turn 2 with a message (the model there reads the
// thread as it was before turn 2, plus the message; the old run is terminated; the new branch
// publishes in a new relay epoch), and a finished task sent back to its turn 1 with its message
// replaced (it takes its session's turn again; the session's thread gets the new exchange). Each
// new run replays from its history offline; a turn out of reach is a 422.
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import pino from 'pino';
import { createEnv, saveHistories as save, worker, workflowBundle } from './env';
import { fakeActivities, recorder } from './fake-activities';
import { input, TaskHandles } from './task-handles';
import { messagesQuery, statusQuery } from '../../workflows/definitions';
import { sessionWorkflowId } from '../../workflows/types';
import { RewindService } from '../../src/gateway/services/rewind-service';
import { openSession, sessionRef } from '../../src/common/sessions/session-signals';
import { UnprocessableRequestError } from '../../src/common/errors';
import { waitUntil } from '../support/wait-until';

jest.setTimeout(120_000);
let env: TestWorkflowEnvironment;
const taskQueue = `rewind-${randomUUID()}`;
const rec = recorder();
const activities = () => fakeActivities(() => env, taskQueue, rec);

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

const { start, submitLikeGateway } = new TaskHandles(() => env, taskQueue);

/** The service's rewind, with the task's status read from its run and the relay and cache left out (their own tests). */
function rewinds(): RewindService {
  const tasks = {
    view: (_a: unknown, id: string) => env.client.workflow.getHandle(id).query(statusQuery),
    // As the gateway's: the session the rewound run rejoins, opened if it has no open run.
    openSession: (a: { account: string }, session: string) =>
      openSession(
        env.client,
        sessionRef({ TEMPORAL_TASK_QUEUE: taskQueue, SESSION_IDLE_CLOSE_MS: 0, RUN_WATCH_MS: 500 }, a.account, session),
      ),
  };
  const cache = { forget: async () => undefined, put: async () => true };
  const publisher = {
    rewinding: (_taskId: string, fn: (epoch: number) => Promise<unknown>) => fn(0),
    rewind: async () => ({ seq: 0, superseded: null }),
  };
  return new RewindService(
    env.client,
    env.connection,
    tasks as never,
    cache as never,
    publisher as never,
    pino({ enabled: false }),
  );
}
const account = { account: 'acct' } as never;

/** Replays the run's history offline, as the replay CLI and the saved-history test do. */
async function replays(h: WorkflowHandle, runId: string): Promise<void> {
  const history = await env.client.workflow.getHandle(h.workflowId, runId).fetchHistory();
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, `${h.workflowId}/${runId}`);
}

test('a running task sent back to turn 2 with a message: the model reads the thread as it was, plus the message; the old run is terminated', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const turns = [
      [['calculate', { expression: '1 + 1' }]],
      [['calculate', { expression: '2 + 2' }]],
      [['wait', { seconds: 3600 }]],
    ];
    const i = input(`turns:${JSON.stringify(turns)}`);
    const h = await start(i);
    await waitUntil('turn 3 waiting', async () => rec.calls[i.taskId]?.filter((c) => c === 'modelTurn').length === 3);
    const before = rec.seen[i.taskId][1];
    const firstRun = (await h.describe()).runId;

    const r = await rewinds().rewind(account, i.taskId, { step: 2, message: 'again' });
    expect(r).toMatchObject({ task_id: i.taskId, step: 2, status: 'running', side_effects: [] });
    expect(r.run_id).not.toBe(firstRun);
    // The handle started the first run, which ended terminated: the task goes on in the reset's run.
    const result = await env.client.workflow.getHandle(i.taskId, r.run_id).result();
    expect(result.output).toBe('echo:again');
    // Turn 2 again: the thread before it (the message, turn 1's call and its result), then the message.
    expect(rec.seen[i.taskId][3]).toEqual([...before, 'again']);
    expect(rec.calls[i.taskId].filter((c) => c === 'modelTurn:rewound')).toHaveLength(1);
    expect((await env.client.workflow.getHandle(i.taskId, firstRun).describe()).status.name).toBe('TERMINATED');
    // The new branch publishes in epoch 1; its events on the result are turn 1's, then turn 2's anew.
    const published = rec.published[i.taskId];
    const since =
      published.length -
      published
        .slice()
        .reverse()
        .findIndex((e) => !e.producer.startsWith('r1:'));
    // Turn 2's prelude again (turn 1's agent_step, then the message), then the new answer and the end.
    expect(published.slice(since).map((e) => `${e.producer} ${e.type}`)).toEqual([
      'r1:s2 agent_step',
      'r1:s2 agent_input',
      'r1:s2 agent_response_start',
      'r1:s2 agent_response',
      'r1:s2 agent_step',
      'r1:end agent_cost',
      'r1:end agent_completed',
    ]);
    expect(result.events.map((e: { type: string }) => e.type).filter((t: string) => t === 'agent_step')).toHaveLength(
      2,
    );
    await replays(h, r.run_id);
    await save('rewind-running', h, env.client.workflow.getHandle(i.taskId, r.run_id));
  });
});

test('a finished task sent back to turn 1 with its message replaced takes its session turn again; the session gets the new exchange', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('hello');
    const h = await submitLikeGateway(i);
    expect((await h.result()).output).toBe('echo:hello');
    const session = env.client.workflow.getHandle(sessionWorkflowId(i.account, i.session));
    await waitUntil('the exchange in the session', async () => (await session.query(messagesQuery)).length === 2);

    const r = await rewinds().rewind(account, i.taskId, { step: 1, message: 'bonjour', replace: true });
    expect(r.step).toBe(1);
    expect((await env.client.workflow.getHandle(i.taskId, r.run_id).result()).output).toBe('echo:bonjour');
    expect(rec.seen[i.taskId].at(-1)).toEqual(['bonjour']);
    await waitUntil('the new exchange in the session', async () => (await session.query(messagesQuery)).length === 4);
    expect((await session.query(messagesQuery)).map((m) => m.content)).toEqual([
      'hello',
      'echo:hello',
      'bonjour',
      'echo:bonjour',
    ]);
    await replays(h, r.run_id);
    await save('rewind-finished', h, env.client.workflow.getHandle(i.taskId, r.run_id));

    const far = await rewinds()
      .rewind(account, i.taskId, { step: 5 })
      .catch((e: unknown) => e);
    expect(far).toBeInstanceOf(UnprocessableRequestError);
    expect((far as Error).message).toBe('body.step: the task has taken turns up to 1');
  });
});

test('a finished 4-turn run sent back to turn 2: the model there sees the thread exactly as before turn 2, and the run ends as before', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const turns = [
      [['calculate', { expression: '1 + 1' }]],
      [['calculate', { expression: '2 + 2' }]],
      [['calculate', { expression: '3 + 3' }]],
    ];
    const i = input(`turns:${JSON.stringify(turns)}`);
    const h = await submitLikeGateway(i);
    expect((await h.result()).output).toBe('results:2,4,6');
    const seen = rec.seen[i.taskId];
    expect(seen).toHaveLength(4);
    const r = await rewinds().rewind(account, i.taskId, { step: 2 });
    expect((await env.client.workflow.getHandle(i.taskId, r.run_id).result()).output).toBe('results:2,4,6');
    // Turns 2, 3 and 4 again; turn 2 reads what it read the first time.
    expect(seen).toHaveLength(7);
    expect(seen[4]).toEqual(seen[1]);
    expect(seen.slice(4)).toEqual(seen.slice(1, 4));
  });
});

test('rewound again before its new run published anything: the second rewind opens the next epoch, read from the first reset', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const turns = [[['calculate', { expression: '1 + 1' }]], [['wait', { seconds: 3600 }]]];
    const i = input(`turns:${JSON.stringify(turns)}`);
    await start(i);
    await waitUntil('turn 2 waiting', async () => rec.calls[i.taskId]?.filter((c) => c === 'modelTurn').length === 2);
    const first = await rewinds().rewind(account, i.taskId, { step: 2, message: 'first' });
    const second = await rewinds().rewind(account, i.taskId, { step: 1, message: 'second', replace: true });
    expect(second.run_id).not.toBe(first.run_id);
    const result = await env.client.workflow.getHandle(i.taskId, second.run_id).result();
    expect(result.output).toBe('echo:second');
    expect(rec.published[i.taskId].at(-1)).toEqual({ type: 'agent_completed', producer: 'r2:end' });
  });
});
