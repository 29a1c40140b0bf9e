// The gateway's operations on tasks and sessions, over Temporal (the source of
// truth) with Redis as a cache of status and results.
import type { Client, Connection, WorkflowHandle } from '@temporalio/client';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../../common/config';
import { ConflictError, DependencyUnavailableError, NotFoundError, ServiceError } from '../../common/errors';
import type { StatusCache } from '../../common/relay/status-cache';
import type { Account } from '../../common/accounts/registry';
import { answerExpanded } from '../../../workflows/run-events';
import { completedRunResult, failureDetails } from './run-record';
import { StatusRevalidator } from './status-revalidation';
import type { BlockEvent, TaskResult, TaskView, ThreadMessage } from '../../../workflows/types';
import { sessionWorkflowId } from '../../../workflows/types';
import type { RunRequest } from '../../common/contracts/run-request';
import { isDeadlineExceeded, mapTemporalError, temporalCall } from './temporal-errors';
import { viewFromDescription, isFinished, stillRunning } from './task-views';
import { runState } from './closed-run';
import { RetryFields, retryFields } from './run-retries';
import { listTasks, ListQuery, ListPage } from './task-list';
import { openSession, SessionRef, sessionRef, signalSession } from '../../common/sessions/session-signals';
import {
  describeWith,
  findSession,
  firstRunId,
  handoverOf,
  type LazyFirstRun,
} from '../../common/sessions/lazy-sessions';
import type { ServerTiming } from '../middleware/server-timing';
import { inProcessStarter, WorkflowStarter } from '../start-thread/starter';
import { TaskSubmitter, type SubmitExtras, type Submitted } from './task-submit';
import {
  busyQuery,
  interruptSignal,
  clearSignal,
  messagesQuery,
  messageUpdate,
  patchMetadataSignal,
  statusQuery,
} from '../../../workflows/definitions';

export type { SubmitExtras, Submitted } from './task-submit';

export type ResultBody =
  | (Omit<TaskResult, 'usage'> & { status: 'completed' })
  | {
      task_id: string;
      session: string;
      status: 'failed' | 'cancelled';
      error: { type: string; message: string } | null;
      /** What a run that reached a cap (max_steps, max_cost) had produced; null otherwise. */
      output: string | null;
      events: BlockEvent[];
      cost: string | null;
    };

/** Longest a messages read waits for a finished run's exchange to reach its session. */
/** How long a status read waits for Temporal to record the close of a run that has cached its end. */
const FINISHING_WAIT_MS = 2000;
const TURN_SETTLE_MS = 2000;
const TURN_SETTLE_POLL_MS = 20;

export class TaskService {
  private readonly revalidator = new StatusRevalidator();
  private readonly submitter: TaskSubmitter;

  constructor(
    private readonly client: Client,
    private readonly connection: Connection,
    private readonly cache: StatusCache,
    private readonly config: Config,
    private readonly logger: Logger,
    /** Makes the submit path's Temporal calls (starts, a continuation's session check and enqueue, an idempotent repeat's lookup). Default: on the calling thread (the gateway process passes relayAwareStarter). */
    starter: WorkflowStarter = inProcessStarter(client, connection),
  ) {
    this.submitter = new TaskSubmitter(client, connection, cache, config, starter);
  }

  private deadline<T>(ms: number, fn: () => Promise<T>, notFound?: string): Promise<T> {
    return temporalCall(() => this.connection.withDeadline(Date.now() + ms, fn), notFound);
  }

  /** `timing`, when given, gets the Temporal and Redis calls of the submit (Server-Timing). */
  async submit(
    account: Account,
    req: RunRequest,
    session: string | undefined,
    idempotencyKey?: string,
    timing?: ServerTiming,
    extras: SubmitExtras = {},
  ): Promise<Submitted> {
    try {
      return await this.submitter.submit(account, req, session, idempotencyKey, timing, extras);
    } catch (err) {
      await extras
        .undo?.()
        .catch((e) => this.logger.warn({ err: (e as Error).message }, 'could not undo what a failed submit set up'));
      throw err;
    }
  }

  private sessionRef(account: Account, session: string): SessionRef {
    return sessionRef(this.config, account.account, session);
  }

  /** Opens the session if it has no open run (session-signals.ts openSession). */
  openSession(account: Account, session: string): Promise<void> {
    return this.deadline(10_000, () => openSession(this.client, this.sessionRef(account, session)));
  }

  /**
   * The task's status; with `retries`, a running task's view also says what it is retrying. `fast`
   * (GET /tasks/{id}): a status Temporal has not recorded as final is answered from the cache at
   * once, as the run cached it (its own end included, cached with its terminal event a moment
   * before Temporal records the close), and confirmed in the background (status-revalidation.ts);
   * otherwise it is confirmed with Temporal first.
   */
  async view(
    account: Account,
    taskId: string,
    opts: { retries?: boolean; fast?: boolean } = {},
  ): Promise<TaskView & Partial<RetryFields>> {
    try {
      const cached = await this.cache.getRecorded(taskId);
      if (cached) {
        if (cached.view.account !== account.account) throw new NotFoundError('task not found');
        // A finished status read from Temporal's record is final; any other is checked with Temporal:
        // a terminated run never updates it, and a run's own end is cached just before Temporal records it.
        if (cached.recorded) return cached.view;
        if (opts.fast) {
          this.revalidator.touch(cached.view, (v) => this.confirm(v, opts.retries === true));
          const retrying = opts.retries && !isFinished(cached.view.status);
          return retrying ? { ...cached.view, ...this.revalidator.retries(taskId) } : cached.view;
        }
        return await this.confirm(cached.view, opts.retries === true);
      }
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      // Redis is down: Temporal still knows.
    }
    return this.viewFromTemporal(account, taskId, opts.retries === true);
  }

  private async viewFromTemporal(
    account: Account,
    taskId: string,
    retries: boolean,
  ): Promise<TaskView & Partial<RetryFields>> {
    const handle = this.client.workflow.getHandle(taskId);
    const desc = await this.deadline(5000, () => handle.describe());
    if ((desc.memo as Record<string, unknown> | undefined)?.account !== account.account)
      throw new NotFoundError('task not found');
    let view: TaskView;
    try {
      view = await this.deadline(3000, () => handle.query(statusQuery));
    } catch {
      view = viewFromDescription(desc);
    }
    const closed = desc.status.name !== 'RUNNING';
    // The run's state may already say how it ends while Temporal has not recorded the close yet.
    view = closed ? { ...view, ...viewFromDescription(desc, view) } : stillRunning(view);
    await this.cache.put(view, { recorded: closed });
    return retries && !closed ? { ...view, ...(await retryFields(this.client, desc)) } : view;
  }

  /**
   * The cached status as Temporal has it: an unfinished one unless the run has
   * closed (terminated, timed out, vanished); a finished one once Temporal has
   * recorded the close (the run caches its end a moment before: wait for it briefly).
   */
  private async confirm(cached: TaskView, retries: boolean): Promise<TaskView & Partial<RetryFields>> {
    let state = await runState(this.client, this.connection, cached.task_id, async () => cached);
    if ('running' in state && isFinished(cached.status)) {
      await this.waitForClose(cached.task_id, FINISHING_WAIT_MS).catch(() => undefined);
      state = await runState(this.client, this.connection, cached.task_id, async () => cached);
    }
    if ('running' in state) {
      const view = stillRunning(cached);
      return retries ? { ...view, ...(await retryFields(this.client, state.running)) } : view;
    }
    if ('closed' in state) return this.cacheFinal(state.closed);
    // Temporal cannot be asked: an unfinished status is the best answer there is; a finished one is not yet true.
    if (!isFinished(cached.status)) return cached;
    throw new DependencyUnavailableError('temporal', 'Temporal is unavailable; retry shortly', 1);
  }

  private async cacheFinal(view: TaskView): Promise<TaskView> {
    await this.cache.put(view, { recorded: true });
    return view;
  }

  async result(account: Account, taskId: string, waitSeconds: number): Promise<ResultBody> {
    let view = await this.view(account, taskId);
    if (!isFinished(view.status) && waitSeconds > 0) {
      await this.waitForClose(taskId, waitSeconds * 1000);
      view = await this.fresh(account, taskId);
    }
    if (!isFinished(view.status))
      throw new ConflictError(`the task is ${view.status}; its result is not ready`, { status: view.status }, true);
    const cached = await this.cache.getResult<ResultBody>(taskId).catch(() => undefined);
    if (cached) return cached;
    const body = view.status === 'completed' ? await this.completedResult(taskId) : await this.unsuccessfulResult(view);
    await this.cache.putResult(taskId, body);
    return body;
  }

  private async completedResult(taskId: string): Promise<ResultBody> {
    const { usage: _usage, ...body } = await this.deadline(10_000, () => completedRunResult(this.client, taskId));
    return body;
  }

  /** A failed or cancelled run's result: its error, and what it produced when it stopped at a cap. */
  private async unsuccessfulResult(view: TaskView): Promise<ResultBody> {
    const status = view.status as 'failed' | 'cancelled';
    const body: ResultBody = {
      task_id: view.task_id,
      session: view.session,
      status,
      error: view.error,
      output: null,
      events: [],
      cost: null,
    };
    if (status !== 'failed') return body;
    try {
      await this.deadline(10_000, () => this.client.workflow.getHandle(view.task_id).result());
    } catch (err) {
      const partial = failureDetails(err);
      if (partial)
        return { ...body, ...answerExpanded({ output: partial.output, events: partial.events }), cost: partial.cost };
    }
    return body;
  }

  /** Sends a message into a running task (a Temporal update): the agent reads it before its next model turn. */
  /**
   * multitask "steer": the message into the session's running run, which answers it; undefined
   * when the session has no run running (or it is finishing, or the session is closed or unknown):
   * the request then runs as a queued one would. An Idempotency-Key makes a repeat no second message.
   */
  async steer(account: Account, session: string, message: string, key?: string): Promise<Submitted | undefined> {
    const active = await this.runningIn(account, session);
    if (!active) return undefined;
    try {
      await this.sendMessage(account, active, message, key && `steer:${key}`);
    } catch (err) {
      if (err instanceof ConflictError || err instanceof NotFoundError) return undefined;
      throw err;
    }
    const view = await this.view(account, active);
    return { taskId: active, session, createdAt: view.created_at, repeated: false, steered: true };
  }

  /** The run holding the session's turn; undefined when none does (idle, closed, unknown). */
  private async runningIn(account: Account, session: string): Promise<string | undefined> {
    const lazy = await this.unopened(account, session).catch(() => undefined);
    if (lazy !== undefined) return lazy?.running ? lazy.taskId : undefined;
    const h = this.client.workflow.getHandle(sessionWorkflowId(account.account, session));
    const busy = await this.deadline(5000, () => h.query(busyQuery)).catch(() => undefined);
    return busy?.active ?? undefined;
  }

  /**
   * For a session made lazily (lazy-sessions.ts): its first run while the session has no workflow,
   * null when there is no such session (or it was deleted). Undefined: it has a workflow, or is no
   * lazily made one.
   */
  private async unopened(account: Account, session: string): Promise<LazyFirstRun | null | undefined> {
    if (!firstRunId(session)) return undefined;
    const found = await this.deadline(5000, () => findSession(describeWith(this.client), account.account, session));
    if (!found) return null;
    return found.kind === 'lazy' ? found.first : undefined;
  }

  /**
   * multitask "interrupt": the session's running run is told it is interrupted (it then keeps its
   * exchange so far in the thread, marked) and cancelled; the request's own run then queues in the
   * session as usual, first in line unless other runs were already queued. Nothing to interrupt
   * (idle, closed, unknown, or the run finishing): nothing is done.
   */
  async interrupt(account: Account, session: string): Promise<void> {
    const active = await this.runningIn(account, session);
    if (!active) return;
    const run = this.client.workflow.getHandle(active);
    try {
      await this.deadline(5000, () => run.signal(interruptSignal));
      await this.deadline(5000, () => run.cancel());
    } catch (err) {
      // Closed meanwhile: it finished on its own, and the new run simply follows it.
      if (!(err instanceof NotFoundError) && !(err instanceof WorkflowNotFoundError)) throw err;
    }
  }

  async sendMessage(
    account: Account,
    taskId: string,
    message: string,
    updateId?: string,
  ): Promise<{ task_id: string; status: TaskView['status']; pending: number }> {
    const view = await this.view(account, taskId);
    if (isFinished(view.status))
      throw new ConflictError(`the task is already ${view.status}; it takes no more messages`, { status: view.status });
    try {
      const update = () =>
        this.client.workflow
          .getHandle(taskId)
          .executeUpdate(messageUpdate, { args: [{ message }], ...(updateId && { updateId }) });
      const r = await this.connection.withDeadline(Date.now() + 10_000, update);
      return { task_id: taskId, status: view.status, pending: r.pending };
    } catch (err) {
      // Refused by the run (it is ending), or the run closed meanwhile: the task takes no more messages.
      const name = (err as Error).name;
      if (name !== 'WorkflowUpdateFailedError' && !(err instanceof WorkflowNotFoundError)) throw mapTemporalError(err);
      const now = await this.fresh(account, taskId).catch(() => view);
      throw new ConflictError(
        `the task is ${isFinished(now.status) ? `already ${now.status}` : 'finishing'}; it takes no more messages`,
        { status: now.status },
      );
    }
  }

  /** Status straight from Temporal (the cache may lag a just-finished task). */
  private async fresh(account: Account, taskId: string): Promise<TaskView> {
    const desc = await this.deadline(5000, () => this.client.workflow.getHandle(taskId).describe());
    const cached = await this.cache.get(taskId).catch(() => undefined);
    if (desc.status.name === 'RUNNING') return cached ? stillRunning(cached) : this.view(account, taskId);
    const view = { ...(cached ?? viewFromDescription(desc)), ...viewFromDescription(desc, cached) };
    await this.cache.put(view, { recorded: true });
    return view;
  }

  /**
   * Waits up to `ms` for the run to close. The long polls carry the wait's
   * deadline: a bare result() raced with a timer would poll on, one loop per
   * `?wait=` request, until the task ended (hours, for a long agent).
   */
  async waitForClose(taskId: string, ms: number): Promise<void> {
    try {
      await this.connection.withDeadline(Date.now() + ms, () => this.client.workflow.getHandle(taskId).result());
    } catch (err) {
      if (isDeadlineExceeded(err)) return; // waited the whole time; the caller reads the status
      if (err instanceof WorkflowFailedError || (err as Error).name === 'WorkflowFailedError') return;
      throw mapTemporalError(err);
    }
  }

  async list(account: Account, q: ListQuery): Promise<ListPage> {
    return temporalCall(() => listTasks(this.client, this.config.TEMPORAL_NAMESPACE, account.account, q));
  }

  async cancel(account: Account, taskId: string): Promise<TaskView> {
    const view = await this.view(account, taskId);
    if (isFinished(view.status)) throw new ConflictError(`the task is already ${view.status}`, { status: view.status });
    await this.deadline(5000, () => this.client.workflow.getHandle(taskId).cancel());
    return view;
  }

  async patch(account: Account, taskId: string, metadata: Record<string, unknown>): Promise<TaskView> {
    const view = await this.view(account, taskId);
    if (isFinished(view.status))
      throw new ConflictError(`the task is already ${view.status}; its metadata is final`, { status: view.status });
    await this.deadline(5000, () => this.client.workflow.getHandle(taskId).signal(patchMetadataSignal, metadata));
    const merge = (v: TaskView) => ({ ...v, metadata: { ...v.metadata, ...metadata } });
    return (await this.cache.update(view, merge)) ?? merge(view);
  }

  async messages(account: Account, session: string): Promise<ThreadMessage[]> {
    const notFound = `session ${session} not found`;
    const lazy = await this.unopened(account, session);
    if (lazy === null) throw new NotFoundError(notFound);
    // Never opened: its thread is what its first run handed over (nothing while it is going).
    if (lazy) return (await this.deadline(5000, () => handoverOf(this.client, lazy.taskId)))?.messages ?? [];
    const h = this.client.workflow.getHandle(sessionWorkflowId(account.account, session));
    await this.settleFinishedTurn(h, notFound);
    return this.deadline(5000, () => h.query(messagesQuery), notFound);
  }

  /**
   * Read your writes: a run's last model turn publishes its end (agent_completed, the cached
   * status) before the run tells its session (turnDone), so a client that reads or clears the
   * thread as soon as its stream ended could miss that exchange, or see it come back after the
   * clear. While the session's active run has already finished, wait for the session to take
   * its turn back (a few ms), within a bound.
   */
  private async settleFinishedTurn(h: WorkflowHandle, notFound: string, queryDeadlineMs = 5000): Promise<void> {
    const until = Date.now() + TURN_SETTLE_MS;
    for (;;) {
      const { active } = await this.deadline(queryDeadlineMs, () => h.query(busyQuery), notFound);
      if (!active || Date.now() >= until) return;
      const view = await this.cache.get(active).catch(() => undefined);
      if (!view || !isFinished(view.status)) return;
      await new Promise((resolve) => setTimeout(resolve, TURN_SETTLE_POLL_MS));
    }
  }

  async clearMessages(account: Account, session: string): Promise<void> {
    await this.submitter.requireSession(account, session);
    // Best effort: a query needs a worker, a clear does not; with none to answer, clear as before.
    await this.settleFinishedTurn(
      this.client.workflow.getHandle(sessionWorkflowId(account.account, session)),
      `session ${session} not found`,
      1000,
    ).catch(() => undefined);
    await this.deadline(10_000, () => signalSession(this.client, this.sessionRef(account, session), clearSignal, []));
  }
}
