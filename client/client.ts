// AgentClient: the typed client of the Agent Execution Service. Runs (JSON,
// streamed, background) are methods of the client; the tasks, sessions,
// schedules, datastores and account APIs hang off `client.tasks`,
// `client.sessions`, `client.schedules`, `client.datastores` and
// `client.account`.
import { EventStream, type StreamOptions } from './event-stream';
import { HttpCore, type ClientOptions, type RequestOptions } from './http';
import { Sessions } from './sessions';
import { Account } from './account';
import { Tasks } from './tasks';
import { Schedules } from './schedules';
import { Datastores } from './datastores';
import type { BackgroundRunRequest, ForegroundRunRequest, RunResult, TaskAccepted } from './types';

/** What a run request may carry besides its body. */
export interface RunCallOptions {
  /** Continue this session (`?session=`); without it the service starts a new one and names it in the answer. */
  session?: string;
  /** A repeat with the same key answers the first request's task instead of starting another (1-255 printable ASCII). */
  idempotencyKey?: string;
}

export type RunOptions = RequestOptions & RunCallOptions;
export type StreamRunOptions = StreamOptions & RunCallOptions;

export class AgentClient {
  readonly tasks: Tasks;
  readonly sessions: Sessions;
  readonly schedules: Schedules;
  readonly datastores: Datastores;
  readonly account: Account;
  private readonly core: HttpCore;

  constructor(opts: ClientOptions = {}) {
    this.core = new HttpCore(opts);
    this.tasks = new Tasks(this.core);
    this.sessions = new Sessions(this.core);
    this.schedules = new Schedules(this.core);
    this.datastores = new Datastores(this.core);
    this.account = new Account(this.core);
  }

  get baseUrl(): string {
    return this.core.baseUrl;
  }

  /**
   * Runs the agent and answers once it is done: `{status, output, events, cost}`.
   * A run that failed answers too, with status `failed` and an `error` (the request itself succeeded).
   * With `schedules` in the body, the answer's `schedules` names the schedule each entry became.
   */
  run(body: ForegroundRunRequest, opts: RunOptions = {}): Promise<RunResult> {
    const { session, idempotencyKey, ...rest } = opts;
    return this.core.json('POST', '/', { ...rest, body, query: { session }, idempotencyKey });
  }

  /**
   * Runs the agent and streams its events as they happen. Resolves once the
   * service has accepted the run (a 400 throws here); iterate the result for
   * the events. `streaming` or `streaming_tokens` in the body give token events;
   * otherwise each response is one complete block. A dropped connection is
   * resumed from the last event seen. With `schedules` in the body, an
   * `agent_scheduled` event follows `agent_started`.
   */
  stream(body: ForegroundRunRequest, opts: StreamRunOptions = {}): Promise<EventStream> {
    const { session, idempotencyKey, ...streamOpts } = opts;
    return EventStream.open(
      this.core,
      { method: 'POST', path: '/', body, query: { session }, idempotencyKey, headers: opts.headers },
      streamOpts,
    );
  }

  /** Starts the run in the background: `{task_id, session, status, created_at}` at once (and `schedules` when the body had some). */
  runBackground(body: BackgroundRunRequest, opts: RunOptions = {}): Promise<TaskAccepted> {
    const { session, idempotencyKey, ...rest } = opts;
    return this.core.json('POST', '/', {
      ...rest,
      body: { ...body, background: true },
      query: { session },
      idempotencyKey,
    });
  }
}
