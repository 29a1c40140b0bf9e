// GET /sessions: the account's sessions through Temporal visibility, each once,
// the lazily made ones never opened too (by their first run).
// A session is one workflow id with several runs (it closes when idle and is
// reopened, it continues as new); the listing shows each session at its latest
// run: the runs it skips are those no longer current for their id (and
// continued-as-new ones, which never are). Sessions come most recently
// (re)opened first where the store can sort (see visibility.ts).
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES, sessionWorkflowId } from '../../../workflows/types';
import { describeWith } from '../../common/sessions/lazy-sessions';
import { ListedRun, cursorOf, decodeMemo, isoTime, keyword, listRuns, quote, tokenOf } from './visibility';

export interface SessionListQuery {
  limit: number;
  cursor?: string;
}

export interface SessionItem {
  session: string;
  /** When the session was created (its first run), ISO 8601. */
  created_at: string;
  /** Its workflow is running; a closed session reopens on its next run. */
  open: boolean;
}

export interface SessionPage {
  sessions: SessionItem[];
  next_cursor: string | null;
}

const RUNNING = temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;

/** Engine pages read for one page of sessions at most: skipped runs may leave a page short. */
const MAX_ROUNDS = 5;

export async function listSessions(
  client: Client,
  namespace: string,
  account: string,
  q: SessionListQuery,
): Promise<SessionPage> {
  // Sessions with a workflow, and those made lazily and never opened, through their first run (lazy-sessions.ts).
  const where =
    `${SEARCH_ATTRIBUTES.account} = ${quote(account)} AND ExecutionStatus != 'ContinuedAsNew' AND ` +
    `(WorkflowType = 'agentSession' OR ${SEARCH_ATTRIBUTES.opensSession} IS NOT NULL)`;
  const sessions: SessionItem[] = [];
  let token: Uint8Array | undefined = tokenOf(q.cursor);
  for (let round = 0; round < MAX_ROUNDS && sessions.length < q.limit; round++) {
    const page = await listRuns(client, namespace, where, q.limit - sessions.length, token);
    const items = await Promise.all(page.runs.map((run) => latestItem(client, run)));
    sessions.push(...items.filter((x): x is SessionItem => x !== undefined));
    token = page.next;
    if (!token) break;
  }
  return { sessions, next_cursor: cursorOf(token) };
}

/**
 * The run's session, if the run is its latest (a running run always is; a closed one while no later
 * run exists). The first run of a session made lazily stands for it until the session has a
 * workflow (then listed by it; deleted, by none).
 */
async function latestItem(client: Client, run: ListedRun): Promise<SessionItem | undefined> {
  const workflowId = run.execution?.workflowId ?? '';
  const session = keyword(run, SEARCH_ATTRIBUTES.session);
  if (!session) return undefined;
  const open = run.status === RUNNING;
  if (!open && !(await isCurrent(client, workflowId, run.execution?.runId ?? ''))) return undefined;
  if (keyword(run, SEARCH_ATTRIBUTES.opensSession) !== undefined) {
    const account = keyword(run, SEARCH_ATTRIBUTES.account) ?? '';
    if (await describeWith(client)(sessionWorkflowId(account, session))) return undefined;
  }
  const createdAt = await decodeMemo(client, run.memo?.fields?.createdAt);
  return { session, created_at: typeof createdAt === 'string' ? createdAt : (isoTime(run.startTime) ?? ''), open };
}

async function isCurrent(client: Client, workflowId: string, runId: string): Promise<boolean> {
  try {
    return (await client.workflow.getHandle(workflowId).describe()).runId === runId;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false; // deleted meanwhile
    throw err;
  }
}
