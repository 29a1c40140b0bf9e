// A released API version keeps its shapes: each version of src/common/api-versions.ts
// is pinned (openapi/versions/<version>.json, written once by
// scripts/pin-api-version.ts when it was released), and today's document is
// compared with it: nothing a client of that version relies on may have
// changed (test/gateway/api-compat.ts says what that is). A change that would
// is a new version. The comparison itself is tested on changes it must refuse
// and changes it must let through.
import fs from 'node:fs';
import path from 'node:path';
import { API_VERSIONS, answerIn, documentIn, type ApiVersionName } from '../../src/common/api-versions';
import { buildOpenApi } from '../../src/gateway/openapi/document';
import { compatibilityProblems } from './api-compat';

type Json = Record<string, any>;
const pinned = (version: string): Json =>
  JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'openapi', 'versions', `${version}.json`), 'utf8'));
const now = () => JSON.parse(JSON.stringify(buildOpenApi())) as Json;

test.each(API_VERSIONS.map((v) => v.name))(
  "version %s is pinned, and today's document breaks nothing a client of it relies on",
  (version) => {
    const old = pinned(version);
    expect(old.info.version).toBe(version);
    expect(compatibilityProblems(old, documentIn(version as ApiVersionName, now()))).toEqual([]);
  },
);

test('an earlier version reads a status newer than it as the one it stands for; the newest reads it as it is', () => {
  const doc = now();
  const statuses = (d: Json) => d.components.schemas.Task.properties.status.enum;
  expect(statuses(doc)).toContain('input_required');
  expect(statuses(documentIn('2026-11-28', doc))).not.toContain('input_required');
  expect(statuses(documentIn('2026-11-29', doc))).toContain('input_required');
  const body = { tasks: [{ status: 'input_required', metadata: { status: 'input_required' } }], status: 'running' };
  expect(answerIn('2026-11-28', body)).toEqual({
    tasks: [{ status: 'running', metadata: { status: 'input_required' } }],
    status: 'running',
  });
  expect(answerIn('2026-11-29', body)).toBe(body);
});

describe('the comparison', () => {
  const old = pinned(API_VERSIONS[0].name);
  const changed = (edit: (doc: Json) => void) => {
    const doc = documentIn(API_VERSIONS[0].name, now());
    edit(doc);
    return compatibilityProblems(old, doc);
  };
  const s = (doc: Json) => doc.components.schemas;
  const event = (doc: Json, type: string) =>
    s(doc).AgentEvent.oneOf.find((v: Json) => v.properties.type.const === type);

  test.each<[string, (doc: Json) => void, RegExp]>([
    [
      'an answer field removed',
      (d) => delete s(d).Task.properties.progress,
      /GET \/tasks\/\{id\} 200 application\/json\.progress: removed/,
    ],
    [
      'an answer field no longer always there',
      (d) => (s(d).TaskAccepted.required = s(d).TaskAccepted.required.filter((p: string) => p !== 'created_at')),
      /created_at: no longer always there/,
    ],
    [
      'an answer field retyped',
      (d) => (s(d).SessionCreated.properties.created_at = { type: 'number' }),
      /created_at: type string became number/,
    ],
    ['a new status value', (d) => s(d).Task.properties.status.enum.push('paused'), /status: values .* became/],
    [
      'an event type gone',
      (d) =>
        (s(d).AgentEvent.oneOf = s(d).AgentEvent.oneOf.filter((v: Json) => v.properties.type.const !== 'agent_step')),
      /GET \/tasks\/\{id\}\/events 200 text\/event-stream.*: variant agent_step is gone or changed/,
    ],
    [
      'an event field renamed',
      (d) => (
        (event(d, 'agent_response').properties.text = event(d, 'agent_response').properties.content),
        delete event(d, 'agent_response').properties.content
      ),
      /\(agent_response\)\.content: removed/,
    ],
    [
      'a request field newly required',
      (d) => s(d).RunRequest.required.push('mode'),
      /RunRequest|body application\/json\.mode: newly required/,
    ],
    ['a request field no longer taken', (d) => delete s(d).RunRequest.properties.rules, /\.rules: no longer accepted/],
    [
      'a request bound narrowed',
      (d) => (s(d).RunRequest.properties.max_duration.maximum = 3600),
      /max_duration: maximum 31536000 became 3600/,
    ],
    [
      'a query parameter newly required',
      (d) => (d.paths['/tasks'].get.parameters.find((p: Json) => p.name === 'status').required = true),
      /GET \/tasks query:status: newly required/,
    ],
    ['an operation removed', (d) => delete d.paths['/tasks/{id}/cancel'], /POST \/tasks\/\{id\}\/cancel: removed/],
    [
      'a success status changed',
      (d) => (
        (d.paths['/sessions'].post.responses['200'] = d.paths['/sessions'].post.responses['201']),
        delete d.paths['/sessions'].post.responses['201']
      ),
      /POST \/sessions 201: no longer answered/,
    ],
  ])('refuses %s', (_what, edit, says) => {
    const problems = changed(edit);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join('\n')).toMatch(says);
  });

  test.each<[string, (doc: Json) => void]>([
    ['a new optional request field', (d) => (s(d).RunRequest.properties.temperature = { type: 'number' })],
    [
      'a new answer field',
      (d) => ((s(d).Task.properties.priority = { type: 'integer' }), s(d).Task.required.push('priority')),
    ],
    [
      'a new kind of event',
      (d) =>
        s(d).AgentEvent.oneOf.push({
          type: 'object',
          properties: { type: { const: 'agent_note' } },
          required: ['type'],
        }),
    ],
    ['a new operation', (d) => (d.paths['/notes'] = { get: { responses: { 200: { description: 'notes' } } } })],
    ['a bound loosened', (d) => (s(d).RunRequest.properties.max_duration.maximum = 63_072_000)],
    ['a description rewritten', (d) => (s(d).Task.description = 'another text')],
  ])('lets %s through', (_what, edit) => {
    expect(changed(edit)).toEqual([]);
  });
});
