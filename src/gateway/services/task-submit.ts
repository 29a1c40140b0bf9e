// The submit path of the gateway's tasks (TaskService.submit): a run request becomes a task,
// started in Temporal and put in its session's turn order, with an Idempotency-Key's repeat
// answered by the task it started the first time.
import { createHash, randomUUID } from 'node:crypto';
import type { Client, Connection } from '@temporalio/client';
import type { Config } from '../../common/config';
import { ConflictError, IdempotencyMismatchError, NotFoundError } from '../../common/errors';
import type { StatusCache } from '../../common/relay/status-cache';
import type { Account } from '../../common/accounts/registry';
import type { CallbackConfig, ScheduledSummary, TaskInput } from '../../../workflows/types';
import { initialView, sessionWorkflowId } from '../../../workflows/types';
import { taskInput, taskStartMeta } from '../../common/tasks/task-input';
import type { RunRequest } from '../../common/contracts/run-request';
import { temporalCall } from './temporal-errors';
import { sessionRef } from '../../common/sessions/session-signals';
import { type Describe, findSession, lazyFirstRun, oneOffIds } from '../../common/sessions/lazy-sessions';
import { ServerTiming, timed } from '../middleware/server-timing';
import type { WorkflowStarter } from '../start-thread/starter';
import { reserveUpdate } from '../../../workflows/definitions';
import { checkDeploymentLimits } from '../schemas/deployment-limits';

/** What a run request brings besides its body. */
export interface SubmitExtras {
  /** The request's callback as callbackOf checked it. */
  callback?: CallbackConfig;
  /** Called once the task's id and session are known, before it starts (not for a repeated Idempotency-Key). */
  beforeStart?: (taskId: string, session: string) => Promise<{ schedules?: ScheduledSummary[] }>;
  /** Undoes what beforeStart set up, when the submit fails after it. */
  undo?: () => Promise<void>;
}

export interface Submitted {
  taskId: string;
  session: string;
  createdAt: string;
  /** The Idempotency-Key matched an earlier request: nothing new was started. */
  repeated: boolean;
  /** multitask "steer": the message went into the session's running run, this task; nothing new was started. */
  steered?: true;
}

/** One request on its way to a started task: what the steps of TaskSubmitter.submit share. */
interface Submission {
  account: Account;
  req: RunRequest;
  /** The ?session the request named; undefined when it opens a new one. */
  session: string | undefined;
  sessionId: string;
  taskId: string;
  requestHash: string;
  idempotencyKey: string | undefined;
  timing: ServerTiming | undefined;
  createdAt: string;
  input: TaskInput;
  meta: ReturnType<typeof taskStartMeta>;
}

export class TaskSubmitter {
  constructor(
    private readonly client: Client,
    private readonly connection: Connection,
    private readonly cache: StatusCache,
    private readonly config: Config,
    private readonly starter: WorkflowStarter,
  ) {}

  private deadline<T>(ms: number, fn: () => Promise<T>, notFound?: string): Promise<T> {
    return temporalCall(() => this.connection.withDeadline(Date.now() + ms, fn), notFound);
  }

  async submit(
    account: Account,
    req: RunRequest,
    session: string | undefined,
    idempotencyKey: string | undefined,
    timing: ServerTiming | undefined,
    extras: SubmitExtras,
  ): Promise<Submitted> {
    checkDeploymentLimits(this.config, req);
    const requestHash = createHash('sha256').update(JSON.stringify(req)).digest('hex').slice(0, 32);
    // A run that names no session (and no key) begins a session opened only if it is used again (lazy-sessions.ts).
    const oneOff = !session && !idempotencyKey ? oneOffIds() : undefined;
    const taskId = idempotencyKey
      ? `task_${createHash('sha256').update(`${account.account}\u0000${idempotencyKey}`).digest('hex').slice(0, 32)}`
      : (oneOff?.taskId ?? `task_${randomUUID().replace(/-/g, '')}`);
    if (idempotencyKey) {
      const earlier = await this.existing(account, taskId, requestHash);
      if (earlier) return earlier;
    }
    const sessionId = session ?? oneOff?.session ?? `sess_${randomUUID().replace(/-/g, '')}`;
    if (session) await this.requireSession(account, session);
    const createdAt = new Date().toISOString();
    // What the request sets up before its run starts (its schedules), undone if the start fails.
    const prepared = extras.beforeStart ? await extras.beforeStart(taskId, sessionId) : undefined;
    const input = taskInput(this.config, req, {
      taskId,
      account: account.account,
      maxRunning: account.maxRunning,
      session: sessionId,
      createdAt,
      callback: extras.callback,
      // The run holds the turn of its new session, which is not opened (lazySession).
      ownsTurn: !!oneOff,
      lazySession: !!oneOff,
      schedules: prepared?.schedules,
    });
    const meta = taskStartMeta(input, { requestHash });
    const s: Submission = {
      account,
      req,
      session,
      sessionId,
      taskId,
      requestHash,
      idempotencyKey,
      timing,
      createdAt,
      input,
      meta,
    };
    if (session || idempotencyKey) {
      const earlier = await this.startInTurn(s);
      if (earlier) return earlier;
    } else await this.startAlone(s);
    return { taskId, session: sessionId, createdAt, repeated: false };
  }

  /** The task caches nothing until it runs: status reads of a queued task stay one GET. */
  private cacheQueued(s: Submission): Promise<boolean> {
    return timed(s.timing, 'redis', () => this.cache.put(initialView(s.input)));
  }

  /** Starts the task's workflow; an earlier request's task when a keyed repeat raced this one to the start. */
  private async startTask(s: Submission): Promise<Submitted | undefined> {
    const { account, taskId, requestHash, idempotencyKey, timing, input, meta } = s;
    try {
      await timed(timing, 'temporal-start', () =>
        temporalCall(() =>
          this.starter.start({
            workflowType: 'agentTask',
            deadlineMs: 5000,
            options: {
              workflowId: taskId,
              taskQueue: this.config.TEMPORAL_TASK_QUEUE,
              args: [input],
              ...meta,
              workflowIdReusePolicy: 'REJECT_DUPLICATE',
            },
          }),
        ),
      );
    } catch (err) {
      if (!isAlreadyStarted(err)) throw err;
      // A new random id can only have been started by this request: an attempt whose answer was
      // lost (the engine restarted mid-call) and that the client tried again. That is our start.
      if (!idempotencyKey) return undefined;
      const earlier = await this.existing(account, taskId, requestHash);
      if (earlier) return earlier;
      throw err;
    }
    return undefined;
  }

  /** An existing session, or a keyed request: the run starts, then takes its place in the session's turn order. */
  private async startInTurn(s: Submission): Promise<Submitted | undefined> {
    const { account, req, session, sessionId, taskId, timing } = s;
    // multitask: "reject" holds the session before anything starts: a refused request leaves no task.
    if (session && req.multitask === 'reject')
      await timed(timing, 'temporal-session', () => this.reserveSession(account, sessionId, taskId));
    // An existing session: the run must be started before it takes its place in the turn order.
    // (A keyed request too: a repeat racing it must not enqueue its task in a second session.)
    const earlier = await this.startTask(s);
    if (earlier) return earlier;
    await timed(timing, 'temporal-session', () =>
      temporalCall(() =>
        this.starter.enqueue({
          // A keyed request that named no session opens its own, as an unkeyed one does.
          ref: sessionRef(this.config, account.account, sessionId, { oneOff: !session }),
          taskId,
          deadlineMs: 10_000,
        }),
      ),
    );
    await this.cacheQueued(s);
    return undefined;
  }

  private async startAlone(s: Submission): Promise<void> {
    const { taskId } = s;
    // The run's session is not opened (lazy-sessions.ts): the start and the queued status in the cache
    // go together (the cache never moves a task backwards, so a worker that got there first keeps its status).
    const started = this.startTask(s);
    const cached = this.cacheQueued(s);
    await Promise.all([started.catch(() => cached.then(() => this.cache.forget(taskId))), cached]);
    await started; // its failure, if any, once the cache is clean again
  }

  /** Holds an open session for this run, or refuses (409) when another run is active or queued. A closed session is not busy. */
  private async reserveSession(account: Account, session: string, taskId: string): Promise<void> {
    const handle = this.client.workflow.getHandle(sessionWorkflowId(account.account, session));
    try {
      await this.deadline(10_000, () => handle.executeUpdate(reserveUpdate, { args: [{ taskId, reject: true }] }));
    } catch (err) {
      // No open session (closed when idle): nothing to be busy with, unless it was never opened and its first run is going.
      if (err instanceof NotFoundError) {
        if ((await this.lazyRun(account, session))?.running) throw busy(session);
        return;
      }
      if ((err as Error).name !== 'WorkflowUpdateFailedError') throw err;
      throw busy(session);
    }
  }

  private async existing(account: Account, taskId: string, requestHash: string): Promise<Submitted | undefined> {
    let desc;
    try {
      desc = await temporalCall(() => this.starter.describe({ workflowId: taskId, deadlineMs: 5000 }));
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
    const memo = desc.memo as Record<string, string>;
    if (memo.account !== account.account) return undefined;
    if (memo.requestHash !== requestHash) {
      throw new IdempotencyMismatchError('this Idempotency-Key was used with a different request body', {
        task_id: taskId,
      });
    }
    return { taskId, session: memo.session, createdAt: memo.createdAt ?? desc.startTime, repeated: true };
  }

  /** A 404 (NotFoundError) when the account has no such session: no workflow of it, nor a first run of one not opened yet. */
  async requireSession(account: Account, session: string): Promise<void> {
    const found = await findSession(this.describe, account.account, session);
    if (!found) throw new NotFoundError(`session ${session} not found`);
  }

  private lazyRun(account: Account, session: string) {
    return lazyFirstRun(this.describe, account.account, session);
  }

  /** A describe through the start thread (off the event loop); undefined when Temporal has no such workflow. */
  private readonly describe: Describe = async (workflowId) => {
    try {
      return await temporalCall(() => this.starter.describe({ workflowId, deadlineMs: 5000 }));
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  };
}

function busy(session: string): ConflictError {
  return new ConflictError('the session is busy with another run (multitask: reject)', { session });
}

function isAlreadyStarted(err: unknown): boolean {
  return (err as Error | undefined)?.name === 'WorkflowExecutionAlreadyStartedError';
}
