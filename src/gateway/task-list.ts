// GET /tasks: the account's tasks newest first, through Temporal visibility
// (TaskAccount / TaskStatus / TaskSession search attributes), cursor-paged.
import type { Client } from '@temporalio/client';
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
  const tasks = (res.executions ?? []).map((x) => {
    const memo = x.memo?.fields ?? {};
    const sa = x.searchAttributes?.indexedFields ?? {};
    const started = x.startTime ? new Date(Number(x.startTime.seconds) * 1000).toISOString() : '';
    return {
      task_id: x.execution?.workflowId ?? '',
      session: String(decode(memo.session) ?? first(decode(sa[SEARCH_ATTRIBUTES.session])) ?? ''),
      status: (first(decode(sa[SEARCH_ATTRIBUTES.status])) as TaskStatus) ?? 'queued',
      created_at: String(decode(memo.createdAt) ?? started),
      completed_at: x.closeTime ? new Date(Number(x.closeTime.seconds) * 1000).toISOString() : null,
      preview: String(decode(memo.preview) ?? ''),
    };
  });
  const token = res.nextPageToken?.length ? Buffer.from(res.nextPageToken).toString('base64url') : null;
  return { tasks, next_cursor: token };
}
