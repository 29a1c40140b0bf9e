// The server-sent event answers of the OpenAPI document (openapi.ts): each
// event described as an SSE reader parses it (event, id, data), its data JSON
// of a schema of the document, as OpenAPI 3.2's itemSchema does in 3.1 terms.
import { type Json, ref } from './operations';

const SSE_FORMAT = [
  'Server-sent events. Each agent event is one frame `id: <seq>` + `data: <AgentEvent JSON>`.',
  'Lines starting with `:` are heartbeats. The stream ends after agent_completed or agent_error.',
  'If the event relay fails mid-stream an `event: error` frame (data: a StreamError) is sent and the stream ends;',
  'reconnect to GET /tasks/{id}/events with Last-Event-ID. A client disconnecting never stops the task.',
  "The schema describes each event as an SSE reader parses it (event, id, data), its data being JSON of the schema in contentSchema (OpenAPI 3.2's itemSchema, in 3.1 terms);",
  'x-sse-data and x-sse-error name those schemas too.',
].join(' ');

/** One event of a stream as an SSE reader parses it: `event` ("message" when the frame names none), `id`, and `data` holding JSON of `schema`. */
export function sseFrame(schema: string, frame: { event: 'message' | 'error'; id: 'required' | 'optional' }): Json {
  return {
    type: 'object',
    required: ['data', ...(frame.event === 'error' ? ['event'] : []), ...(frame.id === 'required' ? ['id'] : [])],
    properties: {
      event: { const: frame.event },
      id: { type: 'string', pattern: '^[0-9]+$' },
      data: { type: 'string', contentMediaType: 'application/json', contentSchema: ref('schemas', schema) },
    },
  };
}

export const sseBody = {
  'text/event-stream': {
    schema: {
      description: SSE_FORMAT,
      oneOf: [
        sseFrame('AgentEvent', { event: 'message', id: 'required' }),
        sseFrame('StreamError', { event: 'error', id: 'optional' }),
      ],
    },
    'x-sse-data': ref('schemas', 'AgentEvent'),
    'x-sse-error': ref('schemas', 'StreamError'),
  },
};
