// Redis killed in the middle of runs and started again empty (the test stack's
// Redis keeps no file): the runs complete, and afterwards their streams hold
// every complete event of their record, those the relay had lost published
// again from Temporal and marked `recovered` (a half-streamed answer comes
// back whole), never silently missing; seqs only go up. A run that ended while
// Redis was down gets them from the gateway, with its end, once it is back.
import { KEY_A, readSse, SseEvent, useStack, waitUntil } from './helpers';
import { missingEvents } from '../../src/common/relay/relay-recovery';
import type { AgentEvent, AgentEventBody } from '../../src/common/relay/events';

jest.setTimeout(180_000);
const ctx = useStack();
const call: typeof ctx.call = (...args) => ctx.call(...args);
const ends = (ev: SseEvent) => ['agent_completed', 'agent_error'].includes(ev.data.type);

/** Reads a task's stream from its start until its end. */
async function wholeStream(taskId: string): Promise<AgentEvent[]> {
  const res = await fetch(`${ctx.stack().gatewayUrl}/tasks/${taskId}/events`, {
    headers: { authorization: `Bearer ${KEY_A}` },
  });
  expect(res.status).toBe(200);
  return (await readSse(res, ends)).map((e) => e.data as AgentEvent);
}

/** Kills Redis once `due` holds (checked every 20 ms), and starts it again (empty) 1.5 s later. */
async function loseRedisWhen(due: () => boolean): Promise<void> {
  await waitUntil('the moment to kill Redis', due, { timeoutMs: 60_000, stepMs: 20 });
  await ctx.stack().children.redis.stop('SIGKILL');
  // Part of the scenario: an outage of 1.5 s, during which the runs go on without a relay.
  await new Promise((r) => setTimeout(r, 1500));
  await ctx.stack().restarters.redis();
}

/** The run's stream after it ended: seqs only go up, it ends with the run's end, and every complete event of the result is on it. */
async function expectWhole(taskId: string): Promise<AgentEvent[]> {
  const result = await call('GET', `/tasks/${taskId}/result?wait=60`);
  expect(result.json.status).toBe('completed');
  // The gateway's Redis client may still be reconnecting.
  const stream = await waitUntil(
    "the task's whole stream, once the gateway reaches Redis again",
    () => wholeStream(taskId),
    (evs) => evs.length > 0,
    { stepMs: 250 },
  );
  const seqs = stream.map((e) => e.seq);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  expect(new Set(seqs).size).toBe(seqs.length);
  expect(stream.at(-1)!.type).toBe('agent_completed');
  expect(missingEvents(stream, result.json.events as AgentEventBody[])).toEqual([]);
  return stream;
}

test('Redis lost mid-answer: the answer comes back whole (recovered), with everything before it', async () => {
  const r = await call('POST', '/', {
    body: { message: '[[slow delay=60 tokens=60]] keep going', background: true, streaming_tokens: true },
  });
  const taskId = r.json.task_id;
  const since = Date.now();
  // Mid-answer: the model has been answering for 1 s of its 3.6 s.
  await loseRedisWhen(() =>
    ctx
      .stack()
      .model!.received()
      .some(
        (q) =>
          q.at >= since - 1000 && JSON.stringify(q.body.messages).includes('keep going') && Date.now() - q.at > 1000,
      ),
  );
  const stream = await expectWhole(taskId);
  const output = (await call('GET', `/tasks/${taskId}/result`)).json.output as string;
  const recovered = stream.filter((e) => (e as { recovered?: boolean }).recovered);
  expect(recovered.map((e) => e.type)).toEqual(
    expect.arrayContaining(['agent_started', 'agent_response_start', 'agent_response']),
  );
  expect(recovered.find((e) => e.type === 'agent_response')).toMatchObject({ content: output });
});

test('Redis lost in the middle of a DAG: every step end, the progress and the answer are on the stream afterwards', async () => {
  const step = (id: string, depends_on: string[]) => ({
    id,
    name: `step ${id}`,
    description: `do ${id} [[slow first=1200]]`,
    depends_on,
  });
  const body = {
    message: 'plan it',
    background: true,
    workflows: [
      { id: 'w', name: 'w', description: 'a diamond', steps: [step('a', []), step('b', []), step('c', ['a', 'b'])] },
    ],
  };
  const r = await call('POST', '/', { body });
  const taskId = r.json.task_id;
  // Lost while the roots run (their first reply waits 1.2 s).
  await loseRedisWhen(() =>
    ctx
      .stack()
      .model!.received()
      .some((q) => JSON.stringify(q.body.messages).includes('The step: step a.')),
  );
  const stream = await expectWhole(taskId);
  const stepEnds = stream.filter((e) => e.type === 'agent_step' && e.status).map((e) => e.step_id);
  expect(stepEnds.sort()).toEqual(['a', 'b', 'c']);
  // Each step's own answer is on the stream too (recovered by the step when the relay lost it).
  for (const id of ['a', 'b', 'c'])
    expect(stream.some((e) => e.type === 'agent_response' && e.step_id === id)).toBe(true);
});

test('a run that ends while Redis is down: once Redis is back, its stream has every complete event (the gateway recovers them) and its end', async () => {
  await ctx.stack().children.redis.stop('SIGKILL');
  const r = await call('POST', '/', {
    body: { message: '[[tool name=calculate args={"expression":"6*7"}]] while the relay is down', background: true },
  });
  expect(r.status).toBe(202);
  const done = await call('GET', `/tasks/${r.json.task_id}/result?wait=60`);
  expect(done.json.status).toBe('completed');
  await ctx.stack().restarters.redis();
  const stream = await expectWhole(r.json.task_id);
  expect(
    stream.filter((e) => e.type !== 'agent_completed').every((e) => (e as { recovered?: boolean }).recovered),
  ).toBe(true);
  expect(stream.map((e) => e.type)).toEqual(
    expect.arrayContaining(['agent_tool_use', 'agent_tool_response', 'agent_response']),
  );
});
