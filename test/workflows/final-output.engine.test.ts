// A run's final output in the workflow, on the engine (fake model and fake
// final-output activity): after the last answer, answers that do not fit are
// repaired with their errors up to twice; the output goes into the result and
// one agent_final_output event before agent_cost; three misfits fail the run as
// final_output_invalid. Histories are saved (UPDATE_HISTORIES=1) for the replay test.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createEnv, saveHistories as save, worker } from './env';
import { fakeActivities, recorder, taskInput } from './fake-activities';
import type { FinalOutputAnswer, FinalOutputInput } from '../../activities/final-output';
import type { TaskResult } from '../../workflows/types';

jest.setTimeout(60_000);
let env: TestWorkflowEnvironment;
const taskQueue = `wf-final-${randomUUID()}`;
const rec = recorder();
const asked: Record<string, FinalOutputInput[]> = {};
const USAGE = { promptTokens: 100, completionTokens: 10 };

/** Fits on the attempt after `misfits` that did not (the task's message says how many). */
async function finalOutput(input: FinalOutputInput): Promise<FinalOutputAnswer> {
  (asked[input.taskId] ??= []).push(input);
  const misfits = Number(/misfits:(\d+)/.exec(input.runThread?.[0]?.content ?? '')?.[1] ?? 0);
  if (input.rejected.length < misfits)
    return {
      usage: USAGE,
      errors: [`(the root): must have required property 'score' (${input.rejected.length + 1})`],
      text: '{}',
    };
  return { usage: USAGE, output: { score: 4 } };
}

const activities = () => ({ ...fakeActivities(() => env, taskQueue, rec), finalOutput });
const spec = {
  name: 'rating',
  strict: false,
  schema: { type: 'object', required: ['score'], properties: { score: { type: 'integer' } } },
};

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

test('a misfit is repaired with its errors; the output is in the result and in one event before agent_cost', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = taskInput('rate it misfits:1', { ownsTurn: true, joinGraceMs: 300, finalOutput: spec });
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    const r = (await h.result()) as TaskResult;
    expect(r.final_output).toEqual({ name: 'rating', output: { score: 4 } });
    expect(r.events.map((e) => e.type).slice(-3)).toEqual(['agent_final_output', 'agent_cost', 'agent_completed']);
    expect(asked[i.taskId].map((a) => a.rejected.length)).toEqual([0, 1]);
    expect(asked[i.taskId][1].rejected[0].errors[0]).toMatch(/required property 'score'/);
    // Both calls' tokens are in the usage, beside the turn's.
    expect(r.usage.promptTokens).toBeGreaterThanOrEqual(2 * USAGE.promptTokens);
    expect(rec.published[i.taskId].map((e) => e.type).slice(-3)).toEqual([
      'agent_final_output',
      'agent_cost',
      'agent_completed',
    ]);
    await save('final-output', h);
  });
});

test('three misfits fail the run as final_output_invalid with the last errors', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = taskInput('rate it misfits:5', { ownsTurn: true, joinGraceMs: 300, finalOutput: spec });
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    const err = await h.result().catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err.cause as { type?: string }).type).toBe('final_output_invalid');
    expect(err.cause.message).toMatch(/after 3 answers: .*\(3\)/);
    expect(asked[i.taskId]).toHaveLength(3);
    expect(rec.published[i.taskId].map((e) => e.type).slice(-2)).toEqual(['agent_cost', 'agent_error']);
    await save('final-output-invalid', h);
  });
});
