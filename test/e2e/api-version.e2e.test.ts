// The answers of API version 2026-11-28 keep their shape: the service's real
// answers, asked in that version (API-Version), are checked against the
// schemas pinned when it was released (openapi/versions/2026-11-28.json,
// written once by scripts/pin-api-version.ts), with room only for what the
// versioning policy calls additive (a field an old client does not know). A
// change that alters them fails here, and is a new version. Every answer says
// the version it is in.
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { KEY_A, postStream, readSse, useStack } from './helpers';

jest.setTimeout(120_000);
const VERSION = '2026-11-28';
const ctx = useStack();
const headers = { 'api-version': VERSION };

/** The pinned document with its objects opened to fields added since (the policy lets answers gain fields). */
function pinnedSchemas(): { check(where: string, value: unknown): void } {
  const doc = JSON.parse(
    fs.readFileSync(path.join(__dirname, '..', '..', 'openapi', 'versions', `${VERSION}.json`), 'utf8'),
  );
  const open = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(open);
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k, x]) => !(k === 'additionalProperties' && x === false))
        .map(([k, x]) => [k, open(x)]),
    );
  };
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  const base = 'https://versions.invalid/pinned.json';
  ajv.addSchema({ ...(open(doc) as object), $id: base });
  // A JSON Pointer token (RFC 6901) in a URI fragment.
  const token = (key: string) => encodeURIComponent(key.replace(/~/g, '~0').replace(/\//g, '~1'));
  return {
    /** `where`: the answer as the pinned document names it: path|method|status|content type. */
    check(where, value) {
      const [p, method, status, type] = where.split('|');
      // An error answer is a reference to one of the shared responses.
      const answer = doc.paths[p]?.[method]?.responses?.[status];
      const at = answer?.$ref ?? `#/paths/${token(p)}/${method}/responses/${status}`;
      const validate = answer && ajv.getSchema(`${base}${at}/content/${token(type)}/schema`);
      if (!validate) throw new Error(`the pinned document has no ${where}`);
      expect([where, validate(value) ? 'fits' : ajv.errorsText(validate.errors, { separator: '\n' })]).toEqual([
        where,
        'fits',
      ]);
    },
  };
}

let pinned: ReturnType<typeof pinnedSchemas>;
beforeAll(() => {
  pinned = pinnedSchemas();
});

/** A call of the version under test, with the version the answer says it is in. */
async function call(method: string, p: string, body?: unknown) {
  const r = await ctx.call(method, p, { body, headers });
  expect([method, p, r.headers.get('api-version')]).toEqual([method, p, VERSION]);
  return r;
}

test('a run in JSON, in the background (JSON and one SSE event), its task, result, events and listing keep their shapes', async () => {
  const sync = await call('POST', '/', {
    message: '[[tool name=calculate args={"expression":"2+3"}]] add them',
    final_output: { name: 'sum', schema: { type: 'object', properties: { total: { type: 'number' } } } },
  });
  expect(sync.status).toBe(200);
  pinned.check('/|post|200|application/json', sync.json);

  const bg = await call('POST', '/', { message: 'later', background: true, metadata: { who: 'versions' } });
  expect(bg.status).toBe(202);
  pinned.check('/|post|202|application/json', bg.json);
  const streamed = await fetch(`${ctx.stack().gatewayUrl}/`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${KEY_A}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...headers,
    },
    body: JSON.stringify({ message: 'later, as a stream', background: true }),
  });
  const [accepted] = await readSse(streamed);
  pinned.check('/|post|202|text/event-stream', { event: 'message', data: JSON.stringify(accepted.data) });
  pinned.check(
    '/|post|202|application/json',
    Object.fromEntries(Object.entries(accepted.data).filter(([k]) => k !== 'type')),
  );

  const id = bg.json.task_id;
  const result = await call('GET', `/tasks/${id}/result?wait=30`);
  pinned.check('/tasks/{id}/result|get|200|application/json', result.json);
  pinned.check('/tasks/{id}|get|200|application/json', (await call('GET', `/tasks/${id}`)).json);
  pinned.check('/tasks|get|200|application/json', (await call('GET', `/tasks?session=${bg.json.session}`)).json);
  pinned.check('/tasks/{id}/cancel|post|409|application/json', (await call('POST', `/tasks/${id}/cancel`)).json);

  const events = await readSse(
    await fetch(`${ctx.stack().gatewayUrl}/tasks/${sync.json.task_id}/events`, {
      headers: { authorization: `Bearer ${KEY_A}`, ...headers },
    }),
  );
  expect(events.map((e) => e.data.type)).toContain('agent_final_output');
  for (const e of events)
    pinned.check('/tasks/{id}/events|get|200|text/event-stream', {
      event: e.event ?? 'message',
      id: e.id,
      data: JSON.stringify(e.data),
    });
  const live = await readSse(
    await postStream(ctx.stack(), { message: '[[think]] streamed', mode: 'flash', streaming_tokens: true }),
  );
  expect(live.map((e) => e.data.type)).toContain('agent_thinking');
  for (const e of live)
    pinned.check('/|post|200|text/event-stream', {
      event: e.event ?? 'message',
      id: e.id,
      data: JSON.stringify(e.data),
    });
});

test('sessions, their messages and the errors keep their shapes', async () => {
  const created = await call('POST', '/sessions', {});
  expect(created.status).toBe(201);
  pinned.check('/sessions|post|201|application/json', created.json);
  await call('POST', `/?session=${created.json.session}`, { message: 'remember me' });
  pinned.check(
    '/sessions/{id}/messages|get|200|application/json',
    (await call('GET', `/sessions/${created.json.session}/messages`)).json,
  );
  pinned.check('/sessions|get|200|application/json', (await call('GET', '/sessions?limit=5')).json);

  const invalid = await call('POST', '/', { message: 'x', colour: 'red' });
  expect(invalid.status).toBe(400);
  pinned.check('/|post|400|application/json', invalid.json);
  const unprocessable = await call('POST', '/', { message: 'x', max_steps: 100_000 });
  expect(unprocessable.status).toBe(422);
  pinned.check('/|post|422|application/json', unprocessable.json);
  const missing = await call('GET', '/tasks/task_doesnotexist');
  pinned.check('/tasks/{id}|get|404|application/json', missing.json);
});
