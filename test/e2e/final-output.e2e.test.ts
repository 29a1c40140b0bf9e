// final_output (SPEC 2.6) over HTTP on the real processes: after the last
// answer one more model call, held to the schema by response_format, gives a
// structured output that is validated (strict and not), shown as one
// agent_final_output event before agent_cost and carried by the JSON answer
// and the result; an answer that does not fit is repaired with its errors, up
// to twice, then the run fails as final_output_invalid; each bad schema is a 400.
import { postStream, readSse, useStack } from './helpers';

jest.setTimeout(90_000);
const ctx = useStack();
const call: typeof ctx.call = (...args) => ctx.call(...args);

const review = {
  name: 'review',
  schema: {
    type: 'object',
    properties: {
      summary: { type: 'string', minLength: 1 },
      score: { type: 'integer', minimum: 1, maximum: 5 },
      tags: { type: 'array', items: { type: 'string', enum: ['good', 'bad'] }, minItems: 1, maxItems: 3 },
    },
    required: ['summary', 'score'],
  },
};

const strictReport = {
  name: 'report',
  strict: true,
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['title', 'items'],
    properties: {
      title: { type: 'string' },
      items: {
        type: 'array',
        minItems: 2,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'done'],
          properties: { name: { type: 'string' }, done: { type: 'boolean' } },
        },
      },
    },
  },
};

/** The structured-output requests the scripted model received, in order (their response_format). */
function structuredCalls(since: number) {
  return ctx
    .stack()
    .model!.received()
    .slice(since)
    .filter((r) => (r.body as { response_format?: { type?: string } }).response_format?.type === 'json_schema')
    .map(
      (r) =>
        r.body as {
          response_format: { json_schema: { name: string; strict: boolean } };
          messages: { role: string; content: string }[];
        },
    );
}

test('a JSON answer carries the validated output; the events put agent_final_output before agent_cost', async () => {
  const before = ctx.stack().model!.received().length;
  const r = await call('POST', '/', { body: { message: 'review this change', final_output: review } });
  expect(r.status).toBe(200);
  expect(r.json.status).toBe('completed');
  const out = r.json.final_output;
  expect(out.name).toBe('review');
  expect(typeof out.output.summary).toBe('string');
  expect(out.output.score).toBeGreaterThanOrEqual(1);
  expect(out.output.score).toBeLessThanOrEqual(5);
  expect(r.json.output).toBe('You said: review this change');
  expect(r.json.events.map((e: { type: string }) => e.type).slice(-3)).toEqual([
    'agent_final_output',
    'agent_cost',
    'agent_completed',
  ]);
  expect(r.json.events.at(-3)).toEqual({ type: 'agent_final_output', ...out });
  const [asked] = structuredCalls(before);
  expect(asked.response_format.json_schema).toMatchObject({ name: 'review', strict: false });
  // Over the whole thread, with the instruction last.
  expect(asked.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'system']);
  const result = await call('GET', `/tasks/${r.json.task_id}/result`);
  expect(result.json.final_output).toEqual(out);
});

test('strict: the stream shows the output once, before agent_cost; a background task keeps it in its result', async () => {
  const res = await postStream(ctx.stack(), { message: 'make the checklist', final_output: strictReport });
  const events = await readSse(res, (e) => e.data.type === 'agent_completed');
  const types = events.map((e) => e.data.type);
  expect(types.filter((t) => t === 'agent_final_output')).toHaveLength(1);
  expect(types.indexOf('agent_final_output')).toBe(types.indexOf('agent_cost') - 1);
  const { output } = events.find((e) => e.data.type === 'agent_final_output')!.data;
  expect(Object.keys(output).sort()).toEqual(['items', 'title']);
  expect(output.items.length).toBeGreaterThanOrEqual(2);
  for (const item of output.items) expect(item).toEqual({ name: expect.any(String), done: expect.any(Boolean) });

  const bg = await call('POST', '/', {
    body: { message: 'make it in the background', background: true, final_output: strictReport },
  });
  const done = await call('GET', `/tasks/${bg.json.task_id}/result?wait=30`);
  expect(done.json.status).toBe('completed');
  expect(done.json.final_output.name).toBe('report');
  expect(done.json.final_output.output.items.length).toBeGreaterThanOrEqual(2);
});

test('an answer that does not fit is repaired with its errors; three that do not fit fail the run as final_output_invalid', async () => {
  let before = ctx.stack().model!.received().length;
  const fixed = await call('POST', '/', {
    body: { message: '[[json invalid=1]] review, with one bad try', final_output: review },
  });
  expect(fixed.json.status).toBe('completed');
  expect(fixed.json.final_output.output.score).toBeGreaterThanOrEqual(1);
  const calls = structuredCalls(before);
  expect(calls).toHaveLength(2);
  const repair = calls[1].messages.at(-1)!;
  expect(repair.role).toBe('system');
  expect(repair.content).toMatch(/does not fit the schema/);
  expect(repair.content).toMatch(/summary/);

  before = ctx.stack().model!.received().length;
  const failed = await call('POST', '/', { body: { message: '[[json invalid=3]] never fits', final_output: review } });
  expect(failed.json.status).toBe('failed');
  expect(failed.json.error.type).toBe('final_output_invalid');
  expect(failed.json.error.message).toMatch(/did not fit its schema after 3 answers: .*required property/);
  expect(failed.json.final_output).toBeUndefined();
  expect(structuredCalls(before)).toHaveLength(3);
  expect(failed.json.events.map((e: { type: string }) => e.type).slice(-2)).toEqual(['agent_cost', 'agent_error']);
  const view = await call('GET', `/tasks/${failed.json.task_id}`);
  expect(view.json).toMatchObject({ status: 'failed', error: { type: 'final_output_invalid' } });
});

test('a schema that cannot be used is refused naming its path: its shape (a root object, the name) a 400, what it says as a JSON Schema a 422', async () => {
  const refused = async (final_output: unknown, status: number) => {
    const r = await call('POST', '/', { body: { message: 'never runs', final_output } });
    expect([JSON.stringify(final_output), r.status]).toEqual([JSON.stringify(final_output), status]);
    return r.json.error.details.map((d: { path: string; code: string }) => [d.path, d.code]);
  };
  expect(await refused({ name: 'x', schema: { type: 'nonsense' } }, 400)).toEqual([
    ['body.final_output.schema.type', 'invalid_value'],
  ]);
  expect(await refused({ name: 'x', schema: { type: 'array', items: { type: 'string' } } }, 400)).toEqual([
    ['body.final_output.schema.type', 'invalid_value'],
  ]);
  expect(await refused({ name: 'x', schema: { type: 'object', properties: 5 } }, 422)).toEqual([
    ['body.final_output.schema.properties', 'invalid_schema'],
  ]);
  expect(
    await refused(
      {
        name: 'x',
        strict: true,
        schema: {
          type: 'object',
          properties: {
            a: { type: 'string' },
            b: { type: 'object', properties: { c: { type: 'number' } }, required: ['c'] },
          },
          required: ['a'],
        },
      },
      422,
    ),
  ).toEqual([
    ['body.final_output.schema', 'not_strict'],
    ['body.final_output.schema', 'not_strict'],
    ['body.final_output.schema.properties.b', 'not_strict'],
  ]);
  expect((await refused({ name: 'has spaces', schema: { type: 'object' } }, 400))[0][0]).toBe('body.final_output.name');
});
