// Signals to a session workflow that reopen the session when it closed after
// being idle (SessionState.idleCloseMs): the new run starts with the closed
// run's thread, so a conversation outlives its workflow. Used by the gateway
// and by the activities that join a session on a run's behalf.
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import type { SignalDefinition } from '@temporalio/common';
import type { SessionResult, SessionState, agentSession } from '../../../workflows/session';
import type { ThreadMessage } from '../../../workflows/types';
import { SEARCH_ATTRIBUTES, sessionWorkflowId } from '../../../workflows/types';
import type { Config } from '../config';
import { describeWith, handoverOf, lazyFirstRun } from './lazy-sessions';

export interface SessionRef {
  account: string;
  session: string;
  taskQueue: string;
  /** Idle close of a session (re)opened here, ms (SESSION_IDLE_CLOSE_MS; 0 = never). */
  idleCloseMs: number;
  /** How often the session checks its active run still exists, ms (RUN_WATCH_MS). */
  watchMs: number;
}

/**
 * A session of an account, with the deployment's task queue and idle close. `oneOff`: the session
 * the service opens for a keyed request that named none (an unkeyed one opens none: lazy-sessions.ts),
 * which closes sooner (ONE_OFF_SESSION_IDLE_CLOSE_MS, never later than SESSION_IDLE_CLOSE_MS;
 * sessions that never close stay so).
 */
export function sessionRef(
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'SESSION_IDLE_CLOSE_MS' | 'RUN_WATCH_MS'> &
    Partial<Pick<Config, 'ONE_OFF_SESSION_IDLE_CLOSE_MS'>>,
  account: string,
  session: string,
  opts: { oneOff?: boolean } = {},
): SessionRef {
  const idle = config.SESSION_IDLE_CLOSE_MS;
  const oneOff = opts.oneOff ? config.ONE_OFF_SESSION_IDLE_CLOSE_MS : undefined;
  return {
    account,
    session,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    idleCloseMs: idle && oneOff ? Math.min(oneOff, idle) : idle,
    watchMs: config.RUN_WATCH_MS,
  };
}

/** The state a session starts with: an empty queue, the given thread, the configured idle close. */
export function sessionStart(
  ref: SessionRef,
  messages: ThreadMessage[],
  active?: string,
  agent?: string,
): SessionState {
  return {
    account: ref.account,
    session: ref.session,
    messages,
    ...(agent && { agent }),
    queue: [],
    watchMs: ref.watchMs,
    ...(active && { active }),
    ...(ref.idleCloseMs > 0 && { idleCloseMs: ref.idleCloseMs }),
  };
}

/**
 * The memo and search attributes every run of a session starts with: visibility
 * finds an account's sessions by them (GET /sessions), and `createdAt` (when the
 * session was first created, ISO 8601) passes from each run to the next.
 */
export function sessionStartMeta(ref: Pick<SessionRef, 'account' | 'session'>, createdAt: string) {
  return {
    memo: { account: ref.account, session: ref.session, createdAt },
    searchAttributes: { [SEARCH_ATTRIBUTES.account]: [ref.account], [SEARCH_ATTRIBUTES.session]: [ref.session] },
  };
}

/**
 * Signals the session; when it has no open run (closed when idle, or never
 * created), starts one with the last closed run's thread (empty if none) and
 * the signal. Two callers racing to reopen read the same thread, and the
 * second one's signal-with-start only signals the run the first started.
 * `active`: the run that holds the turn in a session started here.
 */
export async function signalSession<Args extends unknown[]>(
  client: Client,
  ref: SessionRef,
  signal: SignalDefinition<Args>,
  args: Args,
  opts: { active?: string; caller?: string } = {},
): Promise<void> {
  const workflowId = sessionWorkflowId(ref.account, ref.session);
  try {
    await client.workflow.getHandle(workflowId).signal(signal, ...args);
    return;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  const { state, createdAt } = await openingState(client, ref, workflowId, opts);
  await client.workflow.signalWithStart<typeof agentSession, unknown[]>('agentSession', {
    workflowId,
    taskQueue: ref.taskQueue,
    args: [state],
    signal: signal.name,
    signalArgs: args,
    ...sessionStartMeta(ref, createdAt ?? new Date().toISOString()),
  });
}

/**
 * Opens the session when it has no open run, as signalSession would before its signal: a closed
 * one with its thread, one made lazily and never opened from its first run. A rewind opens the
 * session of the finished run it sends back so, before the run rejoins it: the run's first
 * answer stays in the thread, and the new exchange follows it.
 */
export async function openSession(client: Client, ref: SessionRef): Promise<void> {
  const workflowId = sessionWorkflowId(ref.account, ref.session);
  const now = await describeWith(client)(workflowId);
  if (now?.status === 'RUNNING') return;
  const { state, createdAt } = await openingState(client, ref, workflowId, {});
  try {
    await client.workflow.start('agentSession', {
      workflowId,
      taskQueue: ref.taskQueue,
      args: [state],
      ...sessionStartMeta(ref, createdAt ?? new Date().toISOString()),
    });
  } catch (err) {
    if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err; // opened meanwhile
  }
}

/**
 * The state a session with no open run opens with: the thread its last run left; for a session
 * made lazily and never opened (lazy-sessions.ts), its first run's. That run going, it holds the
 * turn (activeLazy) and the session reads its handover at its close; ended, its handover is the
 * thread. `caller`: the run on whose behalf the session opens; the first run itself (rewound,
 * rejoining) gets an empty session, its earlier turn being undone.
 */
async function openingState(
  client: Client,
  ref: SessionRef,
  workflowId: string,
  opts: { active?: string; caller?: string },
): Promise<{ state: SessionState; createdAt?: string }> {
  const closed = await closedThread(client, workflowId);
  const first =
    !closed.createdAt && !opts.active ? await lazyFirstRun(describeWith(client), ref.account, ref.session) : undefined;
  if (!first)
    return { state: sessionStart(ref, closed.messages, opts.active, closed.agent), createdAt: closed.createdAt };
  if (opts.caller === first.taskId) return { state: sessionStart(ref, []), createdAt: first.createdAt };
  if (first.running)
    return { state: { ...sessionStart(ref, [], first.taskId), activeLazy: true }, createdAt: first.createdAt };
  const handover = await handoverOf(client, first.taskId);
  const state = sessionStart(ref, handover?.messages ?? [], undefined, handover?.agent ?? undefined);
  return { state, createdAt: first.createdAt };
}

/**
 * The thread (and active agent) a closed session left (its result); empty when there is none to read.
 * `createdAt`: when the session was created, as its last run knew it (else that run's start).
 */
export async function closedThread(
  client: Client,
  workflowId: string,
): Promise<SessionResult & { createdAt?: string }> {
  let desc;
  try {
    desc = await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { messages: [] };
    throw err;
  }
  const memo = (desc.memo ?? {}) as { createdAt?: unknown };
  const createdAt = typeof memo.createdAt === 'string' ? memo.createdAt : desc.startTime.toISOString();
  // Open again (another caller reopened it): the signal-with-start will only signal it.
  if (desc.status.name !== 'COMPLETED') return { messages: [], createdAt };
  // By run id: the latest run may be a newer, open one by now, whose result would not come.
  const result = (await client.workflow.getHandle(workflowId, desc.runId).result()) as SessionResult | undefined;
  return { messages: result?.messages ?? [], ...(result?.agent && { agent: result.agent }), createdAt };
}
