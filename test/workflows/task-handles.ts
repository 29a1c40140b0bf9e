// Starting and watching agentTask runs on the engine, as the gateway starts them, for the
// engine tests of the task workflow (agent-task.engine.test.ts, agent-task-sessions.engine.test.ts).
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporal } from '@temporalio/proto';
import { createSessionActivities } from '../../activities/sessions';
import type { TaskInput, TaskView } from '../../workflows/types';
import { statusQuery } from '../../workflows/definitions';
import { oneOffIds } from '../../src/common/sessions/lazy-sessions';
import { waitUntil } from '../support/wait-until';
import { type InputFields, taskInput } from './fake-activities';

const EventType = temporal.api.enums.v1.EventType;

export function input(message: string, over: InputFields = {}): TaskInput {
  return taskInput(message, { joinGraceMs: 300, ...over });
}

/** The helpers, bound to the test file's environment (set in its beforeAll) and task queue. */
export class TaskHandles {
  constructor(
    private readonly env: () => TestWorkflowEnvironment,
    private readonly taskQueue: string,
  ) {}

  start = (i: TaskInput): Promise<WorkflowHandle> =>
    this.env().client.workflow.start('agentTask', { taskQueue: this.taskQueue, workflowId: i.taskId, args: [i] });

  /**
   * One status query, or undefined when it waited in vain for a worker: the engine holds a query
   * while the workflow's task is out, and on a loaded machine that has taken a whole minute. Each
   * query gets 5 s.
   */
  tryStatus = async (h: WorkflowHandle): Promise<TaskView | undefined> =>
    this.env()
      .client.connection.withDeadline(Date.now() + 5000, () => h.query(statusQuery))
      .catch((err: Error) => {
        if (/DEADLINE_EXCEEDED|timed out/i.test(`${err.message} ${(err.cause as Error | undefined)?.message ?? ''}`))
          return undefined;
        throw err;
      });

  /** The status, asked again while a query waits in vain for a worker. */
  statusOf = (h: WorkflowHandle): Promise<TaskView> =>
    waitUntil(`a status query of ${h.workflowId} answered`, () => this.tryStatus(h), { stepMs: 0 });

  /** Polls the status until it is `status` (queries that wait in vain count as "not yet"). */
  statusBecomes = async (h: WorkflowHandle, status: TaskView['status']): Promise<void> => {
    await waitUntil(
      `${h.workflowId} to become ${status}`,
      () => this.tryStatus(h),
      (now) => now?.status === status,
      { stepMs: 50 },
    );
  };

  /** Waits until `h` has an event of `type` in its history. */
  hasEvent = async (h: WorkflowHandle, type: string, what: string): Promise<void> => {
    await waitUntil(
      what,
      () => this.eventTypes(h),
      (types) => types.includes(type),
    );
  };

  eventTypes = async (h: WorkflowHandle) =>
    ((await h.fetchHistory()).events ?? []).map((e) => EventType[e.eventType ?? 0]);

  /** As the gateway submits: the run starts while its session (created if new) enqueues it. */
  submitLikeGateway = async (i: TaskInput): Promise<WorkflowHandle> => {
    const { joinSession } = createSessionActivities({
      temporal: this.env().client,
      config: { TEMPORAL_TASK_QUEUE: this.taskQueue, RUN_WATCH_MS: 500 },
    } as never);
    const [h] = await Promise.all([
      this.start(i),
      joinSession({ taskId: i.taskId, account: i.account, session: i.session }),
    ]);
    return h;
  };

  /**
   * As the gateway submits a run that names no session: the run holds the turn of a session made
   * for it (its id from the task's) that no workflow stands for until something uses it.
   */
  startLazyLikeGateway = (i: TaskInput): Promise<WorkflowHandle> => {
    const { taskId, session } = oneOffIds();
    const run = { ...i, taskId, session, admission: { ...i.admission, ownsTurn: true, lazySession: true } };
    return this.env().client.workflow.start('agentTask', {
      taskQueue: this.taskQueue,
      workflowId: taskId,
      args: [run],
      memo: { account: i.account, session, lazySession: true, createdAt: i.createdAt },
    });
  };

  /** As the gateway submits a run that starts a new session: the session opens with the run holding its turn. */
  openLikeGateway = async (i: TaskInput, idleCloseMs?: number): Promise<WorkflowHandle> => {
    const [h] = await Promise.all([
      this.start({ ...i, admission: { ...i.admission, ownsTurn: true } }),
      this.env().client.workflow.start('agentSession', {
        taskQueue: this.taskQueue,
        workflowId: `session:${i.account}:${i.session}`,
        args: [
          {
            account: i.account,
            session: i.session,
            messages: [],
            queue: [],
            active: i.taskId,
            idleCloseMs,
            watchMs: 500,
          },
        ],
      }),
    ]);
    return h;
  };
}
