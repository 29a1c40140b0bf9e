// The OpenAPI document: the committed file is what the code builds (so a
// forgotten regeneration fails CI), it is structurally sound OpenAPI 3.1, it
// documents exactly the routes Express serves, and its request schemas are the
// zod schemas the routes validate with.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express from 'express';
import Ajv2020 from 'ajv/dist/2020';
import { z } from 'zod';
import { createApp, GatewayDeps } from '../../src/gateway/app';
import { buildOpenApi, openApiRoute, renderOpenApi } from '../../src/gateway/openapi/document';
import { LATEST_VERSION, VERSION_NAMES } from '../../src/common/api-versions';
import { TASK_ID, SESSION_ID, IDEMPOTENCY_KEY, SCHEDULE_ID, LAST_EVENT_ID } from '../../src/gateway/schemas/request';
import { runRequestSchema } from '../../src/common/contracts/run-request';

type Json = Record<string, any>;

const ROOT = join(__dirname, '..', '..');
const FILE = join(ROOT, 'openapi', 'openapi.json');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const doc = buildOpenApi() as Json;

function resolve(pointer: string): unknown {
  if (!pointer.startsWith('#/')) throw new Error(`not a local ref: ${pointer}`);
  return pointer
    .slice(2)
    .split('/')
    .map((p) => decodeURIComponent(p).replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((at, key) => (at && typeof at === 'object' && key in at ? (at as Json)[key] : undefined), doc);
}

/** Follows a Reference Object to what it names (one hop is all this document uses). */
const deref = (v: Json): Json => (v && typeof v.$ref === 'string' ? (resolve(v.$ref) as Json) : v);

function operations(): { path: string; method: string; op: Json }[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ path, method, op: op as Json })),
  );
}

/** Every route Express would dispatch: the app's own handlers and those of the routers it mounts (`:id` and a wildcard `*path` as `{id}`, `{path}`). */
function expressRoutes(stack: any[]): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      return Object.keys(layer.route.methods)
        .filter((m) => m !== '_all')
        .map((m) => `${m.toUpperCase()} ${String(layer.route.path).replace(/[:*](\w+)/g, '{$1}')}`);
    }
    return Array.isArray(layer.handle?.stack) ? expressRoutes(layer.handle.stack) : [];
  });
}

describe('openapi/openapi.json', () => {
  it('is exactly what buildOpenApi() renders (run: npx tsx scripts/generate-openapi.ts)', () => {
    expect(readFileSync(FILE, 'utf8')).toBe(renderOpenApi());
    expect(JSON.parse(readFileSync(FILE, 'utf8'))).toEqual(JSON.parse(JSON.stringify(doc)));
  });

  it('renders the same text every time (stable key order)', () => {
    expect(renderOpenApi(buildOpenApi())).toBe(renderOpenApi(buildOpenApi()));
  });
});

describe('the document is structurally valid OpenAPI 3.1', () => {
  it('has the 3.1 header fields', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof doc.info.title).toBe('string');
    expect(typeof doc.info.version).toBe('string');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it('gives every operation an id, responses with valid status codes, and descriptions', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, method, op } of operations()) {
      const statuses = Object.keys(op.responses ?? {});
      expect([path, method, statuses.length > 0]).toEqual([path, method, true]);
      for (const s of statuses) {
        expect(s).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/);
        expect(typeof deref(op.responses[s]).description).toBe('string');
      }
    }
  });

  it('resolves every $ref', () => {
    const broken: string[] = [];
    const walk = (v: unknown, at: string) => {
      if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${at}/${i}`));
      if (!v || typeof v !== 'object') return;
      for (const [k, x] of Object.entries(v)) {
        if (k === '$ref' && (typeof x !== 'string' || resolve(x) === undefined)) broken.push(`${at}: ${String(x)}`);
        walk(x, `${at}/${k}`);
      }
    };
    walk(doc, '#');
    expect(broken).toEqual([]);
    // A schema that brings its own $defs would resolve #/$defs against the document root.
    expect(JSON.stringify(doc)).not.toContain('#/$defs/');
  });

  it('declares each path template parameter as a required path parameter, and no others', () => {
    for (const { path, op } of operations()) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      const declared = (op.parameters ?? []).map(deref).filter((p: Json) => p.in === 'path');
      expect([path, declared.map((p: Json) => p.name).sort()]).toEqual([path, inPath]);
      for (const p of declared) expect(p.required).toBe(true);
    }
  });
});

describe('the document covers the service', () => {
  it('documents exactly the routes Express serves', () => {
    // createApp only wires closures at construction, so stand-in deps are enough.
    const app = createApp({ config: { BODY_LIMIT_BYTES: 1024 } } as unknown as GatewayDeps);
    const served = new Set([
      ...expressRoutes((app as any).router.stack),
      ...expressRoutes((openApiRoute() as any).stack),
    ]);
    const documented = new Set(operations().map(({ path, method }) => `${method.toUpperCase()} ${path}`));
    expect([...documented].sort()).toEqual([...served].sort());
    expect(served.has('POST /')).toBe(true);
    expect(served.has('GET /tasks/{id}/events')).toBe(true);
  });

  it('answers with the shared error body on every error status of an authenticated route', () => {
    for (const { path, method, op } of operations()) {
      if (op.security?.length === 0) continue;
      for (const status of ['400', '401', '500', '503'])
        expect([path, method, status in op.responses]).toEqual([path, method, true]);
      for (const [status, r] of Object.entries(op.responses as Json)) {
        if (Number(status) < 400) continue;
        expect(deref(r as Json).content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
      }
      if (method === 'post' || method === 'patch')
        for (const s of ['400', '413', '415']) expect(s in op.responses).toBe(true);
    }
    expect(deref(doc.paths['/tasks/{id}'].get.responses['503']).headers['Retry-After']).toBeDefined();
    expect(deref(doc.paths['/'].post.responses['401']).headers['WWW-Authenticate']).toBeDefined();
  });

  it('documents every status of POST / and its three ways to answer', () => {
    const run = doc.paths['/'].post;
    expect(Object.keys(run.responses).sort()).toEqual([
      '200',
      '202',
      '400',
      '401',
      '404',
      '409',
      '413',
      '415',
      '422',
      '431',
      '500',
      '503',
    ]);
    expect(Object.keys(run.responses['200'].content).sort()).toEqual(['application/json', 'text/event-stream']);
    expect(run.responses['202'].headers.Location).toBeDefined();
    const params = run.parameters.map(deref).map((p: Json) => `${p.in}:${p.name}`);
    expect(params).toEqual(expect.arrayContaining(['query:session', 'header:Idempotency-Key']));
    expect(doc.paths['/tasks/{id}/result'].get.parameters.map(deref).map((p: Json) => p.name)).toContain('wait');
    expect(doc.paths['/tasks/{id}/events'].get.parameters.map(deref).map((p: Json) => p.name)).toEqual(
      expect.arrayContaining(['Last-Event-ID', 'after']),
    );
    expect(deref(doc.paths['/readyz'].get.responses['503']).headers['Retry-After']).toBeDefined();
  });

  it('describes every SSE event type with type, session, task_id and seq', () => {
    const variants = doc.components.schemas.AgentEvent.oneOf as Json[];
    const types = variants.map((v) => v.properties.type.const);
    expect(types).toEqual(
      expect.arrayContaining([
        'agent_started',
        'agent_response',
        'agent_step',
        'agent_progress',
        'agent_cost',
        'agent_completed',
        'agent_error',
      ]),
    );
    expect(new Set(types).size).toBe(variants.length);
    for (const v of variants) expect(v.required).toEqual(expect.arrayContaining(['type', 'session', 'task_id', 'seq']));
    expect(doc.paths['/tasks/{id}/events'].get.responses['200'].content['text/event-stream']['x-sse-data']).toEqual({
      $ref: '#/components/schemas/AgentEvent',
    });
  });
});

describe('request schemas come from the zod validation schemas', () => {
  const runSchema = () => doc.components.schemas.RunRequest as Json;

  it('the run request rejects unknown properties and requires message', () => {
    expect(runSchema().additionalProperties).toBe(false);
    expect(runSchema().required).toContain('message');
    expect(runSchema().properties.mcp_servers.items.additionalProperties).toBe(false);
    expect(doc.components.schemas.PatchTaskRequest).toMatchObject({
      additionalProperties: false,
      required: ['metadata'],
    });
  });

  it('is the zod schema converted, not a hand-written copy', () => {
    const { $schema: _dialect, ...fromZod } = z.toJSONSchema(runRequestSchema, {
      target: 'draft-2020-12',
      io: 'input',
    }) as Json;
    expect(runSchema()).toEqual(fromZod);
  });

  it('states the rules a body must keep, so the document and the service agree on every body (each fits both or neither)', () => {
    // Formats are left to the service (Ajv would need ajv-formats); none of these bodies turns on one.
    const fits = new Ajv2020({ strict: false, validateFormats: false }).compile(runSchema());
    const url = 'https://hooks.example.com/x';
    const bodies: [string, Json, boolean][] = [
      ['a message', { message: 'x' }, true],
      ['a blank message (trimmed away)', { message: ' \t\u3000\ufeff' }, false],
      ['a message of one character trim keeps (U+0085)', { message: '\u0085' }, true],
      ['mcp_servers and mcpServers', { message: 'x', mcp_servers: [], mcpServers: [] }, false],
      ['mcpServers alone', { message: 'x', mcpServers: [] }, true],
      ['a callback without background', { message: 'x', callback: { url } }, false],
      ['a callback with background: false', { message: 'x', background: false, webhook: { url } }, false],
      ['a callback with background: true', { message: 'x', background: true, callback: { url } }, true],
      ['callback and webhook', { message: 'x', background: true, callback: { url }, webhook: { url } }, false],
      [
        'a header the delivery sets (any case)',
        { message: 'x', background: true, callback: { url, headers: { 'WEBHOOK-Signature': 'v1,x' } } },
        false,
      ],
      [
        'a hop-by-hop header',
        { message: 'x', background: true, callback: { url, headers: { te: 'trailers' } } },
        false,
      ],
      [
        'a header of its own',
        {
          message: 'x',
          background: true,
          callback: { url, headers: { 'X-Webhook-Token': 't', 'Content-Language': 'en' } },
        },
        true,
      ],
      [
        'a final output whose schema is no object',
        { message: 'x', final_output: { name: 'o', schema: { type: 'string' } } },
        false,
      ],
      [
        'a final output of an object',
        { message: 'x', final_output: { name: 'o', schema: { type: 'object', properties: {} } } },
        true,
      ],
      [
        'a 65-character serverName, trimmed to 63',
        { message: 'x', mcp_servers: [{ serverName: ` ${'s'.repeat(63)} `, serverUrl: url }] },
        false,
      ],
    ];
    for (const [what, body, accepted] of bodies) {
      expect([what, fits(body), runRequestSchema.safeParse(body).success]).toEqual([what, accepted, accepted]);
    }
  });

  it('describes each event of a stream as an SSE reader parses it, its data JSON of the event schema', () => {
    const stream = doc.paths['/tasks/{id}/events'].get.responses['200'].content['text/event-stream'].schema;
    const frames = stream.oneOf.map((f: Json) => [
      f.properties.event.const,
      f.properties.data.contentMediaType,
      f.properties.data.contentSchema.$ref,
      f.required,
    ]);
    expect(frames).toEqual([
      ['message', 'application/json', '#/components/schemas/AgentEvent', ['data', 'id']],
      ['error', 'application/json', '#/components/schemas/StreamError', ['data', 'event']],
    ]);
    const accepted = doc.paths['/'].post.responses['202'].content['text/event-stream'].schema;
    expect(accepted.properties.data.contentSchema).toEqual({ $ref: '#/components/schemas/TaskAcceptedEvent' });
  });

  it('states the id and header patterns the routes check', () => {
    const p = doc.components.parameters;
    expect(p.TaskId.schema.pattern).toBe(TASK_ID.source);
    expect(p.SessionId.schema.pattern).toBe(SESSION_ID.source);
    expect(p.IdempotencyKey.schema.pattern).toBe(IDEMPOTENCY_KEY.source);
    expect(p.ScheduleId.schema.pattern).toBe(SCHEDULE_ID.source);
    expect(p.LastEventId.schema.pattern).toBe(LAST_EVENT_ID.source);
  });
});

describe('schedules (SPEC 2.5)', () => {
  it('documents each schedules route under its tag, and GET /tasks?schedule=', () => {
    const ops = operations().filter(({ op }) => op.tags.includes('schedules'));
    expect(ops.map(({ path, method }) => `${method.toUpperCase()} ${path}`).sort()).toEqual([
      'DELETE /schedules/{id}',
      'GET /schedules',
      'GET /schedules/{id}',
      'POST /schedules/{id}/pause',
      'POST /schedules/{id}/trigger',
      'POST /schedules/{id}/unpause',
    ]);
    for (const { path, op } of ops)
      if (path !== '/schedules') expect(['400', '404'].every((s) => s in op.responses)).toBe(true);
    expect(
      doc.paths['/schedules'].get.parameters
        .map(deref)
        .map((p: Json) => p.name)
        .sort(),
    ).toEqual(['API-Version', 'cursor', 'limit']);
    expect(doc.paths['/schedules/{id}/pause'].post.requestBody).toMatchObject({ required: false });
    expect(doc.paths['/schedules/{id}/trigger'].post.responses['202'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ScheduleTriggered',
    });
    const listTasks = doc.paths['/tasks'].get.parameters.map(deref);
    expect(listTasks.find((p: Json) => p.name === 'schedule')).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'string' },
    });
  });

  it("lists the schedules in the run's JSON and background answers, and describes a schedule's fields", () => {
    const run = doc.paths['/'].post.responses;
    expect(run['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/RunResult' });
    const s = doc.components.schemas;
    for (const variant of s.RunResult.anyOf as Json[]) {
      expect(variant.properties.schedules.items.required).toEqual(['schedule_id', 'next_run_at']);
      expect(variant.required).not.toContain('schedules');
    }
    expect(s.TaskAccepted.properties.schedules.items.required).toEqual(['schedule_id', 'next_run_at']);
    expect(s.TaskResult.anyOf.every((v: Json) => !('schedules' in v.properties))).toBe(true);
    const fields = [
      'schedule_id',
      'session',
      'schedule',
      'timezone',
      'overlap',
      'message_preview',
      'paused',
      'state',
      'note',
      'created_at',
      'next_run_at',
    ];
    expect(Object.keys(s.Schedule.properties).sort()).toEqual([...fields].sort());
    expect(Object.keys(s.ScheduleDetail.properties).sort()).toEqual(
      [...fields, 'next_runs', 'runs', 'recent_tasks', 'running_tasks'].sort(),
    );
    expect(s.Schedule.properties.overlap.enum).toEqual(['skip', 'buffer_one', 'allow_all']);
    expect(s.ScheduleList.properties.schedules.items).toEqual(s.Schedule);
    expect(s.PauseScheduleRequest).toMatchObject({
      additionalProperties: false,
      properties: { note: { type: 'string' } },
    });
    const scheduled = (s.AgentEvent.oneOf as Json[]).find((v) => v.properties.type.const === 'agent_scheduled');
    expect(scheduled?.required).toEqual(expect.arrayContaining(['schedules']));
  });
});

describe('versions (src/common/api-versions.ts)', () => {
  it("names the newest version as the document's own, and lets every operation of the API pick one and say which answered", () => {
    expect(doc.info.version).toBe(LATEST_VERSION);
    expect(deref(doc.components.parameters.ApiVersion)).toMatchObject({
      in: 'header',
      name: 'API-Version',
      required: false,
      schema: { enum: VERSION_NAMES },
    });
    for (const { path, method, op } of operations()) {
      const versioned = op.security?.length !== 0; // the probes and the document are not
      const params = (op.parameters ?? []).map(deref).map((p: Json) => p.name);
      expect([method, path, params.includes('API-Version')]).toEqual([method, path, versioned]);
      for (const [status, r] of Object.entries(op.responses as Json)) {
        if (!versioned || status === '431') continue; // the HTTP server answers a 431 before the API sees the request
        expect([method, path, status, Object.keys(deref(r as Json).headers ?? {})]).toEqual([
          method,
          path,
          status,
          expect.arrayContaining(['API-Version', 'Deprecation', 'Sunset']),
        ]);
      }
    }
  });
});

describe('GET /openapi.json', () => {
  it('serves the committed document without an API key', async () => {
    const app = express().use(openApiRoute());
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.text()).toBe(readFileSync(FILE, 'utf8'));
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
