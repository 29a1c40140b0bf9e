// Approval gates on the engine (workflows/approval-gates.ts): a gated call waits in the workflow
// until the approval update decides it; approve, deny with a reason, approve with edited input,
// both timeouts, a turn with two gated calls and a free one decided in reverse order, the update's
// refusals (unknown call, conflicting decision) and its idempotence, and a cancel while waiting.
// Histories of these runs are saved (UPDATE_HISTORIES=1) for the replay test.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createEnv, replayingWorker, saveHistories as save, worker } from './env';
import { dagRelayFakes, fakeActivities, recorder, taskInput } from './fake-activities';
import type { ModelTurnInput } from '../../activities/model-turn';
import { input, TaskHandles } from './task-handles';
import { approvalUpdate, approvalsQuery, threadQuery } from '../../workflows/definitions';
import type { ApprovalRule, TaskInput } from '../../workflows/types';
import { waitUntil } from '../support/wait-until';

// The rebuilding worker replays the whole history at every workflow task: a few seconds alone or
// beside three busy cores' worth of load, with room kept for a full suite on two cores.
jest.setTimeout(240_000);
let env: TestWorkflowEnvironment;
const taskQueue = `approvals-${randomUUID()}`;
const rec = recorder();
const activities = () => fakeActivities(() => env, taskQueue, rec);

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

const { start, statusOf, statusBecomes } = new TaskHandles(() => env, taskQueue);

/** A task whose turns make the calls given, with calls of `gated` tools waiting for a decision. */
function gatedInput(turns: [string, object][][], rule: Partial<ApprovalRule> = {}): TaskInput {
  const i = input(`turns:${JSON.stringify(turns)}`);
  i.request.requireApproval = { tools: ['calculate'], onTimeout: 'deny', ...rule };
  return i;
}

/**
 * The calls waiting, once there are `n`. Each query gets 5 s (the engine holds one while the
 * run's workflow task is out), and they come a quarter second apart: a worker that rebuilds the
 * run for every query and every workflow task would otherwise spend its time on the queries.
 */
const waiting = (h: WorkflowHandle, n: number, timeoutMs?: number) =>
  waitUntil(
    `${n} call(s) of ${h.workflowId} waiting`,
    () =>
      env.client.connection
        .withDeadline(Date.now() + 5000, () => h.query(approvalsQuery))
        .catch(() => ({ pending: [], decided: [] })),
    (a) => a.pending.length === n,
    { stepMs: 250, ...(timeoutMs && { timeoutMs }) },
  );

/**
 * A decision, sent again while the engine refuses updates because the run's workflow task is being
 * retried (FAILED_PRECONDITION: a loaded machine timed a rebuilding worker's task out), as the
 * gateway's 503 tells a client to.
 */
async function decide(h: WorkflowHandle, tool_call_id: string, decision: 'approve' | 'deny', extra: object = {}) {
  for (let retried = false; ; retried = true) {
    try {
      return await h.executeUpdate(approvalUpdate, { args: [{ tool_call_id, decision, ...extra }] });
    } catch (err) {
      // A retry that finds the run closed: the decision sent before may have been taken, and the run
      // has ended with it (seen once on a loaded machine, embedded engine, rebuilding worker). What a
      // client then has is the run's record: the decision counts only if the run recorded it.
      const closed = /completed before the Update completed/.test(String((err as Error).cause ?? ''));
      if (retried && closed) {
        const taken = (await h.query(approvalsQuery)).decided.find((d) => d.tool_call_id === tool_call_id);
        if (taken?.decision === decision) return taken;
      }
      if (!/FAILED_PRECONDITION/.test(String((err as Error).cause ?? ''))) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const types = (taskId: string) => rec.published[taskId].map((e) => e.type);

test('an approved call runs after its decision; the task is input_required while it waits, and the stream says why', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = gatedInput([[['calculate', { expression: '6 * 7' }]]]);
    const h = await start(i);
    const [pending] = (await waiting(h, 1)).pending;
    expect(pending).toMatchObject({ tool_call_id: 'call_1_0', tool: 'calculate', input: { expression: '6 * 7' } });
    expect(pending.parameters).toMatchObject({ type: 'object' });
    expect(Date.parse(pending.timeout_at) - Date.parse(pending.since)).toBe(86_400_000);
    const view = await statusOf(h);
    expect(view.status).toBe('input_required');
    const { parameters: _schema, ...shown } = pending;
    expect(view.approvals).toEqual([shown]);
    // Nothing ran while it waited: no worker holds the call.
    expect(rec.calls[i.taskId]).not.toContain('runTool');

    const d = await decide(h, 'call_1_0', 'approve');
    expect(d).toMatchObject({ tool_call_id: 'call_1_0', decision: 'approve', by: 'user' });
    const r = await h.result();
    expect(r.output).toBe('results:42');
    expect(types(i.taskId)).toEqual([
      'agent_started',
      'agent_tool_use_start',
      'agent_tool_use',
      'agent_approval_request',
      'agent_approval_decision',
      'agent_tool_response',
      'agent_step',
      'agent_response_start',
      'agent_response',
      'agent_step',
      'agent_cost',
      'agent_completed',
    ]);
    expect(rec.calls[i.taskId].filter((c) => c.startsWith('publishApproval'))).toEqual([
      'publishApproval:input_required',
      'publishApproval:running',
    ]);
    expect((await statusOf(h)).approvals).toEqual([]);
    expect(r.events.map((e: { type: string }) => e.type)).toContain('agent_approval_request');
    await save('approval-approved', h);
  });
});

test("a denied call does not run: the model reads the reason; an edited input runs instead of the model's", async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const denied = gatedInput([[['calculate', { expression: '1 / 0' }]]]);
    const hd = await start(denied);
    await waiting(hd, 1);
    await decide(hd, 'call_1_0', 'deny', { reason: 'no dividing by zero' });
    const rd = await hd.result();
    expect(rd.output).toMatch(
      /^results:Error: a person denied this call; it was not run\. Their reason: no dividing by zero$/,
    );
    expect(rec.calls[denied.taskId]).not.toContain('runTool');

    const edited = gatedInput([[['calculate', { expression: '2 + 2' }]]]);
    const he = await start(edited);
    await waiting(he, 1);
    const d = await decide(he, 'call_1_0', 'approve', { input: { expression: '3 + 3' } });
    expect(d.input).toEqual({ expression: '3 + 3' });
    expect((await he.result()).output).toBe('results:6');
    // The model's own record of the call is what ran.
    const { messages } = await he.query(threadQuery, 0);
    const asked = messages.find((m) => m.role === 'assistant' && m.tool_calls?.length);
    expect(asked).toMatchObject({ tool_calls: [{ id: 'call_1_0', arguments: '{"expression":"3 + 3"}' }] });
    await save('approval-denied-edited', hd, he);
  });
});

test('no decision in time: denied (the run goes on) or the run fails, as on_timeout says', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const deny = gatedInput([[['calculate', { expression: '1 + 1' }]]], { timeout: 1 });
    const fail = gatedInput([[['calculate', { expression: '1 + 1' }]]], { timeout: 1, onTimeout: 'fail' });
    const [hd, hf] = await Promise.all([start(deny), start(fail)]);
    expect((await hd.result()).output).toBe('results:Error: this call was not run: no decision within 1 s.');
    const err = await hf.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(((err as WorkflowFailedError).cause as ApplicationFailure).type).toBe('approval_timeout');
    expect((await statusOf(hf)).status).toBe('failed');
    await save('approval-timeouts', hd, hf);
  });
});

test.each([
  ['a worker that keeps the run', false],
  ['a worker that rebuilds the run from its history at every workflow task', true],
])(
  'two gated calls and a free one in a turn: the free one runs meanwhile, each decision reaches its own call (%s)',
  async (_what, rebuilds) => {
    const w = rebuilds
      ? await replayingWorker(env, taskQueue, activities(), 0)
      : await worker(env, taskQueue, activities());
    await w.runUntil(async () => {
      // For the rebuilding worker, a run that names no session: its only workflow on the queue. With
      // the cache at 0, SDK core 1.24 evicts the run it is replaying as soon as another workflow's
      // task comes in (the session's: "Workflow cache full"); when the run's task then resolves
      // local activities (publishApproval), core logs "There should not be any outgoing commands or
      // messages ... This is an SDK bug." and drops the task's completion, so the engine waits out
      // the task's timeout (60 s a decision; both engines, whenever the cores are loaded).
      const i = gatedInput([
        [
          ['calculate', { expression: '2 * 3' }],
          ['calculate', { expression: '5 * 7' }],
          ['current_time', {}],
        ],
      ]);
      if (rebuilds) i.admission = { ...i.admission, ownsTurn: true, lazySession: true };
      // Room for a replay of the whole history on starved cores (a task timed out is replayed from
      // the start again). The minute-long waits seen before were the SDK's dropped completions
      // above, not slow replays: with them gone the row takes seconds.
      const h = rebuilds
        ? await env.client.workflow.start('agentTask', {
            taskQueue,
            workflowId: i.taskId,
            args: [i],
            workflowTaskTimeout: '60s',
          })
        : await start(i);
      // The rebuilding worker's waits get the budget its file's timeout allows (two full suites
      // on two cores saw it pass 30 s).
      const budget = rebuilds ? { timeoutMs: 150_000 } : {};
      await waiting(h, 2, budget.timeoutMs);
      await waitUntil('the free call ran', async () => rec.calls[i.taskId].includes('runTool'), budget);
      // Decided in reverse order: the second call first, denied; then the first, approved.
      await decide(h, 'call_1_1', 'deny', { reason: 'not that one' });
      expect((await h.query(approvalsQuery)).pending.map((p) => p.tool_call_id)).toEqual(['call_1_0']);
      expect((await statusOf(h)).status).toBe('input_required');
      await decide(h, 'call_1_0', 'approve');
      const r = await h.result();
      const [first, second, third] = r.output.replace(/^results:/, '').split(',');
      expect(first).toBe('6');
      expect(second).toMatch(/denied this call.*not that one/);
      expect(JSON.parse(third)).toMatchObject({ utc: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
      if (!rebuilds) await save('approval-two-gated', h);
    });
  },
);

test('the update refuses an unknown call and a conflicting decision, and answers a repeated one with the first', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = gatedInput([[['calculate', { expression: '1 + 2' }]], [['calculate', { expression: '3 + 4' }]]]);
    const h = await start(i);
    await waiting(h, 1);
    const unknown = await decide(h, 'call_9_9', 'approve').catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(((unknown as WorkflowUpdateFailedError).cause as ApplicationFailure).type).toBe('approval_not_found');
    const first = await decide(h, 'call_1_0', 'approve');
    // Decided, the call may have run already: the same decision again answers the first, another is refused.
    await waiting(h, 1); // the second turn's call waits now
    expect(await decide(h, 'call_1_0', 'approve')).toEqual(first);
    const conflict = await decide(h, 'call_1_0', 'deny').catch((e: unknown) => e);
    expect(((conflict as WorkflowUpdateFailedError).cause as ApplicationFailure).type).toBe('approval_conflict');
    const bad = await decide(h, 'call_2_0', 'maybe' as never).catch((e: unknown) => e);
    expect(((bad as WorkflowUpdateFailedError).cause as ApplicationFailure).type).toBe('approval_invalid');
    await decide(h, 'call_2_0', 'approve');
    expect((await h.result()).output).toBe('results:3,7');
    expect((await h.query(approvalsQuery)).decided.map((d) => d.tool_call_id)).toEqual(['call_1_0', 'call_2_0']);
  });
});

test('cancelled while a call waits: the run is cancelled, nothing waits any more, the call never ran', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = gatedInput([[['calculate', { expression: '1 + 1' }]]]);
    const h = await start(i);
    await statusBecomes(h, 'input_required');
    await h.cancel();
    await expect(h.result()).rejects.toThrow();
    const view = await statusOf(h);
    expect(view).toMatchObject({ status: 'cancelled', approvals: [] });
    expect((await h.query(approvalsQuery)).pending).toEqual([]);
    expect(rec.calls[i.taskId]).not.toContain('runTool');
    await save('approval-cancelled', h);
  });
});

test("a workflow step's gated call waits in the step: the task is input_required and shows it; the decision reaches the step", async () => {
  const fakes = fakeActivities(() => env, taskQueue, rec);
  const acts = {
    ...fakes,
    ...dagRelayFakes(),
    // The step's model calls calculate once, then answers with what it said.
    async modelTurn(input: ModelTurnInput) {
      if (input.tag?.step_id !== 'compute') return fakes.modelTurn(input);
      const results = (input.runThread ?? []).filter((m) => m.role === 'tool').map((m) => m.content);
      if (results.length)
        return {
          content: `step:${results.join(',')}`,
          thinking: '',
          toolCalls: [],
          usage: { promptTokens: 1, completionTokens: 1 },
          lastSeq: input.floor,
        };
      const call = { id: 'call_step_0', name: 'calculate', arguments: JSON.stringify({ expression: '7 * 6' }) };
      return {
        content: '',
        thinking: '',
        toolCalls: [call],
        usage: { promptTokens: 1, completionTokens: 1 },
        lastSeq: input.floor,
      };
    },
  };
  const w = await worker(env, taskQueue, acts);
  await w.runUntil(async () => {
    const dag = {
      id: 'w',
      name: 'w',
      description: 'one step',
      steps: [{ id: 'compute', name: 'compute', description: 'compute it', depends_on: [] }],
    };
    const i = taskInput('plan', { ownsTurn: true, joinGraceMs: 300, workflows: [dag] });
    i.request.requireApproval = { tools: ['calculate'], onTimeout: 'deny' };
    const h = await start(i);
    const [pending] = (await waiting(h, 1)).pending;
    expect(pending).toMatchObject({
      tool_call_id: 'call_step_0',
      tool: 'calculate',
      workflow_id: `${i.taskId}:w:compute`,
    });
    const view = await statusOf(h);
    expect(view.status).toBe('input_required');
    expect(view.approvals).toEqual([
      expect.objectContaining({ tool_call_id: 'call_step_0', workflow_id: pending.workflow_id }),
    ]);
    // The task's own update knows no such call; the step's does.
    const wrong = await decide(h, 'call_step_0', 'approve').catch((e: unknown) => e);
    expect(((wrong as WorkflowUpdateFailedError).cause as ApplicationFailure).type).toBe('approval_not_found');
    const step = env.client.workflow.getHandle(pending.workflow_id!);
    expect(await decide(step, 'call_step_0', 'approve')).toMatchObject({ decision: 'approve', by: 'user' });
    await h.result();
    const after = await h.query(approvalsQuery);
    expect(after.pending).toEqual([]);
    expect(after.decided).toEqual([
      expect.objectContaining({ tool_call_id: 'call_step_0', decision: 'approve', workflow_id: pending.workflow_id }),
    ]);
    expect(rec.calls[i.taskId]).toContain('runTool');
    await save('approval-dag-step', h);
  });
});
