// GET /tasks: the account's tasks newest first, through Temporal visibility
// (TaskAccount / TaskStatus / TaskSession search attributes), cursor-paged
// (visibility.ts).
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { isFinished, SEARCH_ATTRIBUTES } from '../../../workflows/types';
import type { TaskStatus } from '../../../workflows/types';
import { cursorOf, decodeMemo, isoTime, keyword, listRuns, quote, tokenOf } from './visibility';

export interface ListQuery {
  status?: TaskStatus;
  session?: string;
  /** Only the tasks this schedule started. */
  schedule?: string;
  limit: number;
  cursor?: string;
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

export async function listTasks(client: Client, namespace: string, account: string, q: ListQuery): Promise<ListPage> {
  const clauses = [`${SEARCH_ATTRIBUTES.account} = ${quote(account)}`, `WorkflowType = 'agentTask'`];
  if (q.status) clauses.push(`${SEARCH_ATTRIBUTES.status} = ${quote(q.status)}`);
  if (q.session) clauses.push(`${SEARCH_ATTRIBUTES.session} = ${quote(q.session)}`);
  if (q.schedule) clauses.push(`${SEARCH_ATTRIBUTES.schedule} = ${quote(q.schedule)}`);
  const page = await listRuns(client, namespace, clauses.join(' AND '), q.limit, tokenOf(q.cursor));
  const tasks = await Promise.all(
    page.runs.map(async (x) => {
      const memo = x.memo?.fields ?? {};
      const [session, createdAt, preview] = await Promise.all(
        [memo.session, memo.createdAt, memo.preview].map((p) => decodeMemo(client, p)),
      );
      // A run closed from outside (terminated, timed out) never updated its TaskStatus: its execution status decides.
      const listed = (keyword(x, SEARCH_ATTRIBUTES.status) as TaskStatus | undefined) ?? 'queued';
      const closedAs = CLOSED_STATUS[x.status ?? 0];
      const status = closedAs && !isFinished(listed) ? closedAs : listed;
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
