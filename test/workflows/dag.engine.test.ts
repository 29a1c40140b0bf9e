// Declarative workflows in the workflows, on the time-skipping server (fake
// model): a step that fails twice then passes under max_attempts 3 is retried
// by Temporal with the step's backoff in virtual time, and the task completes
// with every step's end reported. The histories are saved (UPDATE_HISTORIES=1)
// for the replay test.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { saveHistories as save, worker } from './env';
import { fakeActivities, recorder, taskInput } from './fake-activities';
import type { ModelTurnInput } from '../../activities/model-turn';
import type { PublishDagEventsInput } from '../../activities/dag';
import type { BlockEvent, DagWorkflow, TaskResult } from '../../workflows/types';
import { SEARCH_ATTRIBUTES } from '../../workflows/types';
import { timeSkippingEnv } from '../engine';

jest.setTimeout(90_000);
let env: TestWorkflowEnvironment;
const taskQueue = `wf-dag-${randomUUID()}`;
const rec = recorder();
/** Virtual time of each model call of a step, by step id. */
const calls: Record<string, number[]> = {};
const reported: PublishDagEventsInput[] = [];
/** The steps' ends as their workflow published them. */
const stepEnds: BlockEvent[] = [];

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  env = await timeSkippingEnv();
  const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  await env.connection.operatorService
    .addSearchAttributes({
      namespace: 'default',
      searchAttributes: Object.fromEntries(Object.values(SEARCH_ATTRIBUTES).map((n) => [n, KEYWORD])),
    })
    .catch(() => undefined);
});
afterAll(async () => {
  await env?.teardown();
});

function activities() {
  const fakes = fakeActivities(() => env, taskQueue, rec);
  return {
    ...fakes,
    async modelTurn(input: ModelTurnInput) {
      const id = input.tag?.step_id;
      if (id) (calls[id] ??= []).push(await env.currentTimeMs());
      // The flaky step's first two runs are refused by the model: each fails that run of the step.
      if (id === 'flaky' && calls[id].length <= 2)
        throw ApplicationFailure.nonRetryable('the model rejected the request (HTTP 400)', 'ModelBadRequest');
      return fakes.modelTurn(input);
    },
    async publishDagEvents(input: PublishDagEventsInput) {
      reported.push(input);
      return { lastSeq: 0 };
    },
    async publishStepEnd(input: { event: BlockEvent }) {
      stepEnds.push(input.event);
      return { lastSeq: 0 };
    },
    async checkStepOutput() {
      return { output: {} };
    },
  };
}

test('a step that fails twice then passes under max_attempts 3 is retried with its backoff; the task completes', async () => {
  const w = await worker(env, taskQueue, activities());
  const dag: DagWorkflow = {
    id: 'w',
    name: 'retrying',
    description: 'one flaky step',
    steps: [
      { id: 'first', name: 'first', description: 'start', depends_on: [] },
      {
        id: 'flaky',
        name: 'flaky',
        description: 'sometimes refused',
        depends_on: ['first'],
        retry_policy: { max_attempts: 3, backoff: 'exponential', initial_interval: 60 },
      },
      { id: 'last', name: 'last', description: 'finish', depends_on: ['flaky'] },
    ],
  };
  await w.runUntil(async () => {
    const i = taskInput('plan', { ownsTurn: true, joinGraceMs: 300, workflows: [dag] });
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    const r = (await h.result()) as TaskResult;
    expect(r.status).toBe('completed');
    const times = calls.flaky;
    expect(times).toHaveLength(3);
    // 60 s, then 120 s (exponential) of virtual time between the runs of the step.
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(60_000);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(120_000);
    expect(calls.first).toHaveLength(1);
    expect(calls.last).toHaveLength(1);
    const ends = r.events
      .filter((e) => e.type === 'agent_step' && 'status' in e && e.status)
      .map((e) => (e as { step_id: string; status: string }).step_id + ':' + (e as { status: string }).status);
    expect(ends).toEqual(['first:completed', 'flaky:completed', 'last:completed']);
    expect(
      reported
        .flatMap((x) => x.events)
        .filter((e) => e.type === 'agent_progress')
        .map((e) => (e as { progress: number }).progress),
    ).toEqual([1 / 3, 2 / 3, 1]);
    // Each step's end is published once, by its workflow; the task publishes only the progress.
    expect(stepEnds.map((e) => (e as { step: string }).step)).toEqual(['w/first', 'w/flaky', 'w/last']);
    expect(reported.flatMap((x) => x.events).filter((e) => e.type === 'agent_step')).toEqual([]);
    const flaky = await env.client.workflow.getHandle(`${i.taskId}:w:flaky`).describe();
    expect(flaky.status.name).toBe('COMPLETED');
    await save(
      'dag',
      h,
      env.client.workflow.getHandle(`${i.taskId}:w`),
      env.client.workflow.getHandle(`${i.taskId}:w:flaky`),
    );
  });
});
