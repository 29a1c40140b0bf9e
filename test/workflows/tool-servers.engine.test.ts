// MCP tool servers and handoff agents in the task workflow, on the engine (fake
// model and fake MCP activities, the real session workflow): the servers are
// listed once at the run's start and their tools offered under namespaced
// names; calls run as activities summarised <server>/<tool>; an unreachable
// server fails the run with mcp_unavailable; a transfer hands the conversation
// to another agent, which the session remembers for its next run (also across
// runs without agents, and across the session's idle close). Histories are saved (UPDATE_HISTORIES=1) for the replay test.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError, WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createEnv, saveHistories as save, worker } from './env';
import { type InputFields, fakeActivities, recorder, taskInput } from './fake-activities';
import type { TaskInput } from '../../workflows/types';
import { createSessionActivities } from '../../activities/sessions';

jest.setTimeout(90_000);
let env: TestWorkflowEnvironment;
const taskQueue = `wf-tools-${randomUUID()}`;
const rec = recorder();
const activities = () => fakeActivities(() => env, taskQueue, rec);
const SERVERS = [{ name: 'srv', url: 'http://mcp.example.com/mcp', token: 'tok' }];
const AGENTS = [
  { name: 'billing', description: 'Answers questions about invoices' },
  { name: 'support', description: 'Fixes technical problems' },
];

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

function input(message: string, over: InputFields = {}): TaskInput {
  return taskInput(message, { joinGraceMs: 300, ownsTurn: true, ...over });
}

function start(i: TaskInput): Promise<WorkflowHandle> {
  return env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
}

test('MCP tools are listed once, offered namespaced, and called in parallel as activities summarised <server>/<tool>', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('mcp:2', { mcpServers: SERVERS });
    const h = await start(i);
    const r = await h.result();
    expect(r.output).toBe('results:echo:t0,echo:t1');
    expect(rec.calls[i.taskId]).toEqual([
      'modelTurn',
      'callMcpTool:echo',
      'callMcpTool:echo',
      'modelTurn',
      'finishTurn',
      'publishEnd',
    ]);
    expect(rec.turns[i.taskId].map((t) => t.tools)).toEqual([
      ['current_time', 'calculate', 'wait', 'srv__echo'],
      ['current_time', 'calculate', 'wait', 'srv__echo'],
    ]);
    const history = await h.fetchHistory();
    const scheduled = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes);
    expect(scheduled.map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name)).toEqual([
      'listMcpTools',
      'modelTurn',
      'callMcpTool',
      'callMcpTool',
      'modelTurn',
      'finishTurn',
    ]);
    expect(scheduled.filter((e) => e.userMetadata?.summary)).toHaveLength(3);
    await save('mcp-tools', h);
  });
});

test('an MCP server that cannot be reached fails the run at once with mcp_unavailable, before any model turn', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const i = input('hello', { mcpServers: [...SERVERS, { name: 'down', url: 'http://down.example.com/mcp' }] });
    const h = await start(i);
    const err = await h.result().catch((e) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err.cause as ApplicationFailure).type).toBe('mcp_unavailable');
    expect(rec.calls[i.taskId]).not.toContain('modelTurn');
    expect(rec.published[i.taskId].map((e) => e.type)).toEqual(['agent_error']);
  });
});

test('a transfer hands the conversation to the agent; the session remembers it for its next run', async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const first = input('handoff:billing', { agents: AGENTS });
    const h1 = await start(first);
    const r1 = await h1.result();
    expect(r1.output).toBe('agent:billing');
    // The first turn is the main agent's, offered both transfers; the second is billing's, offered the other one.
    expect(rec.turns[first.taskId]).toEqual([
      { agent: undefined, tools: ['current_time', 'calculate', 'wait', 'transfer_to_billing', 'transfer_to_support'] },
      { agent: 'billing', tools: ['current_time', 'calculate', 'wait', 'transfer_to_support'] },
    ]);
    const types = r1.events.map((e: { type: string }) => e.type);
    expect(types.slice(types.indexOf('agent_tool_response'), types.indexOf('agent_tool_response') + 2)).toEqual([
      'agent_tool_response',
      'agent_handoff',
    ]);
    // Once: publishing it after the round (pending) does not record it again.
    expect(types.filter((t: string) => t === 'agent_handoff')).toHaveLength(1);
    expect(r1.events.find((e: { type: string }) => e.type === 'agent_handoff')).toEqual({
      type: 'agent_handoff',
      from: 'main',
      to: 'billing',
    });
    expect(rec.published[first.taskId].map((e) => e.type)).toContain('agent_handoff');

    // The next run of the session starts with billing; one without agents starts with the main agent.
    const second = input('hello again', { agents: AGENTS, session: first.session, ownsTurn: false });
    const h2 = await start(second);
    await env.client.workflow
      .getHandle(`session:${first.account}:${first.session}`)
      .signal('enqueue', { taskId: second.taskId });
    await h2.result();
    expect(rec.turns[second.taskId][0].agent).toBe('billing');
    const third = input('plain', { session: first.session, ownsTurn: false });
    const h3 = await start(third);
    await env.client.workflow
      .getHandle(`session:${first.account}:${first.session}`)
      .signal('enqueue', { taskId: third.taskId });
    await h3.result();
    expect(rec.turns[third.taskId][0].agent).toBeUndefined();
    // A run without agents leaves what the session remembers as it was.
    const fourth = input('and again', { agents: AGENTS, session: first.session, ownsTurn: false });
    const h4 = await start(fourth);
    await env.client.workflow
      .getHandle(`session:${first.account}:${first.session}`)
      .signal('enqueue', { taskId: fourth.taskId });
    await h4.result();
    expect(rec.turns[fourth.taskId][0].agent).toBe('billing');
    await save('handoff', h1, h2);
  });
});

test("the session's agent outlives its idle close: the run that reopens it starts with that agent", async () => {
  const w = await worker(env, taskQueue, activities());
  await w.runUntil(async () => {
    const first = input('handoff:support', { agents: AGENTS });
    const sessionId = `session:${first.account}:${first.session}`;
    const [h1] = await Promise.all([
      start(first),
      env.client.workflow.start('agentSession', {
        taskQueue,
        workflowId: sessionId,
        args: [
          {
            account: first.account,
            session: first.session,
            messages: [],
            queue: [],
            active: first.taskId,
            idleCloseMs: 500,
            watchMs: 500,
          },
        ],
      }),
    ]);
    expect((await h1.result()).output).toBe('agent:support');
    expect(await env.client.workflow.getHandle(sessionId).result()).toMatchObject({ agent: 'support' });
    // As the gateway does for a closed session: start the run and join it (which reopens the session).
    const next = input('hello', { agents: AGENTS, session: first.session, ownsTurn: false });
    const { joinSession } = createSessionActivities({
      temporal: env.client,
      config: { TEMPORAL_TASK_QUEUE: taskQueue, RUN_WATCH_MS: 500, SESSION_IDLE_CLOSE_MS: 0 },
    } as never);
    const [h2] = await Promise.all([
      start(next),
      joinSession({ taskId: next.taskId, account: next.account, session: next.session }),
    ]);
    await h2.result();
    expect(rec.turns[next.taskId][0].agent).toBe('support');
  });
});
