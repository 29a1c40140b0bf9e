// Long runs: 300 tool calls in a row, and four hours of waiting (time-skipped).
// Each continues as new before its history grows large; every run of the chain
// stays far under Temporal's limits and replays against the current code. The
// history sizes are printed.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { createEnv, workflowBundle, worker } from './env';
import { type InputFields, fakeActivities, recorder, taskInput } from './fake-activities';
import type { TaskInput } from '../../workflows/types';
import { SEARCH_ATTRIBUTES } from '../../workflows/types';
import { timeSkippingEnv } from '../engine';
import { taskStartMeta } from '../../src/common/tasks/task-input';
import { listTasks } from '../../src/gateway/services/task-list';
import { waitUntil } from '../support/wait-until';

jest.setTimeout(240_000);

const rec = recorder();

function input(message: string, over: InputFields = {}): TaskInput {
  return taskInput(message, { maxSteps: 1000, tools: ['calculate', 'wait'], ownsTurn: true, ...over });
}

interface RunSize {
  runId: string;
  events: number;
  bytes: number;
}

/** Every run of the workflow's chain, first to last, with its history's size; each replays cleanly. */
async function chain(client: Client, workflowId: string, firstRunId: string): Promise<RunSize[]> {
  const out: RunSize[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const history: temporal.api.history.v1.IHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events: temporal.api.history.v1.IHistoryEvent[] = history.events ?? [];
    out.push({ runId, events: events.length, bytes: temporal.api.history.v1.History.encode(history).finish().length });
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, `${workflowId}/${runId}`);
    runId = events[events.length - 1].workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return out;
}

function report(name: string, runs: RunSize[]): void {
  const lines = runs.map((r, i) => `  run ${i + 1}: ${r.events} events, ${(r.bytes / 1024).toFixed(1)} KiB`);
  process.stdout.write(`${name}: ${runs.length} runs\n${lines.join('\n')}\n`);
  for (const r of runs) {
    expect(r.events).toBeLessThan(10_000);
    expect(r.bytes).toBeLessThan(10 * 1024 * 1024);
  }
}

test('a run of 300 tool calls continues as new, completes, and every run of it replays', async () => {
  const env = await createEnv();
  try {
    const taskQueue = `long-${randomUUID()}`;
    const w = await worker(
      env,
      taskQueue,
      fakeActivities(() => env, taskQueue, rec),
    );
    await w.runUntil(async () => {
      const i = input('loop:300', { account: `long-${randomUUID()}` });
      const h = await env.client.workflow.start('agentTask', {
        taskQueue,
        workflowId: i.taskId,
        args: [i],
        ...taskStartMeta(i),
      });
      const r = await h.result();
      expect(r.output).toBe('looped:300');
      expect(rec.calls[i.taskId].filter((c) => c === 'runTool')).toHaveLength(300);
      expect(r.events.filter((e: { type: string }) => e.type === 'agent_step')).toHaveLength(301);
      // The relay saw every tool response exactly once.
      expect(rec.published[i.taskId].filter((e) => e.type === 'agent_tool_response')).toHaveLength(300);
      const runs = await chain(env.client, i.taskId, h.firstExecutionRunId);
      report('300 tool calls', runs);
      expect(runs.length).toBeGreaterThan(1);
      // GET /tasks lists the chain once: its earlier runs are not tasks of their own.
      const listed = await waitUntil(
        'the task listed as completed',
        () => listTasks(env.client, 'default', i.account, { limit: 10 }),
        (p) => p.tasks.some((t) => t.status === 'completed'),
      );
      expect(listed.tasks.map((t) => [t.task_id, t.status])).toEqual([[i.taskId, 'completed']]);
    });
  } finally {
    await env.teardown();
  }
});

test('a four-hour run (time-skipped) completes, and every run of it replays', async () => {
  const env = await timeSkippingEnv();
  try {
    const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
    await env.connection.operatorService
      .addSearchAttributes({
        namespace: 'default',
        searchAttributes: Object.fromEntries(Object.values(SEARCH_ATTRIBUTES).map((n) => [n, KEYWORD])),
      })
      .catch(() => undefined); // a server that accepts any search attribute has nothing to register
    const taskQueue = `long-${randomUUID()}`;
    const w = await worker(
      env,
      taskQueue,
      fakeActivities(() => env, taskQueue, rec),
    );
    await w.runUntil(async () => {
      const i = input('wait:3600:4');
      const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
      const r = await h.result();
      expect(r.output).toBe('waited:4');
      const runs = await chain(env.client, i.taskId, h.firstExecutionRunId);
      report('four hours of waiting', runs);
    });
  } finally {
    await env.teardown();
  }
});
