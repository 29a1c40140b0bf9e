// client.tasks: the tasks API (GET/PATCH /tasks/{id}, its result, cancel,
// messages and events, its approval gates, and the cursor-paged list).
import type { HttpCore, RequestOptions } from './http';
import { EventStream, type StreamOptions } from './event-stream';
import type {
  ApprovalDecision,
  ApprovalDecisionBody,
  TaskApprovals,
  RewindAnswer,
  RewindBody,
  CancelAccepted,
  DeliveryList,
  ListTasksQuery,
  TaskList,
  TaskListItem,
  TaskMessageAccepted,
  TaskResult,
  TaskView,
  UpdateTaskBody,
} from './types';
import { eachItem } from './paging';

const taskPath = (id: string, rest = '') => `/tasks/${encodeURIComponent(id)}${rest}`;

export interface ResultOptions extends RequestOptions {
  /** Seconds the service may hold the request until the task finishes (0..60). Without it a running task is a 409. */
  wait?: number;
}

export interface EventsOptions extends StreamOptions {
  /** Only events after this seq (as Last-Event-ID); default: from the first. */
  after?: number;
}

export class Tasks {
  constructor(private readonly core: HttpCore) {}

  get(id: string, opts: RequestOptions = {}): Promise<TaskView> {
    return this.core.json('GET', taskPath(id), opts);
  }

  /** One page, newest first; pass `next_cursor` back as `cursor` for the next. */
  list(query: ListTasksQuery = {}, opts: RequestOptions = {}): Promise<TaskList> {
    return this.core.json('GET', '/tasks', { ...opts, query: { ...query } });
  }

  /** Every task of the query, newest first, fetching pages as the iteration goes. */
  listAll(query: Omit<ListTasksQuery, 'cursor'> = {}, opts: RequestOptions = {}): AsyncGenerator<TaskListItem> {
    return eachItem(async (cursor) => {
      const page = await this.list({ ...query, cursor }, opts);
      return { items: page.tasks, next_cursor: page.next_cursor };
    });
  }

  /** The result once the task finished; a ConflictError (with the status in details) before. */
  result(id: string, opts: ResultOptions = {}): Promise<TaskResult> {
    const { wait, ...rest } = opts;
    // The service may hold the request `wait` seconds: the timeout must not cut it first.
    const timeoutMs = rest.timeoutMs ?? (wait ? this.core.timeoutMs + wait * 1000 : undefined);
    return this.core.json('GET', taskPath(id, '/result'), { ...rest, timeoutMs, query: { wait } });
  }

  /** Requests cancellation (repeat-safe while it runs); a ConflictError once finished. */
  cancel(id: string, opts: RequestOptions = {}): Promise<CancelAccepted> {
    return this.core.json('POST', taskPath(id, '/cancel'), opts);
  }

  /** Merges `metadata` into the task's metadata. */
  update(id: string, body: UpdateTaskBody, opts: RequestOptions = {}): Promise<TaskView> {
    return this.core.json('PATCH', taskPath(id), { ...opts, body });
  }

  /** Sends a message into the running task; the agent reads it before its next model turn. */
  messages(id: string, message: string, opts: RequestOptions = {}): Promise<TaskMessageAccepted> {
    return this.core.json('POST', taskPath(id, '/messages'), { ...opts, body: { message } });
  }

  /** The task's tool calls that wait for a decision (require_approval), and the decisions made. */
  approvals(id: string, opts: RequestOptions = {}): Promise<TaskApprovals> {
    return this.core.json('GET', taskPath(id, '/approvals'), opts);
  }

  /**
   * Decides a gated call: approve (with `input`, the arguments it runs with instead of the
   * model's) or deny (with a `reason` the model reads). The same decision again answers the first;
   * another one is a ConflictError.
   */
  decide(
    id: string,
    toolCallId: string,
    body: ApprovalDecisionBody,
    opts: RequestOptions = {},
  ): Promise<ApprovalDecision> {
    return this.core.json('POST', taskPath(id, `/approvals/${encodeURIComponent(toolCallId)}`), { ...opts, body });
  }

  approve(id: string, toolCallId: string, input?: unknown, opts: RequestOptions = {}): Promise<ApprovalDecision> {
    return this.decide(id, toolCallId, { decision: 'approve', ...(input !== undefined && { input }) }, opts);
  }

  deny(id: string, toolCallId: string, reason?: string, opts: RequestOptions = {}): Promise<ApprovalDecision> {
    return this.decide(id, toolCallId, { decision: 'deny', ...(reason && { reason }) }, opts);
  }

  /**
   * Goes back to just before model turn `step` and runs again from there (with `message` for the
   * model there, added or with `replace` replacing the last user message). The answer lists the
   * calls of the abandoned branch that may have acted, and the seqs of its events (now superseded).
   */
  rewind(id: string, body: RewindBody, opts: RequestOptions = {}): Promise<RewindAnswer> {
    return this.core.json('POST', taskPath(id, '/rewind'), { ...opts, body });
  }

  /** The task's callback deliveries, in order: status, attempts, last answer, next attempt. */
  deliveries(id: string, opts: RequestOptions = {}): Promise<DeliveryList> {
    return this.core.json('GET', taskPath(id, '/deliveries'), opts);
  }

  /** The task's events (all, or after `after`), resuming by itself after a dropped connection. */
  events(id: string, opts: EventsOptions = {}): Promise<EventStream> {
    const { after, ...streamOpts } = opts;
    const headers = after !== undefined ? { 'last-event-id': String(after) } : undefined;
    return EventStream.open(
      this.core,
      { method: 'GET', path: taskPath(id, '/events'), taskId: id, after, headers: { ...headers, ...opts.headers } },
      streamOpts,
    );
  }
}
