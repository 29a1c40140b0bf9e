// The components of the OpenAPI document: the schemas, shared responses, parameters and
// headers the paths refer to (ref()), and the security scheme.
import { ERRORS, Json, VERSION_HEADERS, errorResponse, ref, toSchema } from './operations';
import { API_VERSION_HEADER, LATEST_VERSION, VERSION_NAMES } from '../../common/api-versions';
import { agentbaseSchemas } from './agentbase';
import { scheduleParameters, scheduleSchemas } from './schedules';
import { datastoreParameters, datastoreSchemas } from './datastores';
import { sessionFileParameters, sessionFileSchemas } from './session-files';
import {
  createSessionSchema,
  forkSessionSchema,
  patchTaskSchema,
  taskMessageSchema,
  approvalDecisionSchema as approvalDecisionRequestSchema,
  rewindSchema,
  runQuerySchema,
  TASK_ID,
  IDEMPOTENCY_KEY,
  LAST_EVENT_ID,
} from '../schemas/request';
import { runRequestSchema } from '../../common/contracts/run-request';
import {
  agentEventSchema,
  cancelAcceptedSchema,
  errorBodySchema,
  healthSchema,
  readinessSchema,
  sessionCreatedSchema,
  sessionForkedSchema,
  webhookSecretSchema,
  deliveryListSchema,
  sessionListSchema,
  sessionMessagesSchema,
  streamErrorSchema,
  taskAcceptedSchema,
  taskAcceptedEventSchema,
  taskMessageAcceptedSchema,
  approvalDecisionSchema,
  approvalsPageSchema,
  rewindAnswerSchema,
  taskListSchema,
  taskResultSchema,
  taskViewSchema,
} from '../schemas/response';

const TASK_ID_PATTERN = TASK_ID.source;

export function components(): Json {
  return {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: 'An API key of the account: `Authorization: Bearer <API_KEY>`.',
      },
    },
    schemas: componentSchemas(),
    responses: componentResponses(),
    parameters: componentParameters(),
    headers: componentHeaders(),
  };
}

function componentSchemas(): Json {
  return {
    RunRequest: toSchema(runRequestSchema),
    PatchTaskRequest: toSchema(patchTaskSchema),
    TaskMessageRequest: toSchema(taskMessageSchema),
    TaskMessageAccepted: toSchema(taskMessageAcceptedSchema),
    ApprovalDecisionRequest: toSchema(approvalDecisionRequestSchema),
    ApprovalDecision: toSchema(approvalDecisionSchema),
    TaskApprovals: toSchema(approvalsPageSchema),
    RewindRequest: toSchema(rewindSchema),
    RewindAnswer: toSchema(rewindAnswerSchema),
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
    ForkSessionRequest: toSchema(forkSessionSchema),
    SessionForked: toSchema(sessionForkedSchema),
    WebhookSecret: toSchema(webhookSecretSchema),
    DeliveryList: toSchema(deliveryListSchema),
    ...scheduleSchemas(),
    ...datastoreSchemas(),
    ...sessionFileSchemas(),
    ...agentbaseSchemas(),
    AgentEvent: toSchema(agentEventSchema),
    StreamError: toSchema(streamErrorSchema),
    Health: toSchema(healthSchema),
    Readiness: toSchema(readinessSchema),
    Error: toSchema(errorBodySchema),
  };
}

function componentResponses(): Json {
  return {
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
  };
}

function componentParameters(): Json {
  return {
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
    ...sessionFileParameters(),
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
  };
}

const header = (description: string, schema: Json) => ({ description, schema });

function componentHeaders(): Json {
  return {
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
  };
}
