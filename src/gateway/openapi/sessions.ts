// The sessions routes of the OpenAPI document: list and create sessions, delete one,
// read and clear its conversation.
import { type Json, jsonBody, operation, queryParams, ref } from './operations';
import { sessionListQuerySchema } from '../schemas/request';

const sessionId = ref('parameters', 'SessionId');

export function sessionPaths(): Json {
  return { ...sessionListPaths(), ...sessionItemPaths() };
}

/** The account's sessions: list them, create one. */
function sessionListPaths(): Json {
  return {
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
  };
}

/** One session: delete it, read or clear its conversation. */
function sessionItemPaths(): Json {
  return {
    '/sessions/{id}': {
      delete: operation('delete', {
        id: 'deleteSession',
        tag: 'sessions',
        summary: 'Delete a session, its conversation and its workspace',
        description:
          "Removes every run of the session from Temporal: its messages are gone (404), it is no longer listed, and its id can be created again. Then its workspace (the files of its agent's computer, GET /sessions/{id}/files) is deleted: a session created again with the id starts with none. Its tasks stay (GET /tasks?session=).",
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
    '/sessions/{id}/fork': {
      post: operation('post', {
        id: 'forkSession',
        tag: 'sessions',
        summary: "A new session with this session's conversation, or its first messages",
        description:
          "The new session's thread is the first `at` messages of this one (default: all of them), and its next run continues from there; this session goes on unchanged. Its workspace (the agent's files) starts empty, and its first run starts with the main agent. Like any new session, its id may be given (409 when taken).",
        parameters: [sessionId],
        body: 'ForkSessionRequest',
        bodyOptional: true,
        responses: { 201: { description: 'The new session.', content: jsonBody('SessionForked') } },
        errors: {
          400: 'A malformed session id or body.',
          404: 'No such session for this account.',
          422: '`at` beyond the number of messages of the session (body.at).',
          409: 'A session with the new id exists (open or closed).',
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
  };
}
