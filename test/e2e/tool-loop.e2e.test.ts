// The tool loop end to end (real processes, the scripted model calling the
// built-in tools): several turns, parallel calls, a failing tool, both caps, a
// message into a running task, cancel during a tool call, and kill -9 of the
// worker during a `wait` call and during a round of parallel tool activities
// (the resumed stream shows every event once, no call lost).
import { KEY_A, KEY_B, postStream, readSse, SseEvent, useStack, waitUntil, withTemporal } from './helpers';

jest.setTimeout(180_000);
const ctx = useStack({ MODEL_HEARTBEAT_TIMEOUT_MS: '2000' });
const call = (...args: Parameters<ReturnType<typeof useStack>['call']>) => ctx.call(...args);

const calc = (expression: string, turn = 1) =>
  `[[tool name=calculate args={"expression":"${expression}"} turn=${turn}]]`;

function expectGapFree(events: SseEvent[]): void {
  expect(events.map((e) => e.data.seq)).toEqual(events.map((_, i) => i + 1));
  expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
}

/** Reads a task's events from `after` until its terminal event (or `until`). */
async function events(taskId: string, after = 0, until?: (e: SseEvent) => boolean): Promise<SseEvent[]> {
  const res = await fetch(`${ctx.stack().gatewayUrl}/tasks/${taskId}/events`, {
    headers: { authorization: `Bearer ${KEY_A}`, 'last-event-id': String(after) },
  });
  return readSse(res, until);
}

test('a multi-turn tool loop streams each call in SPEC order, with gap-free seqs, and answers from the results', async () => {
  const r = await postStream(ctx.stack(), { message: `${calc('6*7')} ${calc('40+2', 2)} compute` });
  const evs = await readSse(r);
  expectGapFree(evs);
  const types = evs.map((e) => e.data.type);
  expect(types).toEqual([
    'agent_started',
    'agent_tool_use_start',
    'agent_tool_use',
    'agent_tool_response',
    'agent_step',
    'agent_tool_use_start',
    'agent_tool_use',
    'agent_tool_response',
    'agent_step',
    'agent_response_start',
    'agent_response',
    'agent_step',
    'agent_cost',
    'agent_completed',
  ]);
  const use = evs.find((e) => e.data.type === 'agent_tool_use')!.data;
  expect(JSON.parse(use.content)).toEqual({ tool: 'calculate', input: { expression: '6*7' } });
  const response = evs.find((e) => e.data.type === 'agent_tool_response')!.data;
  expect(JSON.parse(response.content)).toEqual({ tool: 'calculate', content: '42' });
  expect(response.tool_call_id).toBe(use.tool_call_id);
  expect(evs.filter((e) => e.data.type === 'agent_step').map((e) => e.data.step)).toEqual(['1', '2', '3']);
  expect(evs.find((e) => e.data.type === 'agent_response')!.data.content).toBe('tool said: 42');
  const result = await call('GET', `/tasks/${r.headers.get('x-task-id')}/result`);
  expect(result.json).toMatchObject({ status: 'completed', output: 'tool said: 42' });
  expect(Number(result.json.cost)).toBeGreaterThan(0);
});

test('progress moves with the steps in the task view (cached each turn), and is 1 at the end', async () => {
  const r = await call('POST', '/', {
    body: { background: true, message: `${calc('1+1')} ${calc('2+2', 2)} [[slow first=1200]] steps` },
  });
  expect(r.status).toBe(202);
  const seen = new Map<string, number>();
  // Every poll also records the progress of the step it sees.
  await waitUntil(
    'the task to complete',
    async () => {
      const v = (await call('GET', `/tasks/${r.json.task_id}`)).json;
      if (v.status === 'running' && v.current_step) seen.set(v.current_step, v.progress);
      return v.status;
    },
    (status) => status === 'completed',
    { stepMs: 100 },
  );
  expect([...seen.keys()]).toEqual(expect.arrayContaining(['2', '3']));
  expect(seen.get('2')).toBeCloseTo(0.5);
  expect(seen.get('3')).toBeCloseTo(2 / 3);
  expect((await call('GET', `/tasks/${r.json.task_id}`)).json.progress).toBe(1);
});

test('parallel calls of one turn each get their response; a failing tool is an error result and the run completes', async () => {
  const r = await call('POST', '/', { body: { message: `${calc('1+1')} ${calc('2 +')} ${calc('3*3')} go` } });
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('completed');
  const responses = r.json.events.filter((e: { type: string }) => e.type === 'agent_tool_response');
  expect(responses).toHaveLength(3);
  expect(new Set(responses.map((e: { tool_call_id: string }) => e.tool_call_id)).size).toBe(3);
  expect(responses.filter((e: { is_error?: boolean }) => e.is_error)).toHaveLength(1);
  expect(r.json.output.split('\n')).toEqual([
    'tool said: 2',
    expect.stringMatching(/^tool said: Error: unexpected end/),
    'tool said: 9',
  ]);
});

test('max_steps ends the run with step_limit; the result keeps what it produced', async () => {
  const r = await call('POST', '/', {
    body: { message: `${calc('1+1')} ${calc('2+2', 2)} ${calc('3+3', 3)} go`, max_steps: 2, background: true },
  });
  const result = await call('GET', `/tasks/${r.json.task_id}/result?wait=30`);
  expect(result.json).toMatchObject({ status: 'failed', error: { type: 'step_limit' } });
  expect(result.json.events.filter((e: { type: string }) => e.type === 'agent_step')).toHaveLength(2);
  expect(Number(result.json.cost)).toBeGreaterThan(0);
  const evs = await events(r.json.task_id);
  expect(evs.slice(-2).map((e) => e.data.type)).toEqual(['agent_cost', 'agent_error']);
  // Above MAX_STEPS_CEILING, a limit of this deployment that the document cannot state: a 422.
  const over = await call('POST', '/', { body: { message: 'x', max_steps: 100_000 } });
  expect(over.status).toBe(422);
  expect(over.json.error.message).toContain('max_steps');
});

test('max_cost ends the run with budget_exceeded before a turn it cannot afford', async () => {
  const r = await call('POST', '/', {
    body: { message: `${calc('1+1')} ${calc('2+2', 2)} go`, max_cost: 0.000001, background: true },
  });
  const result = await call('GET', `/tasks/${r.json.task_id}/result?wait=30`);
  expect(result.json).toMatchObject({ status: 'failed', error: { type: 'budget_exceeded' } });
  expect(result.json.events.filter((e: { type: string }) => e.type === 'agent_step')).toHaveLength(1);
});

test('max_duration cuts a long wait short: failed with max_duration, in the status, the result and the stream', async () => {
  // The wait is 10 minutes: a run that waited it out would still be running when the result's wait ends.
  const r = await call('POST', '/', {
    body: { message: '[[tool name=wait args={"seconds":600}]] a long wait', max_duration: 2, background: true },
  });
  const result = await call('GET', `/tasks/${r.json.task_id}/result?wait=30`);
  expect(result.json).toMatchObject({
    status: 'failed',
    error: { type: 'max_duration', message: 'the run reached its max_duration of 2 s' },
  });
  expect((await call('GET', `/tasks/${r.json.task_id}`)).json).toMatchObject({
    status: 'failed',
    error: { type: 'max_duration' },
  });
  const evs = await events(r.json.task_id);
  expect(evs.map((e) => e.data.type)).toContain('agent_tool_use');
  expect(evs.slice(-2).map((e) => e.data.type)).toEqual(['agent_cost', 'agent_error']);
});

test('a message sent into a running task is read before its next turn (agent_input); 409 once finished, 404 for another account', async () => {
  const r = await call('POST', '/', { body: { message: '[[slow delay=100 tokens=20]] first', background: true } });
  const id = r.json.task_id;
  await waitUntil('the task running', async () => (await call('GET', `/tasks/${id}`)).json.status === 'running');
  expect((await call('POST', `/tasks/${id}/messages`, { body: { message: 'hello' }, key: KEY_B })).status).toBe(404);
  const sent = await call('POST', `/tasks/${id}/messages`, { body: { message: 'and then this' } });
  expect(sent.status).toBe(202);
  expect(sent.json).toMatchObject({ task_id: id, pending: 1 });
  const result = await call('GET', `/tasks/${id}/result?wait=30`);
  expect(result.json.output).toBe('You said: and then this');
  const evs = await events(id);
  expectGapFree(evs);
  expect(evs.find((e) => e.data.type === 'agent_input')?.data.content).toBe('and then this');
  const late = await call('POST', `/tasks/${id}/messages`, { body: { message: 'too late' } });
  expect(late.status).toBe(409);
  expect((await call('POST', `/tasks/${id}/messages`, { body: {} })).status).toBe(400);
});

test('cancel during a tool call ends the task as cancelled, not after the call; its stream ends', async () => {
  // The wait is 10 minutes: a cancel that waited for the call would leave the stream open past the wait below.
  const r = await call('POST', '/', {
    body: { message: '[[tool name=wait args={"seconds":600}]] wait a long time', background: true },
  });
  const id = r.json.task_id;
  await events(id, 0, (e) => e.data.type === 'agent_tool_use');
  expect((await call('POST', `/tasks/${id}/cancel`)).status).toBe(202);
  const evs = await waitUntil('the stream to end after the cancel', () => events(id));
  expect(evs[evs.length - 1].data).toMatchObject({ type: 'agent_error', error: { type: 'cancelled' } });
  expect((await call('GET', `/tasks/${id}`)).json.status).toBe('cancelled');
});

test('kill -9 of the worker during a tool call: the run completes, the resumed stream shows every event once, no call lost', async () => {
  const r = await call('POST', '/', {
    body: { message: `[[tool name=wait args={"seconds":3}]] ${calc('5*5', 2)} survive`, background: true },
  });
  const id = r.json.task_id;
  const before = await events(id, 0, (e) => e.data.type === 'agent_tool_use');
  ctx.stack().children.worker.proc.kill('SIGKILL');
  await ctx.stack().children.worker.exited;
  await ctx.stack().startWorker();
  const after = await events(id, Number(before[before.length - 1].id));
  const all = [...before, ...after];
  expectGapFree(all);
  expect(all[all.length - 1].data.type).toBe('agent_completed');
  const responses = all.filter((e) => e.data.type === 'agent_tool_response').map((e) => JSON.parse(e.data.content));
  expect(responses).toEqual([
    { tool: 'wait', content: 'waited 3 seconds' },
    { tool: 'calculate', content: '25' },
  ]);
  expect((await call('GET', `/tasks/${id}/result?wait=30`)).json.output).toBe('tool said: 25');
});

test('kill -9 of the worker while a round of parallel tool activities runs: every call answered once, no event twice', async () => {
  // 12 rounds of 16 calculate calls; the worker dies as the first result of round 4 reaches the
  // client, while the rest of that round's activities are running or have published without
  // completing. Those are retried on the new worker; the relay skips what they published before.
  const r = await call('POST', '/', {
    body: {
      message:
        '[[tool name=calculate count=16 rounds=12 args={"expression":"{{round}}*100+{{call}}"} answer=all]] many',
      background: true,
    },
  });
  const id = r.json.task_id;
  let responses = 0;
  const before = await events(id, 0, (e) => e.data.type === 'agent_tool_response' && ++responses === 3 * 16 + 1);
  ctx.stack().children.worker.proc.kill('SIGKILL');
  await ctx.stack().children.worker.exited;
  await ctx.stack().startWorker();
  const after = await events(id, Number(before[before.length - 1].id));
  const all = [...before, ...after];
  expectGapFree(all);
  expect(all.at(-1)!.data.type).toBe('agent_completed');
  const results = all.filter((e) => e.data.type === 'agent_tool_response');
  expect(results).toHaveLength(12 * 16);
  expect(new Set(results.map((e) => e.data.tool_call_id)).size).toBe(12 * 16);
  expect(new Set(all.filter((e) => e.data.type === 'agent_tool_use').map((e) => e.data.tool_call_id))).toEqual(
    new Set(results.map((e) => e.data.tool_call_id)),
  );
  const values = results.map((e) => Number(JSON.parse(e.data.content).content)).sort((a, b) => a - b);
  expect(values).toEqual([...Array(12).keys()].flatMap((k) => [...Array(16).keys()].map((c) => (k + 1) * 100 + c + 1)));
  const result = await call('GET', `/tasks/${id}/result?wait=30`);
  expect(result.json.status).toBe('completed');
  expect(result.json.output.split('\n')).toHaveLength(12 * 16);
  const retried = await withTemporal(ctx.stack(), async (client) => {
    const history = await client.workflow.getHandle(id).fetchHistory();
    return (history.events ?? []).filter(
      (e) => e.activityTaskStartedEventAttributes && (e.activityTaskStartedEventAttributes.attempt ?? 1) > 1,
    ).length;
  });
  console.log(`kill -9 during round 4 of 12 x 16 tool calls: ${retried} activities ran again on the new worker`);
});
