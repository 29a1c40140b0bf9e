// Declarative workflows (SPEC 2.3, 2.4) over HTTP with SSE on the real
// processes: every step is a child workflow running the agent loop; a 20-step
// DAG of fan-out, diamond and fan-in shapes keeps every dependency in its
// event order and starts its roots together; an optional step that fails is
// skipped and its dependents are told; a required one fails the task naming
// it and cancels the steps still running; a cancel stops the steps; a kill -9
// of the worker re-runs no finished step; an answer that does not fit its
// output_schema is retried under the step's policy.
import { randomUUID } from 'node:crypto';
import { postStream, readSse, SseEvent, useStack, waitUntil, withTemporal } from './helpers';

jest.setTimeout(180_000);
const ctx = useStack({ MODEL_HEARTBEAT_TIMEOUT_MS: '2000' });
const call: typeof ctx.call = (...args) => ctx.call(...args);

type Step = {
  id: string;
  name: string;
  description: string;
  depends_on: string[];
  optional?: boolean;
  retry_policy?: object;
  output_schema?: object;
};
const step = (id: string, depends_on: string[] = [], extra: Partial<Step> = {}): Step => ({
  id,
  name: `step ${id}`,
  description: `do ${id}`,
  depends_on,
  ...extra,
});
const workflow = (id: string, steps: Step[]) => ({ id, name: `workflow ${id}`, description: `the ${id} plan`, steps });
const ends = (ev: SseEvent) => ['agent_completed', 'agent_error'].includes(ev.data.type);
const uid = () => randomUUID().slice(0, 8);

/** The scripted model's requests for a step (its prompt names it), since `since`. */
function requestsOf(since: number, name: string) {
  return (
    ctx
      .stack()
      .model!.received()
      .filter((r) => r.at >= since)
      // Its own prompt's second line (a dependent's prompt quotes its output, which echoes the prompt).
      .filter((r) =>
        String((r.body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'user')?.content ?? '')
          .split('\n')[1]
          ?.startsWith(`The step: ${name}.`),
      )
  );
}

/** The seq of the step-end agent_step of each step, and of each step's first own event. */
function stepSeqs(events: SseEvent[]) {
  const end = new Map<string, number>();
  const first = new Map<string, number>();
  for (const e of events) {
    const d = e.data;
    if (!d.step_id) continue;
    if (d.type === 'agent_step' && d.status) end.set(d.step_id, d.seq);
    else if (!first.has(d.step_id)) first.set(d.step_id, d.seq);
  }
  return { end, first };
}

test('a 20-step DAG: every step after its dependencies, roots together, progress to 1, the answer over all results', async () => {
  const slowRoot = '[[slow first=1500]]';
  const steps = [
    step('r1', [], { description: `root one ${slowRoot}` }),
    step('r2', [], { description: `root two ${slowRoot}` }),
    step('r3', [], { description: `root three ${slowRoot}` }),
    ...['a1', 'a2', 'a3', 'a4'].map((id) => step(id, ['r1'])),
    step('b1', ['r2']),
    step('b2', ['b1']),
    step('b3', ['b1']),
    step('b4', ['b2', 'b3']),
    step('c1', ['a1', 'a2', 'a3', 'a4', 'b4', 'r3']),
    ...['d1', 'd2', 'd3', 'd4', 'd5'].map((id) => step(id, ['c1'])),
    step('e1', ['d1', 'd2', 'd3', 'd4', 'd5']),
    step('f1', ['r3']),
    step('f2', ['f1']),
  ];
  expect(steps).toHaveLength(20);
  const since = Date.now();
  const res = await postStream(ctx.stack(), { message: 'plan the launch', workflows: [workflow('launch', steps)] });
  // The roots together: their three model requests (each answered after 1.5 s) in progress at once,
  // before any other step's (every other step waits for a root to end).
  const roots = ['r1', 'r2', 'r3'];
  const rootsTogether = waitUntil(
    "the three roots' model requests in progress at once",
    () => {
      const asked = ctx
        .stack()
        .model!.received()
        .filter((r) => r.at >= since).length;
      const rootsAsked = roots.filter((id) => requestsOf(since, `step ${id}`).length > 0).length;
      return { rootsAsked, othersAsked: asked - rootsAsked, active: ctx.stack().model!.stats().active };
    },
    (s) => s.rootsAsked === 3 && s.othersAsked === 0 && s.active >= 3,
    { stepMs: 20 },
  );
  const taskId = res.headers.get('x-task-id')!;
  // Meanwhile the task's view shows the graph: the roots running, the steps after them waiting.
  const graphWhileRunning = rootsTogether.then(() =>
    waitUntil(
      'the roots running in the view',
      async () => (await call('GET', `/tasks/${taskId}`)).json.workflows?.[0].steps,
      (v: { id: string; status: string }[] | undefined) =>
        roots.every((r) => v?.find((x) => x.id === r)?.status === 'running'),
      { stepMs: 50 },
    ),
  );
  const [events, , midway] = await Promise.all([readSse(res, ends), rootsTogether, graphWhileRunning]);
  expect(midway!.find((x: { id: string }) => x.id === 'e1')).toMatchObject({
    status: 'pending',
    depends_on: ['d1', 'd2', 'd3', 'd4', 'd5'],
  });
  expect(events.at(-1)!.data.type).toBe('agent_completed');
  expect(events[0].data.type).toBe('agent_started');
  const { end, first } = stepSeqs(events);
  for (const s of steps) {
    expect([s.id, end.has(s.id)]).toEqual([s.id, true]);
    for (const d of s.depends_on) {
      expect([s.id, d, first.get(s.id)! > end.get(d)!]).toEqual([s.id, d, true]);
      expect([s.id, d, end.get(s.id)! > end.get(d)!]).toEqual([s.id, d, true]);
    }
    // Each finished step called the model once.
    expect([s.id, requestsOf(since, s.name).length]).toEqual([s.id, 1]);
  }
  for (const e of events.filter((x) => x.data.step_id)) expect(e.data.workflow_id).toBe('launch');
  const progress = events.filter((e) => e.data.type === 'agent_progress').map((e) => e.data.progress);
  expect(progress).toHaveLength(20);
  expect(progress).toEqual([...progress].sort((a, b) => a - b));
  expect(progress.at(-1)).toBe(1);
  // The answer came last, with every step's result in its context.
  const answer = events.filter((e) => e.data.type === 'agent_response' && !e.data.step_id).at(-1)!;
  expect(answer.data.seq).toBeGreaterThan(Math.max(...end.values()));
  for (const s of steps) expect(answer.data.content).toContain(`- ${s.name} (${s.id}):`);
  const view = await call('GET', `/tasks/${events[0].data.task_id}`);
  expect(view.json).toMatchObject({ status: 'completed', progress: 1 });
  // The graph as the web console draws it: every step with its dependencies, completed.
  expect(view.json.workflows).toEqual([
    {
      id: 'launch',
      name: 'workflow launch',
      steps: steps.map((s) => ({ id: s.id, name: s.name, depends_on: s.depends_on, status: 'completed' })),
    },
  ]);
});

test('an optional step that keeps failing is skipped and its dependents are told; the task completes', async () => {
  const key = `opt-${uid()}`;
  const res = await postStream(ctx.stack(), {
    message: 'try the shortcut',
    workflows: [
      workflow('w', [
        step('s1', [], {
          optional: true,
          description: `fragile [[fail status=400 times=99 key=${key}]]`,
          retry_policy: { max_attempts: 2, initial_interval: 0.2 },
        }),
        step('s2', ['s1']),
        step('s3'),
      ]),
    ],
  });
  const events = await readSse(res, ends);
  expect(events.at(-1)!.data.type).toBe('agent_completed');
  const stepEnds = events
    .filter((e) => e.data.type === 'agent_step' && e.data.status)
    .map((e) => [e.data.step_id, e.data.status]);
  expect(stepEnds).toEqual(
    expect.arrayContaining([
      ['s1', 'skipped'],
      ['s2', 'completed'],
      ['s3', 'completed'],
    ]),
  );
  const shown = (await call('GET', `/tasks/${events[0].data.task_id}`)).json.workflows[0].steps;
  expect(shown.map((x: { id: string; status: string }) => [x.id, x.status])).toEqual([
    ['s1', 'skipped'],
    ['s2', 'completed'],
    ['s3', 'completed'],
  ]);
  const s2 = requestsOf(0, 'step s2').at(-1)!;
  const prompt = (s2.body.messages as { role: string; content: string }[]).find((m) => m.role === 'user')!.content;
  expect(prompt).toMatch(/step s1 \(s1\): skipped, it failed \(.*HTTP 400/);
});

test('a required step that fails fails the task naming it, and cancels the steps still running', async () => {
  const key = `req-${uid()}`;
  const res = await postStream(ctx.stack(), {
    message: 'do it all',
    workflows: [
      workflow('w', [
        step('bad', [], {
          description: `breaks [[fail status=400 times=99 key=${key}]]`,
          retry_policy: { max_attempts: 1 },
        }),
        step('long', [], { description: 'takes long [[slow first=20000]]' }),
      ]),
    ],
  });
  const events = await readSse(res, ends);
  const last = events.at(-1)!.data;
  expect(last.type).toBe('agent_error');
  expect(last.error.type).toBe('step_failed');
  expect(last.error.message).toMatch(/step "step bad" \(bad\) of workflow "workflow w" failed/);
  const taskId = events[0].data.task_id;
  await withTemporal(ctx.stack(), async (c) => {
    await waitUntil(
      'the running step to be cancelled',
      async () => (await c.workflow.getHandle(`${taskId}:w:long`).describe()).status.name === 'CANCELLED',
    );
  });
  const failed = (await call('GET', `/tasks/${taskId}`)).json;
  expect(failed.status).toBe('failed');
  // The graph of the failed task: the step that failed, the one it stopped shown as cancelled.
  expect(failed.workflows[0].steps.map((x: { id: string; status: string }) => [x.id, x.status])).toEqual([
    ['bad', 'failed'],
    ['long', 'cancelled'],
  ]);
});

test('cancelling the task cancels every running step, not waiting for them', async () => {
  // Each step's model answers in 10 minutes: a cancel that waited for the steps would hold the test to its timeout.
  const slow = 'slow [[slow first=600000]]';
  const r = await call('POST', '/', {
    body: {
      message: 'long plan',
      background: true,
      workflows: [workflow('w', [step('x', [], { description: slow }), step('y', [], { description: slow })])],
    },
  });
  const taskId = r.json.task_id;
  await withTemporal(ctx.stack(), async (c) => {
    // Describe throws until the step's child workflow exists: one more try.
    await waitUntil(
      'step y running',
      async () => (await c.workflow.getHandle(`${taskId}:w:y`).describe()).status.name === 'RUNNING',
    );
    expect((await call('POST', `/tasks/${taskId}/cancel`)).status).toBe(202);
    await waitUntil(
      'the task to be cancelled',
      async () => (await call('GET', `/tasks/${taskId}`)).json.status === 'cancelled',
    );
    for (const s of ['x', 'y'])
      await waitUntil(
        `step ${s} to be cancelled`,
        async () => (await c.workflow.getHandle(`${taskId}:w:${s}`).describe()).status.name === 'CANCELLED',
      );
  });
});

test('kill -9 of the worker mid-DAG: no finished step runs again, and the task completes', async () => {
  const since = Date.now();
  const r = await call('POST', '/', {
    body: {
      message: 'survive',
      background: true,
      workflows: [
        workflow('w', [
          step('k1'),
          step('k2', ['k1']),
          step('k3', ['k2'], { description: 'slow one [[slow first=3000]]' }),
          step('k4', ['k3']),
        ]),
      ],
    },
  });
  const taskId = r.json.task_id;
  // Kill once k2 has finished and k3 is under way.
  await waitUntil("step k3's model request", () => requestsOf(since, 'step k3').length > 0);
  ctx.stack().children.worker.proc.kill('SIGKILL');
  await ctx.stack().startWorker();
  const done = await call('GET', `/tasks/${taskId}/result?wait=60`);
  expect(done.json.status).toBe('completed');
  expect(requestsOf(since, 'step k1')).toHaveLength(1);
  expect(requestsOf(since, 'step k2')).toHaveLength(1);
  expect(requestsOf(since, 'step k4')).toHaveLength(1);
});

test("an answer that does not fit the step's output_schema is retried; dependents get the parsed value", async () => {
  const key = `schema-${uid()}`;
  const schema = {
    type: 'object',
    required: ['city', 'days'],
    properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } },
  };
  const since = Date.now();
  const res = await postStream(ctx.stack(), {
    message: 'where to',
    workflows: [
      workflow('w', [
        step('pick', [], {
          description: `pick a city [[json times=1 key=${key}]]`,
          output_schema: schema,
          retry_policy: { max_attempts: 3, backoff: 'fixed', initial_interval: 0.2 },
        }),
        step('book', ['pick']),
      ]),
    ],
  });
  const events = await readSse(res, ends);
  expect(events.at(-1)!.data.type).toBe('agent_completed');
  const pick = requestsOf(since, 'step pick');
  expect(pick).toHaveLength(2);
  expect((pick[0].body as { response_format?: { type: string } }).response_format?.type).toBe('json_schema');
  const bookPrompt = (requestsOf(since, 'step book')[0].body.messages as { role: string; content: string }[]).find(
    (m) => m.role === 'user',
  )!.content;
  expect(bookPrompt).toMatch(/step pick \(pick\): \{"city":".*","days":\d+\}/);
});

test("final_output comes after the answer of a run with workflows, over the steps' results", async () => {
  const r = await call('POST', '/', {
    body: {
      message: 'sum it up',
      workflows: [workflow('w', [step('one'), step('two', ['one'])])],
      final_output: {
        name: 'summary',
        schema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
      },
    },
  });
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('completed');
  expect(r.json.final_output).toEqual({ name: 'summary', output: { text: expect.any(String) } });
  const types = r.json.events.map((e: { type: string }) => e.type);
  expect(types.slice(-3)).toEqual(['agent_final_output', 'agent_cost', 'agent_completed']);
  expect(types.filter((t: string) => t === 'agent_progress')).toHaveLength(2);
});

test("with streaming tokens, parallel steps' tokens interleave in one stream, each tagged", async () => {
  const res = await postStream(ctx.stack(), {
    message: 'two at once',
    streaming_tokens: true,
    workflows: [
      workflow('w', [
        step('p', [], { description: 'first [[slow delay=25 tokens=16]]' }),
        step('q', [], { description: 'second [[slow delay=25 tokens=16]]' }),
      ]),
    ],
  });
  const events = await readSse(res, ends);
  expect(events.at(-1)!.data.type).toBe('agent_completed');
  const tokens = events.filter((e) => e.data.type === 'agent_response' && e.data.step_id);
  expect(tokens.length).toBeGreaterThanOrEqual(32);
  for (const t of tokens) expect(t.data.workflow_id).toBe('w');
  const order = tokens.map((t) => t.data.step_id as string);
  // Each step's tokens came while the other's were still coming.
  expect(order.indexOf('q')).toBeLessThan(order.lastIndexOf('p'));
  expect(order.indexOf('p')).toBeLessThan(order.lastIndexOf('q'));
});
