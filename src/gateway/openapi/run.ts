// The run route of the OpenAPI document: POST / runs the agent on a message, answered
// as JSON, as server-sent events, or at once with a background task's id.
import { type Json, jsonBody, operation, queryParams, ref } from './operations';
import { sseBody, sseFrame } from './sse';
import { runQuerySchema } from '../schemas/request';

const taskHeaders = {
  'X-Task-Id': ref('headers', 'XTaskId'),
  'X-Session-Id': ref('headers', 'XSessionId'),
  'Server-Timing': ref('headers', 'ServerTiming'),
};

export function runPaths(): Json {
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
  };
}
