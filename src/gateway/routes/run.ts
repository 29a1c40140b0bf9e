// POST / — run the agent on a message: background (202, JSON or one event), SSE, or JSON.
import { Request, Response, Router } from 'express';
import type { GatewayDeps } from '../app';
import { requireAccount } from '../middleware/auth';
import { parse } from '../schemas/validate';
import { runQuerySchema, IDEMPOTENCY_KEY } from '../schemas/request';
import { runRequestSchema, type RunRequest } from '../../common/contracts/run-request';
import { DependencyUnavailableError, ValidationError } from '../../common/errors';
import { sendOneEvent, streamTaskEvents } from '../sse';
import { answerIn, LATEST_VERSION } from '../../common/api-versions';
import { checkToolServers } from '../schemas/tool-servers';
import { agentsOf } from '../../common/tasks/request-tools';
import type { DatastoreService } from '../services/datastore-service';
import { offeredTools } from '../../../workflows/tool-registry';
import { callbackOf } from '../schemas/callback-request';
import type { ScheduleService } from '../services/schedule-service';
import { checkStructure } from '../schemas/structure-check';
import { isFinished, type ScheduledSummary } from '../../../workflows/types';
import type { Account } from '../../common/accounts/registry';
import type { Submitted } from '../services/task-service';

export function runRoutes(deps: GatewayDeps): Router {
  const { schedules, datastores } = deps;
  const r = Router();
  r.post('/', async (req, res) => {
    const account = requireAccount(req);
    const query = parse(runQuerySchema, req.query, 'query');
    const body = parse(runRequestSchema, req.body, 'body');
    await checkRunnable(deps, datastores, account.account, body);
    const callback = await callbackOf(body, deps.outbound, deps.config);
    const idem = req.header('idempotency-key');
    if (idem !== undefined && !IDEMPOTENCY_KEY.test(idem))
      throw ValidationError.at('header.Idempotency-Key', 'must be 1-255 printable ASCII characters', 'invalid_format');
    const wantsStream = (req.header('accept') ?? '').includes('text/event-stream');
    // A stream needs the relay: refuse before starting anything rather than after.
    if (wantsStream && !body.background) requireRelay(deps);
    // Schedules are read before anything starts (each bad entry is a 400), made once the run's id and session are known.
    const plan = body.schedules ? schedules.plan(body.schedules) : undefined;
    let made: Awaited<ReturnType<ScheduleService['create']>> | undefined;
    const beforeStart = plan
      ? async (taskId: string, session: string) => {
          made = await schedules.create(account, plan, taskId, session, body, callback);
          return { schedules: made.schedules };
        }
      : undefined;
    // multitask "interrupt": the session's running run ends (its exchange so far kept), this one follows.
    if (body.multitask === 'interrupt' && query.session) await deps.tasks.interrupt(account, query.session);
    // multitask "steer": into the session's running run, whose answer this request then gets.
    const steered =
      body.multitask === 'steer' && query.session
        ? await deps.tasks.steer(account, query.session, body.message, idem)
        : undefined;
    const sub =
      steered ??
      (await deps.tasks.submit(account, body, query.session, idem, req.timing, {
        callback,
        beforeStart,
        undo: async () => made?.undo(),
      }));
    // The answer's schedules: those just made, or (a repeated Idempotency-Key) those the first request made.
    const scheduled = async () =>
      plan
        ? { schedules: made?.schedules ?? (await schedules.summaries(account, sub.taskId, plan.entries.length)) }
        : {};
    // Every answer to a repeated Idempotency-Key says so, whichever way it answers.
    const common: Record<string, string> = {
      'X-Task-Id': sub.taskId,
      'X-Session-Id': sub.session,
      ...(sub.repeated && { 'Idempotent-Replayed': 'true' }),
      ...(sub.steered && { 'X-Steered': 'true' }),
    };

    if (body.background) return answerAccepted(deps, res, { account, sub, common, scheduled, wantsStream });
    if (wantsStream) {
      const closedAt = () => deps.runEnds.closedAt(sub.taskId);
      return streamTaskEvents(req, res, deps.subscriber, deps.logger, {
        taskId: sub.taskId,
        afterSeq: 0,
        heartbeatMs: deps.config.SSE_HEARTBEAT_MS,
        headers: common,
        closedAt,
        stop: deps.drain?.signal,
      });
    }
    await answerWhenFinished(deps, req, res, { account, sub, common, scheduled });
  });
  return r;
}

/** What the request asks that this document cannot say: a runnable structure, reachable tool servers, usable datastores. */
async function checkRunnable(
  deps: GatewayDeps,
  datastores: DatastoreService,
  account: string,
  body: RunRequest,
): Promise<void> {
  checkStructure(body);
  await checkToolServers(body, deps.outbound);
  await datastores.checkRun(
    account,
    body,
    offeredTools(deps.config.BUILTIN_TOOLS, [], agentsOf(body) ?? []).map((t) => t.name),
  );
}

/** How a started run is answered: its account, the task, the headers every answer has, and the schedules it made. */
interface Started {
  account: Account;
  sub: Submitted;
  common: Record<string, string>;
  scheduled: () => Promise<{ schedules?: ScheduledSummary[] }>;
}

/** background: true: 202 with the task, as JSON or as one event. */
async function answerAccepted(
  deps: GatewayDeps,
  res: Response,
  { account, sub, common, scheduled, wantsStream }: Started & { wantsStream: boolean },
): Promise<void> {
  res.status(202).set({ ...common, Location: `/tasks/${sub.taskId}` });
  const status = sub.repeated || sub.steered ? (await deps.tasks.view(account, sub.taskId)).status : 'queued';
  const accepted = {
    task_id: sub.taskId,
    session: sub.session,
    status,
    created_at: sub.createdAt,
    ...(sub.steered && { steered: true }),
    ...(await scheduled()),
  };
  // Asked for a stream, the same answer as its one event: a client that reads only events still learns the task.
  if (wantsStream)
    return sendOneEvent(
      res,
      answerIn(res.req.apiVersion ?? LATEST_VERSION, { type: 'task_accepted', ...accepted }) as never,
    );
  return void res.json(accepted);
}

/** The JSON answer: 200 with the result once the run has finished. */
async function answerWhenFinished(
  deps: GatewayDeps,
  req: Request,
  res: Response,
  { account, sub, common, scheduled }: Started,
): Promise<void> {
  // JSON: wait for the run to finish; a client that goes away stops only the wait.
  let gone = false;
  req.on('close', () => (gone = true));
  for (;;) {
    await deps.tasks.waitForClose(sub.taskId, 30_000);
    if (gone) return;
    const view = await deps.tasks.view(account, sub.taskId);
    if (isFinished(view.status) || !(await isRunning(deps, sub.taskId))) break;
  }
  const result = await deps.tasks.result(account, sub.taskId, 0);
  const { session, task_id, status, output, events, cost } = result;
  const extra =
    'error' in result ? { error: result.error } : result.final_output ? { final_output: result.final_output } : {};
  res
    .status(200)
    .set(common)
    .json({ session, task_id, status, output, events, cost, ...extra, ...(await scheduled()) });
}

async function isRunning(deps: GatewayDeps, taskId: string): Promise<boolean> {
  const d = await deps.client.workflow.getHandle(taskId).describe();
  return d.status.name === 'RUNNING';
}

export function requireRelay(deps: GatewayDeps): void {
  deps.health?.require('redis');
  if (deps.redis.status !== 'ready')
    throw new DependencyUnavailableError(
      'redis',
      'the event relay (Redis) is unavailable; retry shortly, or run in background and poll the task',
    );
}
