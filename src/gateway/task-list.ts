// GET /tasks: the account's tasks newest first, through Temporal visibility
// (TaskAccount / TaskStatus / TaskSession search attributes), cursor-paged.
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Payload } from '@temporalio/common';
import { SEARCH_ATTRIBUTES } from '../../workflows/types';
import type { TaskStatus } from '../../workflows/types';

export interface ListQuery {
  status?: TaskStatus;
  session?: string;
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

const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function decode(p: { data?: Uint8Array | null } | undefined): unknown {
  if (!p?.data?.length) return undefined;
  try {
    return JSON.parse(Buffer.from(p.data).toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * A memo field as the workflow set it. Memos pass through the client's payload
 * codecs (encrypted at rest), search attributes do not: this raw list call
 * leaves the decoding to us.
 */
async function decodeMemo(client: Client, p: Payload | undefined): Promise<unknown> {
  if (!p) return undefined;
  let payloads = [p];
  try {
    // Codecs decode in the reverse of their encoding order.
    for (const codec of [...client.options.loadedDataConverter.payloadCodecs].reverse()) payloads = await codec.decode(payloads);
  } catch {
    return undefined; // unreadable here (e.g. a retired key): the fallbacks below apply
  }
  return decode(payloads[0]);
}

const ExecutionStatus = temporal.api.enums.v1.WorkflowExecutionStatus;
const CLOSED_STATUS: Partial<Record<number, TaskStatus>> = {
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED]: 'completed',
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_FAILED]: 'failed',
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED]: 'failed',
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_TIMED_OUT]: 'failed',
  [ExecutionStatus.WORKFLOW_EXECUTION_STATUS_CANCELED]: 'cancelled',
};
const FINAL = new Set<TaskStatus>(['completed', 'failed', 'cancelled']);

const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);

export async function listTasks(client: Client, namespace: string, account: string, q: ListQuery): Promise<ListPage> {
  const clauses = [`${SEARCH_ATTRIBUTES.account} = ${quote(account)}`, `WorkflowType = 'agentTask'`];
  if (q.status) clauses.push(`${SEARCH_ATTRIBUTES.status} = ${quote(q.status)}`);
  if (q.session) clauses.push(`${SEARCH_ATTRIBUTES.session} = ${quote(q.session)}`);
  const where = clauses.join(' AND ');
  const request = (query: string) =>
    client.workflowService.listWorkflowExecutions({ namespace, query, pageSize: q.limit, nextPageToken: q.cursor ? Buffer.from(q.cursor, 'base64url') : undefined });
  let res;
  try {
    res = await request(`${where} ORDER BY StartTime DESC`);
  } catch (err) {
    // SQL visibility stores (a real Temporal on PostgreSQL/MySQL/SQLite) refuse
    // ORDER BY; their own order is open runs first, then most recently closed.
    if ((err as { code?: number }).code !== 3) throw err;
    res = await request(where);
  }
  const tasks = await Promise.all(
    (res.executions ?? []).map(async (x) => {
      const memo = x.memo?.fields ?? {};
      const sa = x.searchAttributes?.indexedFields ?? {};
      const started = x.startTime ? new Date(Number(x.startTime.seconds) * 1000).toISOString() : '';
      const [session, createdAt, preview] = await Promise.all([memo.session, memo.createdAt, memo.preview].map((p) => decodeMemo(client, p ?? undefined)));
      // A run closed from outside (terminated, timed out) never updated its TaskStatus: its execution status decides.
      const listed = (first(decode(sa[SEARCH_ATTRIBUTES.status])) as TaskStatus) ?? 'queued';
      const closedAs = CLOSED_STATUS[x.status ?? 0];
      const status = closedAs && !FINAL.has(listed) ? closedAs : listed;
      return {
        task_id: x.execution?.workflowId ?? '',
        session: String(session ?? first(decode(sa[SEARCH_ATTRIBUTES.session])) ?? ''),
        status,
        created_at: String(createdAt ?? started),
        completed_at: x.closeTime ? new Date(Number(x.closeTime.seconds) * 1000).toISOString() : null,
        preview: String(preview ?? ''),
      };
    }),
  );
  const token = res.nextPageToken?.length ? Buffer.from(res.nextPageToken).toString('base64url') : null;
  return { tasks, next_cursor: token };
}
