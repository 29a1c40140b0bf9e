// The OpenAPI 3.1 document of the gateway, generated from the zod schemas the
// routes validate with (schemas.ts) and the response schemas pinned to the
// code's types (response-schemas.ts), so the document cannot drift from the
// code. scripts/generate-openapi.ts writes it to openapi/openapi.json, a test
// fails when that file is stale, and openApiRoute() serves the same bytes.
import { Router } from 'express';
import {
  ERRORS,
  Json,
  VERSION_HEADERS,
  errorResponse,
  jsonBody,
  operation,
  queryParams,
  ref,
  toSchema,
} from './openapi-operations';
import { sseBody, sseFrame } from './openapi-sse';
import { API_VERSION_HEADER, LATEST_VERSION, VERSION_NAMES } from '../api-versions';
import { callbackPaths } from './openapi-callbacks';
import { agentbasePaths, agentbaseSchemas } from './openapi-agentbase';
import { scheduleParameters, schedulePaths, scheduleSchemas } from './openapi-schedules';
import { datastoreParameters, datastorePaths, datastoreSchemas } from './openapi-datastores';
import {
  createSessionSchema,
  eventsQuerySchema,
  listQuerySchema,
  sessionListQuerySchema,
  patchTaskSchema,
  taskMessageSchema,
  resultQuerySchema,
  runQuerySchema,
  runRequestSchema,
  TASK_ID,
  IDEMPOTENCY_KEY,
  LAST_EVENT_ID,
} from './schemas';
import {
  agentEventSchema,
  cancelAcceptedSchema,
  errorBodySchema,
  healthSchema,
  readinessSchema,
  sessionCreatedSchema,
  webhookSecretSchema,
  deliveryListSchema,
  sessionListSchema,
  sessionMessagesSchema,
  streamErrorSchema,
  taskAcceptedSchema,
  taskAcceptedEventSchema,
  taskMessageAcceptedSchema,
  taskListSchema,
  taskResultSchema,
  taskViewSchema,
} from './response-schemas';

const TASK_ID_PATTERN = TASK_ID.source;

const taskHeaders = {
  'X-Task-Id': ref('headers', 'XTaskId'),
  'X-Session-Id': ref('headers', 'XSessionId'),
  'Server-Timing': ref('headers', 'ServerTiming'),
};
const taskId = ref('parameters', 'TaskId');
const sessionId = ref('parameters', 'SessionId');

function paths(): Json {
  return {
    '/': {
      post: operation('post', {
        id: 'runAgent',
        tag: 'run',
        summary: 'Run the agent on a message',
        description: [
          'Three ways to answer, by the request:',
          "`background: true` → 202 at once with the task id (follow Location / GET /tasks/{id}/result): JSON, or with `Accept: text/event-stream` a stream of one `task_accepted` event carrying the same fields, which then ends (Agentbase's SDKs always ask for a stream and read only its events);",
          'otherwise `Accept: text/event-stream` → 200 with the run streamed as server-sent events;',
          'otherwise → 200 JSON once the run has finished.',
          'Without ?session a new session is created; its id is in the body and X-Session-Id.',
          'Each `schedules` entry becomes a schedule (GET /schedules/{id}) whose runs are background tasks in that session; the JSON and 202 answers list them in `schedules`, a stream in an agent_scheduled event right after agent_started.',
        ].join(' '),
        parameters: [...queryParams(runQuerySchema), ref('parameters', 'IdempotencyKey')],
        body: 'RunRequest',
        responses: {
          200: {
            description: 'The finished run (JSON), or the run streamed (SSE) when Accept asks for text/event-stream.',
            headers: { ...taskHeaders, 'Idempotent-Replayed': ref('headers', 'IdempotentReplayed') },
            content: { ...jsonBody('RunResult'), ...sseBody },
          },
          202: {
            description:
              "Background run accepted (`background: true`): JSON, or, when Accept asks for text/event-stream, one `data: <TaskAcceptedEvent>` frame (no id: not one of the task's events), then the end of the stream.",
            headers: {
              ...taskHeaders,
              Location: ref('headers', 'Location'),
              'Idempotent-Replayed': ref('headers', 'IdempotentReplayed'),
            },
            content: {
              ...jsonBody('TaskAccepted'),
              'text/event-stream': {
                schema: {
                  description: 'One event, then the end of the stream.',
                  ...sseFrame('TaskAcceptedEvent', { event: 'message', id: 'optional' }),
                },
                'x-sse-data': ref('schemas', 'TaskAcceptedEvent'),
              },
            },
          },
        },
        errors: {
          400: 'A body or query field that does not fit this document (its schema states each rule: types, formats, an unknown field, mcp_servers with mcpServers, a callback without background: true...), malformed JSON, or a malformed Idempotency-Key.',
          404: 'The ?session does not exist for this account.',
          409: 'The session is busy with another run and the request asked for `multitask: reject`.',
          422: "The request fits this document but cannot be run, each problem named by its path: a workflow whose steps form a cycle or depend on no step, a JSON Schema (final_output, output_schema) that is not one or not strict, a `schedules` entry that cannot be read (codes invalid_cron, past, no_time_zone, invalid_date, invalid_timezone, unexpected), a datastore or query the account cannot use, an MCP server or callback URL the outbound policy refuses, clashing tool names, max_steps above this deployment's ceiling. Or an Idempotency-Key used before with another body (type idempotency_key_reused).",
          503: 'Temporal is unavailable, or a stream was asked for and the event relay (Redis) is down; retry after Retry-After seconds.',
        },
      }),
    },
    '/tasks': {
      get: operation('get', {
        id: 'listTasks',
        tag: 'tasks',
        summary: "List the account's tasks, newest first",
        description: 'Filtered by status, session, or the schedule that started them (?schedule=).',
        parameters: queryParams(listQuerySchema),
        responses: { 200: { description: 'One page of tasks.', content: jsonBody('TaskList') } },
        errors: {
          400: 'An invalid or unknown query parameter.',
          422: 'A cursor of the right shape that this service did not hand out for this listing.',
        },
      }),
    },
    '/tasks/{id}': {
      get: operation('get', {
        id: 'getTask',
        tag: 'tasks',
        summary: "A task's status, progress and metadata",
        parameters: [taskId],
        responses: { 200: { description: 'The task.', content: jsonBody('Task') } },
        errors: { 400: 'A malformed task id.', 404: undefined },
      }),
      patch: operation('patch', {
        id: 'patchTask',
        tag: 'tasks',
        summary: "Merge keys into a task's metadata",
        parameters: [taskId],
        body: 'PatchTaskRequest',
        responses: { 200: { description: 'The task with its metadata updated.', content: jsonBody('Task') } },
        errors: {
          400: 'A malformed task id or body.',
          404: undefined,
          409: 'The task has finished; its metadata is final.',
        },
      }),
    },
    '/tasks/{id}/result': {
      get: operation('get', {
        id: 'getTaskResult',
        tag: 'tasks',
        summary: "A finished task's result",
        description: 'With ?wait=N the request waits up to N seconds for the task to finish before answering 409.',
        parameters: [taskId, ...queryParams(resultQuerySchema)],
        responses: {
          200: {
            description: 'The result (completed) or the error (failed, cancelled).',
            content: jsonBody('TaskResult'),
          },
        },
        errors: {
          400: 'A malformed task id or ?wait.',
          404: undefined,
          409: 'The task has not finished (yet); details.status says where it is.',
        },
      }),
    },
    '/tasks/{id}/cancel': {
      post: operation('post', {
        id: 'cancelTask',
        tag: 'tasks',
        summary: 'Request cancellation of a task',
        parameters: [taskId],
        responses: { 202: { description: 'Cancellation requested.', content: jsonBody('TaskCancelAccepted') } },
        errors: { 400: 'A malformed task id or JSON body.', 404: undefined, 409: 'The task has already finished.' },
      }),
    },
    '/tasks/{id}/messages': {
      post: operation('post', {
        id: 'sendTaskMessage',
        tag: 'tasks',
        summary: 'Send a message into a running (or queued) task',
        description:
          'The agent reads it before its next model turn; the stream shows it as agent_input. A run that has answered but has a message waiting takes one more turn for it.',
        parameters: [taskId],
        body: 'TaskMessageRequest',
        responses: {
          202: {
            description: 'Accepted; `pending` counts the messages waiting for the next turn.',
            content: jsonBody('TaskMessageAccepted'),
          },
        },
        errors: {
          400: 'A malformed task id or body.',
          404: undefined,
          409: 'The task has finished (or is finishing); it takes no more messages.',
        },
      }),
    },
    '/tasks/{id}/events': {
      get: operation('get', {
        id: 'streamTaskEvents',
        tag: 'tasks',
        summary: "A task's events as server-sent events, from the start or a resume point",
        description:
          'Resumes after Last-Event-ID when given, else after ?after, else from the first event. The stream ends after the terminal event.',
        parameters: [taskId, ref('parameters', 'LastEventId'), ...queryParams(eventsQuerySchema)],
        responses: { 200: { description: 'The event stream.', content: sseBody } },
        errors: {
          400: 'A malformed task id, ?after or Last-Event-ID.',
          404: undefined,
          503: 'Temporal or the event relay (Redis) is unavailable; retry after Retry-After seconds.',
        },
      }),
    },
    ...callbackPaths(taskId),
    ...schedulePaths(),
    ...datastorePaths(),
    '/sessions': {
      get: operation('get', {
        id: 'listSessions',
        tag: 'sessions',
        summary: "List the account's sessions, most recently (re)opened first",
        description:
          'Each session once, open or closed (a session closes when idle and reopens on its next run). Cursor-paged like GET /tasks.',
        parameters: queryParams(sessionListQuerySchema),
        responses: { 200: { description: 'One page of sessions.', content: jsonBody('SessionList') } },
        errors: {
          400: 'An invalid or unknown query parameter.',
          422: 'A cursor of the right shape that this service did not hand out for this listing.',
        },
      }),
      post: operation('post', {
        id: 'createSession',
        tag: 'sessions',
        summary: 'Create an empty session, with an id of your choosing or a new one',
        body: 'CreateSessionRequest',
        bodyOptional: true,
        responses: {
          201: {
            description: 'Created; POST /?session=<session> runs in it, GET /sessions/{id}/messages is [].',
            content: jsonBody('SessionCreated'),
          },
        },
        errors: { 400: 'A malformed session id or body.', 409: 'A session with this id exists (open or closed).' },
      }),
    },
    '/sessions/{id}': {
      delete: operation('delete', {
        id: 'deleteSession',
        tag: 'sessions',
        summary: 'Delete a session and its conversation',
        description:
          'Removes every run of the session from Temporal: its messages are gone (404), it is no longer listed, and its id can be created again. Its tasks stay (GET /tasks?session=).',
        parameters: [sessionId],
        responses: { 204: { description: 'Deleted.' } },
        errors: {
          400: 'A malformed session id.',
          404: 'No such session for this account.',
          409: 'A run is active or queued in the session (details: active, queued); cancel it or wait for it to finish.',
          503: 'Temporal is unavailable, or has not finished deleting yet; retry after Retry-After seconds.',
        },
      }),
    },
    '/sessions/{id}/messages': {
      get: operation('get', {
        id: 'getSessionMessages',
        tag: 'sessions',
        summary: "A session's conversation",
        parameters: [sessionId],
        responses: { 200: { description: 'The messages of the session.', content: jsonBody('SessionMessages') } },
        errors: { 400: 'A malformed session id.', 404: 'No such session for this account.' },
      }),
      delete: operation('delete', {
        id: 'clearSessionMessages',
        tag: 'sessions',
        summary: "Clear a session's conversation",
        parameters: [sessionId],
        responses: { 204: { description: 'Cleared; later runs in the session start from an empty conversation.' } },
        errors: { 400: 'A malformed session id.', 404: 'No such session for this account.' },
      }),
    },
    ...agentbasePaths(),
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

function components(): Json {
  const header = (description: string, schema: Json) => ({ description, schema });
  return {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: 'An API key of the account: `Authorization: Bearer <API_KEY>`.',
      },
    },
    schemas: {
      RunRequest: toSchema(runRequestSchema),
      PatchTaskRequest: toSchema(patchTaskSchema),
      TaskMessageRequest: toSchema(taskMessageSchema),
      TaskMessageAccepted: toSchema(taskMessageAcceptedSchema),
      TaskAccepted: toSchema(taskAcceptedSchema),
      TaskAcceptedEvent: toSchema(taskAcceptedEventSchema),
      TaskResult: toSchema(taskResultSchema),
      Task: toSchema(taskViewSchema),
      TaskCancelAccepted: toSchema(cancelAcceptedSchema),
      TaskList: toSchema(taskListSchema),
      SessionMessages: toSchema(sessionMessagesSchema),
      SessionList: toSchema(sessionListSchema),
      CreateSessionRequest: toSchema(createSessionSchema),
      SessionCreated: toSchema(sessionCreatedSchema),
      WebhookSecret: toSchema(webhookSecretSchema),
      DeliveryList: toSchema(deliveryListSchema),
      ...scheduleSchemas(),
      ...datastoreSchemas(),
      ...agentbaseSchemas(),
      AgentEvent: toSchema(agentEventSchema),
      StreamError: toSchema(streamErrorSchema),
      Health: toSchema(healthSchema),
      Readiness: toSchema(readinessSchema),
      Error: toSchema(errorBodySchema),
    },
    responses: {
      // Every error but the 431, which the HTTP server answers before the versioned API sees the request, says its version.
      ...Object.fromEntries(
        ERRORS.map((e) => [
          e.name,
          errorResponse(e.error.type, e.description, {
            'x-should-retry': ref('headers', 'XShouldRetry'),
            ...e.headers,
            ...(e.error.status === 431 ? {} : VERSION_HEADERS),
          }),
        ]),
      ),
      // error-handler.ts answers anything it does not recognise this way.
      Internal: errorResponse('internal', 'An unexpected error; the server logged it.', VERSION_HEADERS),
    },
    parameters: {
      TaskId: {
        name: 'id',
        in: 'path',
        required: true,
        description: 'A task id (task_…).',
        schema: { type: 'string', pattern: TASK_ID_PATTERN },
      },
      SessionId: {
        name: 'id',
        in: 'path',
        required: true,
        description: 'A session id.',
        schema: toSchema(runQuerySchema.shape.session),
      },
      ...scheduleParameters(),
      ...datastoreParameters(),
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Repeating a request with the same key (and the same body) answers with the task it started the first time instead of starting another.',
        schema: { type: 'string', pattern: IDEMPOTENCY_KEY.source },
      },
      ApiVersion: {
        name: API_VERSION_HEADER,
        in: 'header',
        required: false,
        description: `The API version (a release date) to answer in. Without it: the deployment's (API_VERSION, by default the newest, ${LATEST_VERSION}). One this service does not have is a 400.`,
        schema: { type: 'string', enum: [...VERSION_NAMES] },
      },
      LastEventId: {
        name: 'Last-Event-ID',
        in: 'header',
        required: false,
        description: 'Resume after this event seq (takes precedence over ?after).',
        schema: { type: 'string', pattern: LAST_EVENT_ID.source },
      },
    },
    headers: {
      XTaskId: header('The id of the task the request started.', { type: 'string' }),
      XSessionId: header('The session of the task; send it as ?session= to continue the conversation.', {
        type: 'string',
      }),
      Location: header('Where the task can be read: /tasks/{id}.', { type: 'string' }),
      IdempotentReplayed: header(
        '"true" when an Idempotency-Key matched an earlier request and nothing new was started (on every such answer: 202, JSON and streamed); absent on a first answer.',
        { type: 'string', const: 'true' },
      ),
      ServerTiming: header(
        'Where the gateway spent the request (ms, W3C Server-Timing; on every response): `total` from arrival to the response headers; on POST /, also `temporal-start` (starting the run), `temporal-session` (opening or joining its session) and `redis` (caching its status).',
        { type: 'string' },
      ),
      RetryAfter: header('Seconds to wait before retrying.', { type: 'integer', minimum: 0 }),
      XShouldRetry: header(
        'Whether the same request, sent again unchanged, may succeed: "false" on every 4xx but a 409 that passes by itself (a result not ready yet, a session reopened meanwhile), "true" on those and on 503 (with Retry-After). Generated clients (Stainless, as Agentbase\'s SDKs) obey it; they would otherwise retry every 408, 409, 429 and 5xx.',
        { type: 'string', enum: ['true', 'false'] },
      ),
      ApiVersion: header("The API version the answer is in: the request's API-Version, else the deployment's.", {
        type: 'string',
        enum: [...VERSION_NAMES],
      }),
      Deprecation: header(
        'On an answer of a version marked deprecated: since when (RFC 9745: @ and Unix seconds). Move to a newer version before its Sunset.',
        { type: 'string', pattern: '^@-?[0-9]+$' },
      ),
      Sunset: header(
        'On an answer of a deprecated version that has an end: when it stops being served (RFC 8594, an HTTP date).',
        { type: 'string' },
      ),
      WWWAuthenticate: header('The scheme to authenticate with.', { type: 'string' }),
      Allow: header('The methods the path serves, e.g. `GET, PATCH`.', { type: 'string' }),
    },
  };
}

export function buildOpenApi(): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Execution Service',
      // The API's newest dated version (src/api-versions.ts), which this document describes.
      version: LATEST_VERSION,
      description: `Runs an AI agent on a message: synchronous (JSON or server-sent events) or in the background, in sessions that remember earlier messages. Every error answer has the body \`{error: {type, message, details}}\`. Versions are release dates, picked with the ${API_VERSION_HEADER} header (${VERSION_NAMES.join(', ')}); this document describes ${LATEST_VERSION}.`,
    },
    servers: [{ url: '/', description: 'The gateway serving this document.' }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'run', description: 'Running the agent.' },
      { name: 'tasks', description: 'Tasks: status, results, events, cancellation, metadata.' },
      { name: 'sessions', description: 'Conversations.' },
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
