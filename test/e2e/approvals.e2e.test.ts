// Approval gates over HTTP on the real processes (docs/approvals.md): a gated call makes the task
// input_required (GET /tasks/{id}, the listing, the stream), and POST /tasks/{id}/approvals/{call}
// decides it: approve with edited input (an input that does not fit the tool: 400), a repeated
// decision (200, the first) and a conflicting one (409), an unknown call and another account (404);
// deny with a reason while the answer streams; an MCP server's require_approval in its three
// forms; a callback that gets the request before the decision; a timeout that fails the run; a
// cancel while a call waits; an earlier API version reading the status as running.
import { KEY_B, postStream, readSse, useStack, waitUntil } from './helpers';
import { startReceiver, type Receiver } from './callback-receiver';

jest.setTimeout(120_000);
const ctx = useStack({ OUTBOUND_ALLOWLIST: '127.0.0.1' });
const call: ReturnType<typeof useStack>['call'] = (...args) => ctx.call(...args);
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

interface Waiting {
  tool_call_id: string;
  tool: string;
  input: unknown;
  since: string;
  timeout_at: string;
}

/** The task's view once `n` of its calls wait for a decision. */
async function waitingCalls(taskId: string, n: number): Promise<Waiting[]> {
  const view = await waitUntil(
    `${n} call(s) of ${taskId} waiting for a decision`,
    async () => (await call('GET', `/tasks/${taskId}`)).json,
    (v) => v.status === 'input_required' && v.approvals?.length === n,
    { stepMs: 100 },
  );
  return view.approvals;
}

const decide = (taskId: string, callId: string, body: object, key?: string) =>
  call('POST', `/tasks/${taskId}/approvals/${callId}`, { body, key });

const CALCULATE = (expression: string) => `[[tool name=calculate args={"expression":"${expression}"}]]`;

test('approve with edited input: the task waits as input_required, refusals are 400/404/409, a repeat answers the first', async () => {
  const submit = await call('POST', '/', {
    body: { message: `${CALCULATE('6 * 7')} compute`, background: true, require_approval: { tools: ['calc*'] } },
  });
  expect(submit.status).toBe(202);
  const id = submit.json.task_id;
  const [waiting] = await waitingCalls(id, 1);
  expect(waiting).toMatchObject({ tool: 'calculate', input: { expression: '6 * 7' } });
  const callId = waiting.tool_call_id;

  // The listing and the filters agree; a client of the first API version reads it as running.
  // The status is cached as the call starts to wait; visibility has it once that workflow task is done.
  await waitUntil(
    'the task listed as input_required',
    async () => (await call('GET', `/tasks?status=input_required&session=${submit.json.session}`)).json.tasks,
    (tasks) => tasks.length === 1 && tasks[0].task_id === id,
    { stepMs: 100 },
  );
  expect((await call('GET', `/tasks?status=running&session=${submit.json.session}`)).json.tasks).toEqual([]);
  const old = await call('GET', `/tasks/${id}`, { headers: { 'api-version': '2026-11-28' } });
  expect(old.json.status).toBe('running');
  // That client's ?status=running finds it too; the newest version's does not.
  const oldRunning = await call('GET', `/tasks?status=running&session=${submit.json.session}`, {
    headers: { 'api-version': '2026-11-28' },
  });
  expect(oldRunning.json.tasks.map((t: { task_id: string; status: string }) => [t.task_id, t.status])).toEqual([
    [id, 'running'],
  ]);
  expect((await call('GET', `/tasks/${id}/approvals`)).json).toMatchObject({
    task_id: id,
    status: 'input_required',
    pending: [{ tool_call_id: callId, tool: 'calculate' }],
    decided: [],
  });

  expect((await decide(id, callId, { decision: 'approve' }, KEY_B)).status).toBe(404);
  const unknown = await decide(id, 'call_unknown', { decision: 'approve' });
  expect(unknown.status).toBe(404);
  expect(unknown.json.error.message).toMatch(/call_unknown/);
  const wrongType = await decide(id, callId, { decision: 'approve', input: { expression: 5 } });
  expect(wrongType.status).toBe(400);
  expect(wrongType.json.error.details).toEqual([
    expect.objectContaining({ path: 'body.input.expression', message: 'must be string' }),
  ]);
  const extra = await decide(id, callId, { decision: 'approve', input: { expression: '1', shell: 'rm -rf /' } });
  expect(extra.status).toBe(400);
  expect(extra.json.error.details[0]).toMatchObject({ path: 'body.input.shell' });
  expect((await decide(id, callId, { decision: 'perhaps' })).status).toBe(400);

  const approved = await decide(id, callId, { decision: 'approve', input: { expression: '2 + 3' } });
  expect(approved.status).toBe(200);
  expect(approved.json).toMatchObject({
    tool_call_id: callId,
    decision: 'approve',
    by: 'user',
    input: { expression: '2 + 3' },
  });
  expect((await decide(id, callId, { decision: 'approve' })).json).toEqual(approved.json);
  const conflict = await decide(id, callId, { decision: 'deny' });
  expect(conflict.status).toBe(409);
  expect(conflict.json.error.details.decided).toEqual(approved.json);

  const result = await call('GET', `/tasks/${id}/result?wait=30`);
  expect(result.json).toMatchObject({ status: 'completed', output: 'tool said: 5' });
  const types = result.json.events.map((e: { type: string }) => e.type);
  expect(types.slice(types.indexOf('agent_approval_request'), types.indexOf('agent_tool_response') + 1)).toEqual([
    'agent_approval_request',
    'agent_approval_decision',
    'agent_tool_response',
  ]);
  // After the end the same decision still answers the first; another is a 409.
  expect((await decide(id, callId, { decision: 'approve' })).json).toEqual(approved.json);
  expect((await decide(id, callId, { decision: 'deny' })).status).toBe(409);
});

test('deny with a reason while the answer streams: the stream shows the request and the decision, the model reads why', async () => {
  const res = await postStream(ctx.stack(), {
    message: `${CALCULATE('1 / 0')} divide`,
    require_approval: { tools: ['calculate'] },
  });
  const id = res.headers.get('x-task-id')!;
  const [waiting] = await waitingCalls(id, 1);
  const denied = await decide(id, waiting.tool_call_id, { decision: 'deny', reason: 'no dividing by zero' });
  expect(denied.json).toMatchObject({ decision: 'deny', by: 'user', reason: 'no dividing by zero' });
  const events = await readSse(res, (e) => e.data.type === 'agent_completed');
  const request = events.find((e) => e.data.type === 'agent_approval_request')!;
  const decision = events.find((e) => e.data.type === 'agent_approval_decision')!;
  expect(request.data).toMatchObject({
    tool_call_id: waiting.tool_call_id,
    tool: 'calculate',
    input: { expression: '1 / 0' },
  });
  expect(decision.data).toMatchObject({ decision: 'deny', reason: 'no dividing by zero' });
  expect(Number(decision.id)).toBeGreaterThan(Number(request.id));
  const answer = events.filter((e) => e.data.type === 'agent_response').pop()!;
  expect(answer.data.content).toMatch(/tool said: Error: a person denied this call.*no dividing by zero/);
});

test("an MCP server's require_approval: always, by tool name (never wins), never", async () => {
  const url = ctx.stack().demoMcpUrl!;
  const message = ['a__add', 'b__add', 'b__multiply', 'c__add']
    .map((name) => `[[tool name=${name} args={"a":2,"b":3}]]`)
    .join(' ');
  const submit = await call('POST', '/', {
    body: {
      message,
      background: true,
      mcp_servers: [
        { serverName: 'a', serverUrl: url, require_approval: 'always' },
        {
          serverName: 'b',
          serverUrl: url,
          require_approval: { always: { tool_names: ['multiply', 'add'] }, never: { tool_names: ['add'] } },
        },
        { serverName: 'c', serverUrl: url, require_approval: 'never' },
      ],
    },
  });
  expect(submit.status).toBe(202);
  const id = submit.json.task_id;
  const waiting = await waitingCalls(id, 2);
  expect(waiting.map((w) => w.tool).sort()).toEqual(['a__add', 'b__multiply']);
  for (const w of waiting) expect((await decide(id, w.tool_call_id, { decision: 'approve' })).status).toBe(200);
  const result = await call('GET', `/tasks/${id}/result?wait=30`);
  expect(result.json.output.split('\n').sort()).toEqual([
    'tool said: 5',
    'tool said: 5',
    'tool said: 5',
    'tool said: 6',
  ]);
  const bad = await call('POST', '/', {
    body: { message: 'x', mcp_servers: [{ serverName: 'a', serverUrl: url, require_approval: 'sometimes' }] },
  });
  expect(bad.status).toBe(400);
  expect(bad.json.error.details[0].path).toMatch(/^body\.mcp_servers\[0\]\.require_approval/);
});

test('a callback gets the request while the call waits, then the decision and the end', async () => {
  const submit = await call('POST', '/', {
    body: {
      message: `${CALCULATE('2 * 21')} compute`,
      background: true,
      require_approval: { tools: ['calculate'] },
      callback: { url: receiver.url('/approvals') },
    },
  });
  const id = submit.json.task_id;
  const [waiting] = await waitingCalls(id, 1);
  const types = () => receiver.accepted('/approvals').map((d) => String(d.json.type));
  await waitUntil('the request delivered while the call waits', async () => types().includes('agent_approval_request'));
  expect(types()).not.toContain('agent_approval_decision');
  const request = receiver.accepted('/approvals').find((d) => d.json.type === 'agent_approval_request')!;
  expect(request.json).toMatchObject({ task_id: id, tool_call_id: waiting.tool_call_id, tool: 'calculate' });
  await decide(id, waiting.tool_call_id, { decision: 'approve' });
  await waitUntil('the end delivered', async () => types().includes('task.completed'));
  const seen = types();
  expect(seen.indexOf('agent_approval_decision')).toBeGreaterThan(seen.indexOf('agent_approval_request'));
  expect(seen.indexOf('agent_tool_response')).toBeGreaterThan(seen.indexOf('agent_approval_decision'));
});

test('no decision in time with on_timeout "fail": the run fails approval_timeout; a cancel while a call waits cancels it', async () => {
  const late = await call('POST', '/', {
    body: {
      message: CALCULATE('1 + 1'),
      background: true,
      require_approval: { tools: ['calculate'], timeout: 1, on_timeout: 'fail' },
    },
  });
  const failed = await call('GET', `/tasks/${late.json.task_id}/result?wait=30`);
  expect(failed.json).toMatchObject({ status: 'failed', error: { type: 'approval_timeout' } });

  const waiting = await call('POST', '/', {
    body: { message: CALCULATE('1 + 1'), background: true, require_approval: { tools: ['calculate'] } },
  });
  await waitingCalls(waiting.json.task_id, 1);
  expect((await call('POST', `/tasks/${waiting.json.task_id}/cancel`)).status).toBe(202);
  const cancelled = await call('GET', `/tasks/${waiting.json.task_id}/result?wait=30`);
  expect(cancelled.json.status).toBe('cancelled');
  const view = (await call('GET', `/tasks/${waiting.json.task_id}`)).json;
  expect(view).toMatchObject({ status: 'cancelled', approvals: [] });
});

test("a workflow step's gated call is decided through the task: it waits in the step, then the task's own call waits", async () => {
  const submit = await call('POST', '/', {
    body: {
      message: `${CALCULATE('2 * 21')} compute`,
      background: true,
      require_approval: { tools: ['calculate'] },
      workflows: [
        {
          id: 'w',
          name: 'w',
          description: 'one step',
          steps: [{ id: 's', name: 's', description: 'do it', depends_on: [] }],
        },
      ],
    },
  });
  const id = submit.json.task_id;
  const [inStep] = await waitingCalls(id, 1);
  expect(inStep).toMatchObject({ tool: 'calculate', workflow_id: `${id}:w:s` });
  expect((await decide(id, inStep.tool_call_id, { decision: 'deny', reason: 'not in the step' })).json).toMatchObject({
    decision: 'deny',
    by: 'user',
  });
  // Then the task's own turn makes the same call, waiting in the task.
  const own = await waitUntil(
    "the task's own call waiting",
    async () => (await call('GET', `/tasks/${id}`)).json,
    (v) => v.status === 'input_required' && v.approvals?.length === 1 && !v.approvals[0].workflow_id,
    { stepMs: 100 },
  );
  expect((await decide(id, own.approvals[0].tool_call_id, { decision: 'approve' })).status).toBe(200);
  const result = await call('GET', `/tasks/${id}/result?wait=30`);
  expect(result.json).toMatchObject({ status: 'completed', output: 'tool said: 42' });
  const decided = (await call('GET', `/tasks/${id}/approvals`)).json.decided;
  expect(decided.map((d: { decision: string; workflow_id?: string }) => [d.decision, d.workflow_id ?? null])).toEqual([
    ['approve', null],
    ['deny', `${id}:w:s`],
  ]);
});

test('a bad require_approval is a 400 naming its place', async () => {
  const empty = await call('POST', '/', { body: { message: 'x', require_approval: { tools: [] } } });
  expect(empty.status).toBe(400);
  expect(empty.json.error.details[0].path).toBe('body.require_approval.tools');
  const pattern = await call('POST', '/', { body: { message: 'x', require_approval: { tools: ['rm -rf'] } } });
  expect(pattern.json.error.details[0].path).toBe('body.require_approval.tools[0]');
  const onTimeout = await call('POST', '/', {
    body: { message: 'x', require_approval: { tools: ['bash'], on_timeout: 'ignore' } },
  });
  expect(onTimeout.json.error.details[0].path).toBe('body.require_approval.on_timeout');
});
