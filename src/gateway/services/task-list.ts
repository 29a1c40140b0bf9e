// GET /tasks: the account's tasks newest first, through Temporal visibility
// (TaskAccount / TaskStatus / TaskSession search attributes), cursor-paged
// (visibility.ts).
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { isFinished, SEARCH_ATTRIBUTES } from '../../../workflows/types';
import type { TaskStatus } from '../../../workflows/types';
import { cursorOf, decodeMemo, isoTime, keyword, listRuns, quote, tokenOf, type ListedRun } from './visibility';

export interface ListQuery {
  status?: TaskStatus;
  session?: string;
  /** Only the tasks this schedule started. */
  schedule?: string;
  limit: number;
  cursor?: string;
  /**
   * The API version reads input_required as running (2026-11-28: api-versions.ts): `running`
   * finds those tasks too.
   */
  inputRequiredIsRunning?: boolean;
}

export interface ListItem {
  task_id: string;
  session: string;
  status: TaskStatus;
  created_at: string;
  completed_at: string | null;
  preview: string;
}

export interface ListPage {
  tasks: ListItem[];
  next_cursor: string | null;
}

const ExecutionStatus = temporal.api.enums.v1.WorkflowExecutionStatus;
const CLOSED_STATUS: Partial<Record<number, TaskStatus>> = {
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED]: 'completed',
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_FAILED]: 'failed',
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED]: 'failed',
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_TIMED_OUT]: 'failed',
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_CANCELED]: 'cancelled',
};

/**
 * The status a listed run shows, as GET /tasks/{id} answers it: a run closed from outside
 * (terminated, timed out) never updated its TaskStatus, so its execution status decides; a run
 * that has set its end (TaskStatus completed, failed, cancelled) is still running until Temporal
 * records the close, a moment later, after the run has cached and delivered its end.
 */
export function shownStatus(listed: TaskStatus, execution: number): TaskStatus {
  if (execution === ExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING) return isFinished(listed) ? 'running' : listed;
  const closedAs = CLOSED_STATUS[execution];
  return closedAs && !isFinished(listed) ? closedAs : listed;
}

/** Temporal's names of the closes that stand for a finished status when the run never set its own (shownStatus). */
const CLOSES_AS: Record<'completed' | 'failed' | 'cancelled', string[]> = {
  completed: ['Completed'],
  failed: ['Failed', 'Terminated', 'TimedOut'],
  cancelled: ['Canceled'],
};

/** The visibility filter that finds the runs shownStatus shows as `status`. */
export function statusClause(status: TaskStatus, inputRequiredIsRunning = false): string {
  const s = SEARCH_ATTRIBUTES.status;
  if (status === 'queued') return `${s} = 'queued' AND ExecutionStatus = 'Running'`;
  if (status === 'input_required') return `${s} = 'input_required' AND ExecutionStatus = 'Running'`;
  if (status === 'running' && inputRequiredIsRunning) return `${s} != 'queued' AND ExecutionStatus = 'Running'`;
  if (status === 'running') return `${s} != 'queued' AND ${s} != 'input_required' AND ExecutionStatus = 'Running'`;
  const others = (Object.keys(CLOSES_AS) as (keyof typeof CLOSES_AS)[]).filter((f) => f !== status);
  const closes = CLOSES_AS[status].map((c) => `'${c}'`).join(', ');
  return (
    `(${s} = '${status}' AND ExecutionStatus != 'Running') OR ` +
    `(ExecutionStatus IN (${closes}) AND ${others.map((f) => `${s} != '${f}'`).join(' AND ')})`
  );
}

/**
 * Which of the page's runs are their task's current run: a rewind (a Temporal reset) leaves the
 * run it reset in visibility beside the new one (completed, failed, or terminated by the reset),
 * and a task is listed once, as its newest run. One query for the closed runs' workflows.
 */
async function currentRuns(client: Client, namespace: string, runs: ListedRun[]): Promise<(r: ListedRun) => boolean> {
  const closed = [...new Set(runs.filter((r) => (r.status ?? 0) !== OPEN).map((r) => r.execution?.workflowId ?? ''))];
  if (!closed.length) return () => true;
  const where = `WorkflowId IN (${closed.map(quote).join(', ')}) AND ExecutionStatus != 'ContinuedAsNew'`;
  const newest = new Map<string, { runId: string; at: number }>();
  for (const r of (await listRuns(client, namespace, where, 1000)).runs) {
    const id = r.execution?.workflowId ?? '';
    const at = Number(r.startTime?.seconds ?? 0) * 1000 + Math.floor((r.startTime?.nanos ?? 0) / 1e6);
    if (!newest.has(id) || at > newest.get(id)!.at) newest.set(id, { runId: r.execution?.runId ?? '', at });
  }
  return (r) => {
    const n = newest.get(r.execution?.workflowId ?? '');
    return !n || n.runId === r.execution?.runId;
  };
}

const OPEN = ExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;

export async function listTasks(client: Client, namespace: string, account: string, q: ListQuery): Promise<ListPage> {
  // A long task continues as new: its earlier runs are not tasks of their own.
  const clauses = [
    `${SEARCH_ATTRIBUTES.account} = ${quote(account)}`,
    `WorkflowType = 'agentTask'`,
    `ExecutionStatus != 'ContinuedAsNew'`,
  ];
  if (q.status) clauses.push(`(${statusClause(q.status, q.inputRequiredIsRunning)})`);
  if (q.session) clauses.push(`${SEARCH_ATTRIBUTES.session} = ${quote(q.session)}`);
  if (q.schedule) clauses.push(`${SEARCH_ATTRIBUTES.schedule} = ${quote(q.schedule)}`);
  const page = await listRuns(client, namespace, clauses.join(' AND '), q.limit, tokenOf(q.cursor));
  const current = await currentRuns(client, namespace, page.runs);
  const tasks = await Promise.all(
    page.runs.filter(current).map(async (x) => {
      const memo = x.memo?.fields ?? {};
      const [session, createdAt, preview] = await Promise.all(
        [memo.session, memo.createdAt, memo.preview].map((p) => decodeMemo(client, p)),
      );
      const listed = (keyword(x, SEARCH_ATTRIBUTES.status) as TaskStatus | undefined) ?? 'queued';
      const status = shownStatus(listed, x.status ?? 0);
      return {
        task_id: x.execution?.workflowId ?? '',
        session: String(session ?? keyword(x, SEARCH_ATTRIBUTES.session) ?? ''),
        status,
        created_at: String(createdAt ?? isoTime(x.startTime) ?? ''),
        completed_at: isoTime(x.closeTime),
        preview: String(preview ?? ''),
      };
    }),
  );
  return { tasks, next_cursor: cursorOf(page.next) };
}
