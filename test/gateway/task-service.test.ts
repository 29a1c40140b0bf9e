// TaskService against the embedded engine: a `?wait=` long-poll is bounded.
// It returns at the end of its wait with no poll left running (a poll loop per
// request used to live on until the task ended), and at once when the run closes.
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { TaskService } from '../../src/gateway/task-service';
import { createEnv } from '../workflows/env';

jest.setTimeout(60_000);
let env: TestWorkflowEnvironment;
let service: TaskService;
let inFlight = 0;

beforeAll(async () => {
  env = await createEnv();
  const svc = env.connection.workflowService;
  const original = svc.getWorkflowExecutionHistory.bind(svc);
  // Counts history long-polls still open: what a lingering wait would leave behind.
  svc.getWorkflowExecutionHistory = ((req: never) => {
    inFlight++;
    return original(req).finally(() => inFlight--);
  }) as typeof svc.getWorkflowExecutionHistory;
  service = new TaskService(env.client, env.connection, {} as never, {} as never, pino({ level: 'silent' }));
});
afterAll(async () => {
  await env?.teardown();
});

/** A run nobody works on (no worker polls its queue): open until terminated. */
async function openRun(): Promise<string> {
  const workflowId = `task_${randomUUID().replace(/-/g, '')}`;
  await env.client.workflow.start('neverWorked', { taskQueue: `nobody-${randomUUID()}`, workflowId });
  return workflowId;
}

test('a wait on a running task ends after its time, leaving no long-poll behind', async () => {
  const id = await openRun();
  const t0 = Date.now();
  await service.waitForClose(id, 800);
  const took = Date.now() - t0;
  expect(took).toBeGreaterThanOrEqual(700);
  expect(took).toBeLessThan(5000);
  await new Promise((r) => setTimeout(r, 100));
  expect(inFlight).toBe(0);
  await env.client.workflow.getHandle(id).terminate();
});

test('a wait returns as soon as the run closes, however it closes', async () => {
  const id = await openRun();
  const t0 = Date.now();
  const waiting = service.waitForClose(id, 20_000);
  setTimeout(() => void env.client.workflow.getHandle(id).terminate('done here'), 300);
  await waiting;
  expect(Date.now() - t0).toBeLessThan(5000);
  expect(inFlight).toBe(0);
});
