// The session's computer in the task workflow, on the engine (fake model and a fake
// runComputerTool activity, the real workflows): a run's computer calls go one at a time in the
// model's order while its other tools run at once, a call that changed files is followed by
// agent_files_changed after the round's responses, each call is an activity summarised by the
// tool's name with the run's computer timeout, a run whose tools leave the computer out does not
// offer it, a run given network passes it to its calls, and a cancelled task cancels the call
// in flight. Histories are saved
// (UPDATE_HISTORIES=1) for the replay test.
import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import { WorkflowFailedError, WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { createEnv, replayingWorker, saveHistories as save, worker } from './env';
import { type InputFields, fakeActivities, recorder, taskInput } from './fake-activities';
import type { TaskInput, TaskResult } from '../../workflows/types';
import type { RunComputerToolInput } from '../../activities/computer/computer-activities';
import { waitUntil } from '../support/wait-until';

jest.setTimeout(90_000);
const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
let env: TestWorkflowEnvironment;
const taskQueue = `wf-computer-${randomUUID()}`;
const rec = recorder();
/** Computer calls held until the test releases them, by `<task>/<call id>`. */
const holds = new Map<string, Promise<void>>();
const activities = () =>
  fakeActivities(() => env, taskQueue, rec, {
    holdComputerCall: (i: RunComputerToolInput) => holds.get(`${i.taskId}/${i.call.id}`) ?? Promise.resolve(),
  });
const COMPUTER = ['bash', 'str_replace_editor', 'glob', 'grep'];

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

/** A run whose model makes these calls, turn after turn, then answers with every result. */
function input(turns: [string, object][][], over: InputFields = {}, computerCallTimeoutMs?: number): TaskInput {
  const i = taskInput(`turns:${JSON.stringify(turns)}`, {
    joinGraceMs: 300,
    ownsTurn: true,
    tools: ['calculate', ...COMPUTER],
    ...over,
  });
  // Not a field of the frozen flat input (only grouped runs offer the computer): set in its group.
  return computerCallTimeoutMs ? { ...i, limits: { ...i.limits, computerCallTimeoutMs } } : i;
}

function start(i: TaskInput): Promise<WorkflowHandle> {
  return env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
}

async function historyOf(h: WorkflowHandle): Promise<HistoryEvent[]> {
  return (await h.fetchHistory()).events ?? [];
}

/** The activities a history holds: type, summary, start-to-close timeout, and whether each completed. */
function activitiesIn(events: HistoryEvent[]) {
  const completed = new Set(
    events.flatMap((e) => {
      const id = e.activityTaskCompletedEventAttributes?.scheduledEventId;
      return id ? [String(id)] : [];
    }),
  );
  return events.flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    if (!a) return [];
    const summary = e.userMetadata?.summary;
    return [
      {
        type: a.activityType!.name!,
        summary: summary ? defaultPayloadConverter.fromPayload<string>(summary) : undefined,
        timeoutMs: tsToMs(a.startToCloseTimeout),
        completed: completed.has(String(e.eventId)),
        event: Number(e.eventId),
      },
    ];
  });
}

/** Whether the calculate's activity completed and a workflow task completed after it (the workflow saw it). */
function decidedAfterCalculate(events: HistoryEvent[]): boolean {
  const calc = activitiesIn(events).find((a) => a.type === 'runTool');
  const done = events.findIndex(
    (e) => Number(e.activityTaskCompletedEventAttributes?.scheduledEventId) === calc?.event,
  );
  return done >= 0 && events.slice(done).some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
}

// Turn 1: two bash calls with a calculate between them; turn 2 an edit; turn 3 a view.
const TOUCH = ['bash', { command: 'touch a.txt' }] as [string, object];
const CALC = ['calculate', { expression: '6 * 7' }] as [string, object];
const CAT = ['bash', { command: 'cat a.txt' }] as [string, object];
const EDIT = ['str_replace_editor', { command: 'str_replace', path: 'a.txt', old_str: 'x', new_str: 'y' }] as [
  string,
  object,
];
const VIEW = ['str_replace_editor', { command: 'view', path: 'a.txt' }] as [string, object];

test("a turn's bash calls run one after the other in the model's order while its calculate runs at once; rebuilt from history at every workflow task", async () => {
  // No run cached: each workflow task rebuilds the run from its history, as a worker started
  // afresh (or another worker) does; a nondeterminism then fails the run instead of retrying.
  const w = await replayingWorker(env, taskQueue, activities(), 0);
  await w.runUntil(async () => {
    const i = input([[TOUCH, CALC, CAT], [EDIT], [VIEW]], {}, 123_000);
    let release!: () => void;
    holds.set(`${i.taskId}/call_1_0`, new Promise<void>((r) => (release = r)));
    const h = await start(i);
    // While the first bash call is held, the calculate completes and the workflow decides after
    // it, and the second bash call is not even scheduled: it waits for the first (a parallel one
    // would be scheduled with the others).
    const held = await waitUntil(
      'the calculate completed, and a workflow task after it',
      () => historyOf(h),
      decidedAfterCalculate,
    );
    expect(activitiesIn(held).filter((a) => a.type === 'runComputerTool')).toEqual([
      expect.objectContaining({ completed: false }),
    ]);
    expect(rec.computer[i.taskId]).toEqual(['start call_1_0']);
    release();
    const r = (await h.result()) as TaskResult;
    expect(r.output).toBe(
      'results:bash: touch a.txt,42,bash: cat a.txt,str_replace_editor: str_replace,str_replace_editor: view',
    );
    expect(rec.computer[i.taskId]).toEqual(
      ['call_1_0', 'call_1_2', 'call_2_0', 'call_3_0'].flatMap((id) => [`start ${id}`, `end ${id}`]),
    );
    await save('computer-tools', h);
  });
});

/** The run of the files-changed test, whose result's events the next test reads. */
let filesRun: TaskResult | undefined;

test("agent_files_changed follows the round's tool responses when a call changed files, and only then", async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input([[TOUCH, CALC, CAT], [EDIT], [VIEW]]);
    filesRun = (await (await start(i)).result()) as TaskResult;
    const use = (step: string) => [
      ['agent_tool_use_start', step],
      ['agent_tool_use', step],
    ];
    // The stream: the workflow publishes each after the round's responses (the calls published
    // those, each as its own producer `s<step>:t<call>`, in no set order), before the turn's
    // agent_step, in the next turn's prelude.
    const stream = rec.published[i.taskId].map((e) => [e.type, e.producer.replace(/:t\d+$/, ':t')]);
    expect(stream).toEqual([
      ['agent_started', 's1'],
      ...use('s1'),
      ...use('s1'),
      ...use('s1'),
      ...Array(3).fill(['agent_tool_response', 's1:t']),
      // The touch created a file; the cat changed nothing (no event for it).
      ['agent_files_changed', 's2'],
      ['agent_step', 's2'],
      ...use('s2'),
      ['agent_tool_response', 's2:t'],
      ['agent_files_changed', 's3'],
      ['agent_step', 's3'],
      // A view cannot change files: none reported.
      ...use('s3'),
      ['agent_tool_response', 's3:t'],
      ['agent_step', 's4'],
      ['agent_response_start', 's4'],
      ['agent_response', 's4'],
      ['agent_step', 's4'],
      ['agent_cost', 'end'],
      ['agent_completed', 'end'],
    ]);
    const changed = filesRun.events.filter((e) => e.type === 'agent_files_changed');
    expect(changed.find((e) => e.tool_call_id === 'call_1_0')).toEqual({
      type: 'agent_files_changed',
      tool_call_id: 'call_1_0',
      created: ['a.txt'],
      modified: [],
      deleted: [],
    });
    expect(changed.find((e) => e.tool_call_id === 'call_2_0')).toEqual({
      type: 'agent_files_changed',
      tool_call_id: 'call_2_0',
      created: [],
      modified: ['a.txt'],
      deleted: [],
    });
    expect(new Set(changed.map((e) => e.tool_call_id))).toEqual(new Set(['call_1_0', 'call_2_0']));
  });
});

// Once each: the round's events are recorded in their place after its results, and publishing
// them later (pending) does not record them again (they once were, handoffs too).
test("the result's events hold each agent_files_changed once, after the round's tool responses", () => {
  const use = ['agent_tool_use_start', 'agent_tool_use'];
  expect(filesRun!.events.map((e) => e.type)).toEqual([
    'agent_started',
    ...use,
    ...use,
    ...use,
    ...Array(3).fill('agent_tool_response'),
    'agent_files_changed',
    'agent_step',
    ...use,
    'agent_tool_response',
    'agent_files_changed',
    'agent_step',
    ...use,
    'agent_tool_response',
    'agent_step',
    'agent_response_start',
    'agent_response',
    'agent_step',
    'agent_cost',
    'agent_completed',
  ]);
});

test("each computer call is an activity summarised by the tool's name, with the run's computer timeout", async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const h = await start(input([[TOUCH, CALC, CAT], [EDIT]], {}, 123_000));
    await h.result();
    const events = await historyOf(h);
    const acts = activitiesIn(events);
    const computer = acts.filter((a) => a.type === 'runComputerTool');
    expect(computer.map((a) => [a.summary, a.timeoutMs])).toEqual([
      ['bash', 123_000],
      ['bash', 123_000],
      ['str_replace_editor', 123_000],
    ]);
    // The second bash call was scheduled only once the first had completed.
    const done = events.find(
      (e) => Number(e.activityTaskCompletedEventAttributes?.scheduledEventId) === computer[0].event,
    );
    expect(computer[1].event).toBeGreaterThan(Number(done?.eventId));
    expect(acts.find((a) => a.type === 'runTool')?.summary).toBeUndefined();
  });
});

test("a run given network (computer.network) passes it to each of its computer calls; other runs' calls go without", async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const plain = input([[TOUCH], [CAT]]);
    const networked = input([[TOUCH], [CAT]]);
    networked.limits = { ...networked.limits, computerNetwork: true };
    await Promise.all([plain, networked].map(async (i) => (await start(i)).result()));
    expect(rec.computer[plain.taskId].filter((l) => l.startsWith('start'))).toEqual([
      'start call_1_0',
      'start call_2_0',
    ]);
    expect(rec.computer[networked.taskId].filter((l) => l.startsWith('start'))).toEqual([
      'start call_1_0 with network',
      'start call_2_0 with network',
    ]);
  });
});

test('a run whose tools leave the computer out does not offer it: a call of bash is an error result', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input([[['bash', { command: 'ls' }]]], { tools: ['calculate', 'current_time'] });
    const h = await start(i);
    const r = (await h.result()) as TaskResult;
    expect(r.output).toBe('results:Error: no tool named "bash" is offered');
    expect(rec.turns[i.taskId].map((t) => t.tools)).toEqual([
      ['calculate', 'current_time'],
      ['calculate', 'current_time'],
    ]);
    expect(rec.computer[i.taskId]).toBeUndefined();
    expect(activitiesIn(await historyOf(h)).map((a) => a.type)).not.toContain('runComputerTool');
  });
});

test('cancelling the task during a computer call cancels the call', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    // A short heartbeat timeout: the fake's heartbeats, which bring it the cancel, are sent often.
    const i = input([[['bash', { command: 'hang' }]]], { modelHeartbeatTimeoutMs: 1000 });
    const h = await start(i);
    await waitUntil('the call to start', () => rec.computer[i.taskId]?.includes('start call_1_0'));
    await h.cancel();
    expect(await h.result().catch((e) => e)).toBeInstanceOf(WorkflowFailedError);
    await waitUntil('the fake to see its cancel', () => rec.computer[i.taskId].includes('cancelled call_1_0'));
    expect(rec.computer[i.taskId]).toEqual(['start call_1_0', 'cancelled call_1_0']);
    const types = ((await h.fetchHistory()).events ?? []).map((e) => EventType[e.eventType ?? 0]);
    expect(types).toContain('EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED');
    await save('computer-cancelled', h);
  });
});
