// The OpenAPI document's part for Agentbase's own message endpoints
// (routes/agentbase.ts), which its SDKs call as they are.
import { type Json, jsonBody, operation, queryParams, toSchema } from './operations';
import { agentbaseClearedSchema, agentbaseMessagesSchema, agentbaseSessionQuerySchema } from '../schemas/agentbase';

const COMPATIBLE =
  "Agentbase's endpoint, as its SDKs call it (client.messages.get / .clear); the same conversation as /sessions/{id}/messages. The SDKs send no body (an empty JSON object is accepted too).";

export function agentbasePaths(): Json {
  const common = {
    tag: 'sessions',
    parameters: queryParams(agentbaseSessionQuerySchema),
    errors: {
      400: 'A missing or malformed ?session, or a body with fields.',
      404: 'No such session for this account.',
    },
  };
  return {
    '/get-messages': {
      post: operation('post', {
        ...common,
        id: 'agentbaseGetMessages',
        summary: "A session's conversation, in Agentbase's message types",
        description: COMPATIBLE,
        responses: { 200: { description: 'The messages, oldest first.', content: jsonBody('AgentbaseMessages') } },
      }),
    },
    '/clear-messages': {
      post: operation('post', {
        ...common,
        id: 'agentbaseClearMessages',
        summary: "Clear a session's conversation, answered as Agentbase answers",
        description: COMPATIBLE,
        responses: { 200: { description: 'Cleared.', content: jsonBody('AgentbaseCleared') } },
      }),
    },
  };
}

export function agentbaseSchemas(): Json {
  return { AgentbaseMessages: toSchema(agentbaseMessagesSchema), AgentbaseCleared: toSchema(agentbaseClearedSchema) };
}
