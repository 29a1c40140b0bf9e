// Runs started before the grouped TaskInput carry it flat (workflows/task-input.ts), and so do the
// children they started and a schedule's prepared task recorded before it. On the engine (fake
// model): a run started with the flat input of before issues the commands the grouped input does,
// in the same order, and ends the same (a tool loop ending at its step cap; a background run that
// takes a slot and joins its session after the grace period; a DAG); a DAG workflow and a step
// started with a flat task run; a schedule's run whose prepared task came back flat starts it.
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { createEnv, worker } from './env';
import { type InputFields, dagRelayFakes, fakeActivities, flatInput, recorder, taskInput } from './fake-activities';
import type { PreparedTask } from '../../activities/schedules';
import type { BlockEvent, DagWorkflow, TaskInput } from '../../workflows/types';
import type { FlatTaskInput } from '../../workflows/task-input';

jest.setTimeout(120_000);
const EventType = temporal.api.enums.v1.EventType;
let env: TestWorkflowEnvironment;
const taskQueue = `wf-input-${randomUUID()}`;
const rec = recorder();
/** The prepared task a schedule's run gets back, in the shape the test gives it. */
let prepared: PreparedTask | undefined;

function activities() {
  return {
    ...fakeActivities(() => env, taskQueue, rec),
    ...dagRelayFakes(),
    async prepareScheduledTask(): Promise<PreparedTask> {
      return prepared!;
    },
  };
}

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

const DAG: DagWorkflow = {
  id: 'w',
  name: 'two steps',
  description: 'one after the other',
  steps: [
    { id: 'a', name: 'first', description: 'start', depends_on: [] },
    { id: 'b', name: 'second', description: 'finish', depends_on: ['a'] },
  ],
};

/** The commands a run issued, in order, as its history records them (each event a command leaves). */
async function commandsOf(h: WorkflowHandle, withMarkers = true): Promise<string[]> {
  const events = (await h.fetchHistory()).events ?? [];
  return events.flatMap((e): string[] => {
    const type = EventType[e.eventType ?? 0].replace(/^EVENT_TYPE_/, '');
    if (e.activityTaskScheduledEventAttributes)
      return [`${type} ${e.activityTaskScheduledEventAttributes.activityType?.name}`];
    if (e.startChildWorkflowExecutionInitiatedEventAttributes)
      return [`${type} ${e.startChildWorkflowExecutionInitiatedEventAttributes.workflowType?.name}`];
    if (e.signalExternalWorkflowExecutionInitiatedEventAttributes)
      return [`${type} ${e.signalExternalWorkflowExecutionInitiatedEventAttributes.signalName}`];
    if (e.markerRecordedEventAttributes)
      return withMarkers ? [`${type} ${e.markerRecordedEventAttributes.markerName}`] : [];
    if (e.timerStartedEventAttributes)
      return [`${type} ${Number(e.timerStartedEventAttributes.startToFireTimeout?.seconds ?? 0)}`];
    return /^(UPSERT_WORKFLOW_SEARCH_ATTRIBUTES|WORKFLOW_EXECUTION_(COMPLETED|FAILED|CONTINUED_AS_NEW))$/.test(type)
      ? [type]
      : [];
  });
}

/** A run's end: its result, or its failure's type and message. */
const endOf = (h: WorkflowHandle) =>
  h.result().then(
    (r: { status: string; output: string; events: BlockEvent[] }) => ({
      status: r.status,
      output: r.output,
      events: r.events.map((e) => e.type),
    }),
    (err: { cause?: { type?: string; message?: string } }) => ({
      failed: err.cause?.type,
      message: err.cause?.message,
    }),
  );

/** Starts an agentTask with `args` and waits for its end. */
async function run(taskId: string, args: TaskInput | FlatTaskInput): Promise<WorkflowHandle> {
  const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: taskId, args: [args] });
  await endOf(h);
  return h;
}

// Each case: the same run twice, once grouped and once flat (its own task, session and account).
const CASES: [string, string, InputFields][] = [
  ['a tool loop that reaches its step cap', 'loop:5', { ownsTurn: true, maxSteps: 2, price: { input: 1, output: 2 } }],
  ['a background run that takes a slot and joins its session', 'tools:1', { background: true, slots: { limit: 1 } }],
  ['a run of a DAG', 'plan', { ownsTurn: true, workflows: [DAG] }],
];

test.each(CASES)('%s: started flat, it issues the same commands and ends the same', async (_what, message, over) => {
  const fresh = () => taskInput(message, { joinGraceMs: 300, account: `acct_${randomUUID().slice(0, 8)}`, ...over });
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const grouped = fresh();
    const flat = fresh();
    const a = await run(grouped.taskId, grouped);
    const b = await run(flat.taskId, flatInput(flat));
    expect(await endOf(b)).toEqual(await endOf(a));
    // A DAG's task publishes its steps' reports as they come (how many at once is timing): its markers are left out.
    const markers = !over.workflows;
    expect(await commandsOf(b, markers)).toEqual(await commandsOf(a, markers));
    expect(rec.calls[flat.taskId]).toEqual(rec.calls[grouped.taskId]);
    if (!over.workflows) return;
    for (const id of [`${DAG.id}`, `${DAG.id}:a`, `${DAG.id}:b`]) {
      const child = (t: TaskInput) => env.client.workflow.getHandle(`${t.taskId}:${id}`);
      expect(await commandsOf(child(flat))).toEqual(await commandsOf(child(grouped)));
    }
  });
});

test('a DAG workflow and a step started with a flat task (children of a run of before) run', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const task = flatInput(taskInput('plan', { workflows: [DAG] }));
    const outcomes = await env.client.workflow.execute('dagWorkflow', {
      taskQueue,
      workflowId: `${task.taskId}:${DAG.id}`,
      args: [{ task, workflow: DAG }],
    });
    expect(outcomes.map((o: { id: string; status: string }) => `${o.id}:${o.status}`)).toEqual([
      'a:completed',
      'b:completed',
    ]);
    const step = await env.client.workflow.execute('dagStep', {
      taskQueue,
      workflowId: `${task.taskId}:${DAG.id}:solo`,
      args: [{ task, workflow: DAG, step: { ...DAG.steps[0], id: 'solo' }, inputs: [] }],
    });
    expect(step.output).toMatch(/^echo:You are doing one step of the workflow "two steps"/);
    expect(step.output).toContain('The request the workflow serves: plan');
  });
});

test("a schedule's run whose prepared task came back flat starts it, grouped, and reports its end", async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const input = taskInput('tools:1', { background: true, slots: { limit: 2 }, joinsSession: true });
    prepared = { input: flatInput(input) as never, memo: {}, searchAttributes: {} };
    const scheduleId = `sched_${randomUUID().replace(/-/g, '')}`;
    const result = await env.client.workflow.execute('scheduledRun', {
      taskQueue,
      workflowId: `${scheduleId}-2026-11-26T09:00:00Z`,
      args: [{ scheduleId, account: input.account, session: input.session, request: { message: 'tools:1' } }],
    });
    expect(result).toEqual({ task_id: input.taskId, status: 'completed' });
    const started = ((await env.client.workflow.getHandle(input.taskId).fetchHistory()).events ?? [])[0];
    const payload = started.workflowExecutionStartedEventAttributes!.input!.payloads![0];
    expect(JSON.parse(Buffer.from(payload.data!).toString())).toEqual(JSON.parse(JSON.stringify(input)));
    // It joined its session at once (joinsSession), then took a slot (the account's slots workflow started by the activity).
    expect(rec.calls[input.taskId]).toEqual([
      'joinSession',
      'requestSlot',
      'modelTurn',
      'runTool',
      'modelTurn',
      'publishEnd',
    ]);
  });
});
