// The OpenAPI 3.1 document of the gateway, generated from the zod schemas the
// routes validate with (schemas.ts) and the response schemas pinned to the
// code's types (response-schemas.ts), so the document cannot drift from the
// code. scripts/generate-openapi.ts writes it to openapi/openapi.json, a test
// fails when that file is stale, and openApiRoute() serves the same bytes.
import { Router } from 'express';
import { Json, jsonBody, operation, ref } from './operations';
import { API_VERSION_HEADER, LATEST_VERSION, VERSION_NAMES } from '../../common/api-versions';
import { callbackPaths } from './callbacks';
import { agentbasePaths } from './agentbase';
import { schedulePaths } from './schedules';
import { datastorePaths } from './datastores';
import { runPaths } from './run';
import { taskId, taskPaths } from './tasks';
import { sessionPaths } from './sessions';
import { sessionFilePaths } from './session-files';
import { components } from './components';

function paths(): Json {
  return {
    ...runPaths(),
    ...taskPaths(),
    ...callbackPaths(taskId),
    ...schedulePaths(),
    ...datastorePaths(),
    ...sessionPaths(),
    ...sessionFilePaths(),
    ...agentbasePaths(),
    ...probePaths(),
  };
}

/** Liveness, readiness and this document: public, no API key. */
function probePaths(): Json {
  return {
    '/healthz': {
      get: operation('get', {
        id: 'healthz',
        tag: 'probes',
        summary: 'Liveness',
        public: true,
        responses: { 200: { description: 'Up.', content: jsonBody('Health') } },
      }),
    },
    '/readyz': {
      get: operation('get', {
        id: 'readyz',
        tag: 'probes',
        summary: 'Readiness: Redis and Temporal answer',
        public: true,
        responses: {
          200: { description: 'Ready.', content: jsonBody('Readiness') },
          503: {
            description: 'Not ready; the body says which dependency is down.',
            headers: { 'Retry-After': ref('headers', 'RetryAfter') },
            content: jsonBody('Readiness'),
          },
        },
      }),
    },
    '/console': {
      get: operation('get', {
        id: 'getConsole',
        tag: 'meta',
        summary: 'The web console: an HTML page that signs in with an API key and calls this API',
        public: true,
        responses: {
          200: {
            description: 'The page (never cached; its scripts and styles under /console/assets/ are).',
            content: { 'text/html': { schema: { type: 'string' } } },
          },
        },
        errors: { 404: 'The console is turned off here (CONSOLE=off), or was not built.' },
      }),
    },
    '/openapi.json': {
      get: operation('get', {
        id: 'getOpenApi',
        tag: 'meta',
        summary: 'This OpenAPI document',
        public: true,
        responses: {
          200: { description: 'The document.', content: { 'application/json': { schema: { type: 'object' } } } },
        },
      }),
    },
  };
}

export function buildOpenApi(): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Execution Service',
      // The API's newest dated version (src/common/api-versions.ts), which this document describes.
      version: LATEST_VERSION,
      description: `Runs an AI agent on a message: synchronous (JSON or server-sent events) or in the background, in sessions that remember earlier messages. Every error answer has the body \`{error: {type, message, details}}\`. Versions are release dates, picked with the ${API_VERSION_HEADER} header (${VERSION_NAMES.join(', ')}); this document describes ${LATEST_VERSION}.`,
    },
    servers: [{ url: '/', description: 'The gateway serving this document.' }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'run', description: 'Running the agent.' },
      { name: 'tasks', description: 'Tasks: status, results, events, cancellation, metadata.' },
      { name: 'sessions', description: 'Conversations.' },
      {
        name: 'files',
        description: "A session's workspace: the files its agent's computer (bash, editor, search tools) works in.",
      },
      { name: 'callbacks', description: 'Signed callback deliveries of background tasks.' },
      {
        name: 'schedules',
        description:
          "Later and recurring runs (a run request's `schedules`): list, describe, pause, unpause, trigger, delete.",
      },
      {
        name: 'datastores',
        description:
          "Data sources the agent reads (a run request's `datastores` and `queries`): PostgreSQL, SQLite, documents knowledge bases.",
      },
      { name: 'probes', description: 'Liveness and readiness; no API key.' },
      { name: 'meta', description: 'This document.' },
    ],
    paths: paths(),
    components: components(),
  };
}

/** Objects' keys sorted at every level, so the file changes only when the content does. */
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Json)[k])]),
    );
  return v;
}

/** The exact text of openapi/openapi.json. */
export function renderOpenApi(doc: Json = buildOpenApi()): string {
  return `${JSON.stringify(sortKeys(doc), null, 2)}\n`;
}

/** GET /openapi.json: the same bytes as the committed file, built once. Mount before auth to keep it public. */
export function openApiRoute(): Router {
  let text: string | undefined;
  const r = Router();
  r.get('/openapi.json', (_req, res) => {
    text ??= renderOpenApi();
    res.type('application/json').send(text);
  });
  return r;
}
