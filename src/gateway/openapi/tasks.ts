// The tasks routes of the OpenAPI document: list a task, read and patch it, its result,
// cancellation, messages into it and its event stream.
import { type Json, jsonBody, operation, queryParams, ref } from './operations';
import { sseBody } from './sse';
import { eventsQuerySchema, listQuerySchema, resultQuerySchema } from '../schemas/request';

export const taskId = ref('parameters', 'TaskId');

export function taskPaths(): Json {
  return { ...taskStatePaths(), ...taskEndPaths(), ...taskTalkPaths(), ...approvalPaths() };
}

const toolCallId = {
  name: 'tool_call_id',
  in: 'path',
  required: true,
  description: 'The gated call (its agent_approval_request names it).',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' },
};

/** Approval gates: the task's gated calls, and a decision on one (docs/approvals.md). */
function approvalPaths(): Json {
  return {
    '/tasks/{id}/approvals': {
      get: operation('get', {
        id: 'listTaskApprovals',
        tag: 'tasks',
        summary: "A task's tool calls that wait for a decision, and the decisions made",
        parameters: [taskId],
        responses: { 200: { description: 'The gated calls.', content: jsonBody('TaskApprovals') } },
        errors: { 400: 'A malformed task id.', 404: undefined },
      }),
    },
    '/tasks/{id}/rewind': {
      post: operation('post', {
        id: 'rewindTask',
        tag: 'tasks',
        summary: 'Go back to just before a model turn and run again from there',
        description:
          "A Temporal reset of the task's run to the workflow task that decided turn `step` (the old run stays in history, terminated if it was running); with `message`, the model reads it there (added, or replacing the last user message). The abandoned branch's events stay readable, marked superseded; calls of it that may have acted are listed. A finished task may be rewound: it runs again, taking its session's turn.",
        parameters: [taskId],
        body: 'RewindRequest',
        responses: { 200: { description: 'Rewound.', content: jsonBody('RewindAnswer') } },
        errors: {
          400: 'A malformed task id or body.',
          404: undefined,
          409: 'The task has not started yet.',
          422: "The turn is not in the task's current run (not taken yet, or before a continue-as-new), the task has workflows, or replace came without a message.",
        },
      }),
    },
    '/tasks/{id}/approvals/{tool_call_id}': {
      post: operation('post', {
        id: 'decideTaskApproval',
        tag: 'tasks',
        summary: 'Approve or deny a tool call that waits for a decision',
        description:
          "approve runs the call (with `input` instead of the model's arguments when given); deny gives the model a result saying it was not run, with `reason`. The same decision again answers the first one (200); another one is a 409.",
        parameters: [taskId, toolCallId],
        body: 'ApprovalDecisionRequest',
        responses: { 200: { description: 'The decision.', content: jsonBody('ApprovalDecision') } },
        errors: {
          400: "A malformed id or body, or an edited input that does not fit the tool's parameters (each problem under body.input).",
          404: 'No such task, or no call of it with this id waits or waited for a decision.',
          409: 'The call was decided otherwise already (details.decided), or the task has finished.',
        },
      }),
    },
  };
}

/** The listing and one task's status and metadata. */
function taskStatePaths(): Json {
  return {
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
  };
}

/** How a task ends: its result, its cancellation. */
function taskEndPaths(): Json {
  return {
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
  };
}

/** Talking to a running task: messages into it, its events out. */
function taskTalkPaths(): Json {
  return {
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
  };
}
