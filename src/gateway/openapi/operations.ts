// The building blocks of the OpenAPI document (openapi.ts): schema conversion,
// references, the error responses named after the error classes, and one
// operation with the error statuses every authenticated route can answer.
import { z } from 'zod';
import {
  ConflictError,
  DependencyUnavailableError,
  HeadersTooLargeError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceError,
  UnauthorizedError,
  UnprocessableRequestError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../../common/errors';
import { HEADER_LIMIT_BYTES } from '../gateway-server';

export type Json = Record<string, unknown>;

/** The one conversion of every schema in the document (requests as clients send them: io 'input'). */
export function toSchema(schema: z.ZodType): Json {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }) as Json;
  // `#/$defs/...` would resolve against the document root, not the schema: refuse rather than emit broken refs.
  if ('$defs' in json)
    throw new Error('a schema produced $defs (recursion or registry ids); the OpenAPI builder does not hoist them');
  return json;
}

export const ref = (kind: 'schemas' | 'responses' | 'parameters' | 'headers', name: string) => ({
  $ref: `#/components/${kind}/${name}`,
});
export const jsonBody = (name: string) => ({ 'application/json': { schema: ref('schemas', name) } });

/** Query parameters straight from a strict zod query schema: one per property. */
export function queryParams(schema: z.ZodObject): Json[] {
  const json = toSchema(schema) as { properties: Record<string, Json>; required?: string[] };
  return Object.entries(json.properties).map(([name, { description, ...prop }]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    ...(description ? { description } : {}),
    schema: prop,
  }));
}

/**
 * Every error status, named by the error classes themselves so status and type cannot disagree with errors.ts.
 * One response per status: the 422's two types (unprocessable_request, idempotency_key_reused) share one.
 */
export const ERRORS: { error: ServiceError; name: string; description: string; headers?: Json }[] = [
  {
    error: new ValidationError(''),
    name: 'InvalidRequest',
    description:
      'The request does not fit this document: a body or query field fails its schema, an unknown field, malformed JSON, a malformed id or header. details lists every problem at its path; the message opens with the first.',
  },
  {
    error: new UnauthorizedError(''),
    name: 'Unauthorized',
    description: 'Missing, malformed or unknown API key.',
    headers: { 'WWW-Authenticate': ref('headers', 'WWWAuthenticate') },
  },
  {
    error: new NotFoundError(''),
    name: 'NotFound',
    description: 'No such task, session or schedule for this account.',
  },
  {
    error: new MethodNotAllowedError('', []),
    name: 'MethodNotAllowed',
    description:
      'A path this service serves, asked with a method it does not serve there (any path below); Allow lists the methods it does. Unknown paths are 404.',
    headers: { Allow: ref('headers', 'Allow') },
  },
  {
    error: new ConflictError(''),
    name: 'Conflict',
    description:
      'The request conflicts with the state of the task or session. x-should-retry says whether that state passes by itself (true: ask again later) or only another request can change it (false).',
  },
  {
    error: new PayloadTooLargeError(''),
    name: 'PayloadTooLarge',
    description: 'The request body exceeds the configured limit (BODY_LIMIT_BYTES).',
  },
  {
    error: new UnsupportedMediaTypeError(''),
    name: 'UnsupportedMediaType',
    description: 'A request body whose Content-Type is not application/json.',
  },
  {
    error: new UnprocessableRequestError(''),
    name: 'Unprocessable',
    description:
      'The request fits this document, but the service cannot carry it out, for a reason no schema states (type unprocessable_request, details at their paths as for a 400): something the account does not have, a source that cannot be opened, a schedule in the past, a cycle among workflow steps, a URL the outbound policy refuses, a limit of this deployment. Or (type idempotency_key_reused) this Idempotency-Key was used before with another request body.',
  },
  {
    error: new HeadersTooLargeError(''),
    name: 'HeadersTooLarge',
    description: `The request's header section, its URL included, is larger than the gateway reads (${HEADER_LIMIT_BYTES / 1024} KiB); refused before any route sees it.`,
  },
  {
    error: new DependencyUnavailableError('temporal', ''),
    name: 'Unavailable',
    description: 'A dependency (Temporal, Redis) is unavailable; retry after Retry-After seconds.',
    headers: { 'Retry-After': ref('headers', 'RetryAfter') },
  },
];

export const errorResponse = (type: string, description: string, headers?: Json) => ({
  description,
  ...(headers ? { headers } : {}),
  content: {
    'application/json': {
      schema: ref('schemas', 'Error'),
      example: { error: { type, message: description, details: null } },
    },
  },
});

/** What every answer of the versioned API carries (api-version.ts): the version that answered, and a deprecated one's dates. */
export const VERSION_HEADERS: Json = {
  'API-Version': ref('headers', 'ApiVersion'),
  Deprecation: ref('headers', 'Deprecation'),
  Sunset: ref('headers', 'Sunset'),
};

const responseName = new Map<number, string>([
  ...ERRORS.map((e) => [e.error.status, e.name] as const),
  [500, 'Internal'],
]);

export interface Op {
  id: string;
  tag: string;
  summary: string;
  description?: string;
  parameters?: Json[];
  body?: string;
  /** The body may be left out (every field has a default). */
  bodyOptional?: boolean;
  responses: Record<string, Json>;
  /** Statuses this route itself can answer, with what they mean here (undefined: the shared text). */
  errors?: Record<number, string | undefined>;
  /** Probes and the document itself need no API key. */
  public?: boolean;
}

/**
 * One operation; one of the versioned API (every one but the probes and the
 * document) takes API-Version and answers with VERSION_HEADERS. The statuses every route can answer come from the HTTP server
 * (431: headers too large, gateway-server.ts) and, on an authenticated route,
 * the app's middleware (app.ts): 400 from the API version, 401 from auth,
 * 400/413/415 from the JSON body parser on POST and PATCH, 503 from Temporal
 * (every such route calls it), 500.
 */
export function operation(method: string, o: Op): Json {
  const errors: Record<number, string | undefined> = { 431: undefined };
  if (!o.public) {
    // Every operation of the versioned API refuses an API-Version it does not have (api-version.ts).
    Object.assign(errors, {
      400: 'An API-Version this service does not have.',
      401: undefined,
      503: undefined,
      500: undefined,
    });
    if (method === 'post' || method === 'patch')
      Object.assign(errors, {
        400: 'A malformed JSON body, or an API-Version this service does not have.',
        413: undefined,
        415: undefined,
      });
  }
  Object.assign(errors, o.errors);
  const responses: Json = o.public
    ? { ...o.responses }
    : Object.fromEntries(
        Object.entries(o.responses).map(([status, r]) => [
          status,
          { ...r, headers: { ...(r.headers as Json | undefined), ...VERSION_HEADERS } },
        ]),
      );
  for (const [status, text] of Object.entries(errors)) {
    const name = responseName.get(Number(status));
    if (!name) throw new Error(`no error response for status ${status}`);
    responses[status] = text ? { ...ref('responses', name), description: text } : ref('responses', name);
  }
  return {
    operationId: o.id,
    tags: [o.tag],
    summary: o.summary,
    ...(o.description ? { description: o.description } : {}),
    ...(o.public ? { security: [] } : {}),
    ...(o.public
      ? o.parameters?.length
        ? { parameters: o.parameters }
        : {}
      : { parameters: [...(o.parameters ?? []), ref('parameters', 'ApiVersion')] }),
    ...(o.body ? { requestBody: { required: !o.bodyOptional, content: jsonBody(o.body) } } : {}),
    responses,
  };
}
