// Tasks by status, counted in Temporal visibility at scrape time (so every
// gateway reports the same, whatever it served): CountWorkflowExecutions over
// agentTask runs by their TaskStatus search attribute, which both engines
// answer. Open statuses count open runs only, and a run closed from outside
// (terminated, timed out: its TaskStatus never reached a final value) counts
// by its execution status, as the task list shows it (task-list.ts). The
// result is kept a few seconds: scrapes from several Prometheus servers, or a
// quick succession of them, cost one round of counts. A count that does not
// answer within its deadline leaves the statuses out of that scrape instead of
// holding it.
import { SEARCH_ATTRIBUTES, TASK_STATUSES, type TaskStatus } from '../../../workflows/types';
import { withTimeout } from '../timeout';

export type TaskCountsByStatus = Record<TaskStatus, number>;

export interface CountResult {
  count: number;
  /** GROUP BY ExecutionStatus: the status name (Running, Completed, ...) and its count. */
  groups: { value: string; count: number }[];
}

/** Runs one CountWorkflowExecutions query. */
export type CountFn = (query: string) => Promise<CountResult>;

const TASKS = `WorkflowType = 'agentTask'`;
const S = SEARCH_ATTRIBUTES.status;

/** One query per status; `strays` finds runs closed from outside with an open TaskStatus. */
export const TASK_COUNT_QUERIES: Record<TaskStatus | 'strays', string> = {
  queued: `${TASKS} AND ExecutionStatus = 'Running' AND ${S} = 'queued'`,
  running: `${TASKS} AND ExecutionStatus = 'Running' AND ${S} = 'running'`,
  input_required: `${TASKS} AND ExecutionStatus = 'Running' AND ${S} = 'input_required'`,
  completed: `${TASKS} AND ${S} = 'completed'`,
  failed: `${TASKS} AND ${S} = 'failed'`,
  cancelled: `${TASKS} AND ${S} = 'cancelled'`,
  strays: `${TASKS} AND ExecutionStatus != 'Running' AND ${S} IN ('queued', 'running', 'input_required') GROUP BY ExecutionStatus`,
};

/** What a run closed from outside counts as (ContinuedAsNew: its next run counts instead). */
const STRAY_STATUS: Record<string, TaskStatus | undefined> = {
  Completed: 'completed',
  Failed: 'failed',
  Terminated: 'failed',
  TimedOut: 'failed',
  Canceled: 'cancelled',
};

/** The counts by status from each query's result. */
export function combineCounts(results: Record<TaskStatus | 'strays', CountResult>): TaskCountsByStatus {
  const out = Object.fromEntries(TASK_STATUSES.map((s) => [s, results[s].count])) as TaskCountsByStatus;
  for (const g of results.strays.groups) {
    const status = STRAY_STATUS[g.value];
    if (status) out[status] += g.count;
  }
  return out;
}

export interface TaskCountsOptions {
  /** How long a count (or a failure to count) is served before asking again, ms. */
  ttlMs?: number;
  /** Longest wait for Temporal's answers, ms. */
  timeoutMs?: number;
  now?: () => number;
}

/** The counts, refreshed at most once per ttl; undefined while Temporal does not answer in time. */
export class TaskCounts {
  private last?: { at: number; value: Promise<TaskCountsByStatus | undefined> };

  constructor(
    private readonly count: CountFn,
    private readonly opts: TaskCountsOptions = {},
  ) {}

  get(): Promise<TaskCountsByStatus | undefined> {
    const now = (this.opts.now ?? Date.now)();
    if (this.last && now - this.last.at < (this.opts.ttlMs ?? 5000)) return this.last.value;
    const value = this.refresh();
    this.last = { at: now, value };
    return value;
  }

  private async refresh(): Promise<TaskCountsByStatus | undefined> {
    const names = Object.keys(TASK_COUNT_QUERIES) as (TaskStatus | 'strays')[];
    try {
      const answers = await withTimeout(
        Promise.all(names.map((n) => this.count(TASK_COUNT_QUERIES[n]))),
        this.opts.timeoutMs ?? 1000,
      );
      return combineCounts(
        Object.fromEntries(names.map((n, i) => [n, answers[i]])) as Record<TaskStatus | 'strays', CountResult>,
      );
    } catch {
      return undefined;
    }
  }
}
