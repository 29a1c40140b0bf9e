// Plays the worker with raw WorkflowService calls, for tests of what the SDK
// would hide: task attempts, the events a poll carries, refused completions.
import { randomUUID } from 'node:crypto';
import Long from 'long';
import { temporal } from '@temporalio/proto';
import { Env, longPoll, uid } from './harness';

export const ET = temporal.api.enums.v1.EventType;
export const CT = temporal.api.enums.v1.CommandType;
export const STICKY = temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_STICKY;
const NORMAL = temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL;
type PollResponse = temporal.api.workflowservice.v1.IPollWorkflowTaskQueueResponse;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export const IDENTITY = 'raw-worker';
export const COMPLETE = {
  commandType: CT.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
  completeWorkflowExecutionCommandAttributes: {},
};

/** Raw worker calls on the env `getEnv` returns (set up in a beforeAll). */
// eslint-disable-next-line max-lines-per-function -- a table of the raw WorkflowService calls the tests make, one entry per call
export function rawWorker(getEnv: () => Env) {
  const svc = () => getEnv().connection.workflowService;
  const ns = () => getEnv().namespace;
  const history = async (workflowId: string): Promise<HistoryEvent[]> => {
    const h = await svc().getWorkflowExecutionHistory({ namespace: ns(), execution: { workflowId } });
    return h.history!.events!;
  };
  return {
    svc,
    async startRaw(taskQueue: string, workflowId = uid('raw'), taskTimeoutSeconds = 2) {
      const res = await svc().startWorkflowExecution({
        namespace: ns(),
        workflowId,
        workflowType: { name: 'rawWorkflow' },
        taskQueue: { name: taskQueue },
        requestId: randomUUID(),
        workflowTaskTimeout: { seconds: Long.fromNumber(taskTimeoutSeconds) },
      });
      return { workflowId, runId: res.runId! };
    },
    poll(taskQueue: string, kind = NORMAL, timeoutMs?: number): Promise<PollResponse> {
      return longPoll(
        getEnv(),
        () =>
          svc().pollWorkflowTaskQueue({ namespace: ns(), taskQueue: { name: taskQueue, kind }, identity: IDENTITY }),
        timeoutMs,
      );
    },
    history,
    async types(workflowId: string): Promise<number[]> {
      return (await history(workflowId)).map((e) => e.eventType!);
    },
    signal(workflowId: string, signalName = 's') {
      return svc().signalWorkflowExecution({
        namespace: ns(),
        workflowExecution: { workflowId },
        signalName,
        requestId: randomUUID(),
      });
    },
    fail(task: PollResponse) {
      return svc().respondWorkflowTaskFailed({
        taskToken: task.taskToken,
        namespace: ns(),
        identity: IDENTITY,
        cause:
          temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE,
        failure: { message: 'worker bug' },
      });
    },
    complete(task: PollResponse, commands: object[] = [], extra: object = {}) {
      return svc().respondWorkflowTaskCompleted({
        taskToken: task.taskToken,
        namespace: ns(),
        identity: IDENTITY,
        commands,
        ...extra,
      });
    },
    terminate(workflowId: string) {
      return svc().terminateWorkflowExecution({ namespace: ns(), workflowExecution: { workflowId } });
    },
  };
}

/** Type and, for workflow task events, attempt and ids: what a history is checked on. */
export function brief(e: HistoryEvent): string {
  const name = ET[e.eventType!].replace('EVENT_TYPE_', '');
  const s = e.workflowTaskScheduledEventAttributes;
  if (s) return `${e.eventId} ${name} attempt=${s.attempt}`;
  const st = e.workflowTaskStartedEventAttributes;
  if (st) return `${e.eventId} ${name} scheduled=${st.scheduledEventId}`;
  const c = e.workflowTaskCompletedEventAttributes ?? e.workflowTaskFailedEventAttributes;
  if (c) return `${e.eventId} ${name} scheduled=${c.scheduledEventId} started=${c.startedEventId}`;
  return `${e.eventId} ${name}`;
}
