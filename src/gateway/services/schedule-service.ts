// The gateway's operations on schedules (SPEC 2.5): a run request's entries
// become Temporal Schedules owned by its account; they are listed, described,
// paused, resumed, triggered and deleted here. Another account's schedule is
// a 404, exactly like one that does not exist.
import { ScheduleAlreadyRunning, ScheduleNotFoundError } from '@temporalio/client';
import type { Client, Connection, ScheduleDescription, ScheduleHandle } from '@temporalio/client';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Config } from '../../common/config';
import type { Account } from '../../common/accounts/registry';
import { NotFoundError, UnprocessableRequestError } from '../../common/errors';
import type { CallbackConfig, ScheduledSummary } from '../../../workflows/types';
import { SEARCH_ATTRIBUTES } from '../../../workflows/types';
import type { RunRequest, ScheduleRequest } from '../../common/contracts/run-request';
import { readSchedule, ScheduleIssue, ScheduleWhen } from '../../common/schedules/schedule-spec';
import { Overlap, ScheduleMemo, scheduleOptions } from '../../common/schedules/schedule-options';
import { scheduleIdsFor, scheduledTaskId } from '../../common/schedules/schedule-ids';
import { temporalCall } from './temporal-errors';
import { cursorOf, decodeMemo, quote, tokenOf } from './visibility';
import { invalidCursor } from './list-cursor';

/** A run request's entries, read and checked before anything starts. */
export interface SchedulePlan {
  entries: { entry: ScheduleRequest; when: ScheduleWhen }[];
}

export interface ScheduleView {
  schedule_id: string;
  session: string;
  schedule: number | string;
  timezone: string | null;
  overlap: Overlap;
  message_preview: string;
  paused: boolean;
  /** active: it will run; paused: its times pass without a task; done: it has no run left (a one-time schedule that ran). */
  state: 'active' | 'paused' | 'done';
  note: string | null;
  created_at: string;
  next_run_at: string | null;
}

export interface ScheduleDetail extends ScheduleView {
  next_runs: string[];
  runs: number;
  recent_tasks: { task_id: string; scheduled_at: string; started_at: string }[];
  running_tasks: string[];
}

const DEADLINE_MS = 5000;
const NEXT_RUNS_SHOWN = 5;

/** What a schedule keeps about itself (its memo): the entry as given, and who made it when. */
function scheduleMemo(
  { entry, when }: SchedulePlan['entries'][number],
  by: Pick<ScheduleMemo, 'account' | 'session' | 'createdAt' | 'createdBy'>,
): ScheduleMemo {
  return {
    account: by.account,
    session: by.session,
    schedule: entry.schedule,
    kind: when.kind,
    ...(when.kind === 'cron' && { timezone: when.timezone }),
    overlap: entry.overlap ?? 'skip',
    preview: entry.message.slice(0, 200),
    createdAt: by.createdAt,
    createdBy: by.createdBy,
  };
}

export class ScheduleService {
  constructor(
    private readonly client: Client,
    private readonly connection: Connection,
    private readonly config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'TEMPORAL_NAMESPACE'>,
  ) {}

  private call<T>(fn: () => Promise<T>, notFound = 'schedule not found'): Promise<T> {
    return temporalCall(() => this.connection.withDeadline(Date.now() + DEADLINE_MS, fn), notFound).catch((err) => {
      throw err instanceof ScheduleNotFoundError ? new NotFoundError(notFound) : err;
    });
  }

  /** Reads every entry; a 422 names each entry and field that is not usable (the document says only "a string"). */
  plan(entries: ScheduleRequest[], now = new Date()): SchedulePlan {
    const issues: ScheduleIssue[] = [];
    const read: SchedulePlan['entries'] = [];
    entries.forEach((entry, i) => {
      const path = `body.schedules[${i}]`;
      const r = readSchedule(entry, path, now);
      if ('issues' in r) issues.push(...r.issues);
      else if (r.when.kind === 'once' && entry.overlap !== undefined)
        issues.push({
          path: `${path}.overlap`,
          message: 'overlap goes with a cron schedule only (a one-time schedule runs once)',
          code: 'unexpected',
        });
      else read.push({ entry, when: r.when });
    });
    if (issues.length) throw UnprocessableRequestError.of(issues);
    return { entries: read };
  }

  /**
   * Makes the plan's schedules for the run `taskId` in `session`; a schedule
   * that exists already (a repeated request) is kept as it is. Returns what
   * the run announces, and an undo that deletes those made here.
   */
  async create(
    account: Account,
    plan: SchedulePlan,
    taskId: string,
    session: string,
    req: RunRequest,
    callback?: CallbackConfig,
  ): Promise<{ schedules: ScheduledSummary[]; undo: () => Promise<void> }> {
    const ids = scheduleIdsFor(taskId, plan.entries.length);
    const made: ScheduleHandle[] = [];
    const { schedules: _s, ...rest } = req;
    const createdAt = new Date().toISOString();
    const schedules = await Promise.all(
      plan.entries.map(async ({ entry, when }, i) => {
        const memo = scheduleMemo({ entry, when }, { account: account.account, session, createdAt, createdBy: taskId });
        const run = {
          scheduleId: ids[i],
          account: account.account,
          session,
          request: { ...rest, message: entry.message, background: true, multitask: 'queue' as const },
          ...(callback && { callback }),
        };
        try {
          made.push(
            await this.call(() =>
              this.client.schedule.create(
                scheduleOptions({
                  scheduleId: ids[i],
                  when,
                  overlap: memo.overlap,
                  memo,
                  run,
                  taskQueue: this.config.TEMPORAL_TASK_QUEUE,
                }),
              ),
            ),
          );
        } catch (err) {
          // Made by an earlier try of the same request (same Idempotency-Key): keep it.
          if (!(err instanceof ScheduleAlreadyRunning)) throw err;
        }
        return { schedule_id: ids[i], next_run_at: (await this.describe(account, ids[i])).next_run_at };
      }),
    ).catch(async (err) => {
      await Promise.all(made.map((h) => h.delete().catch(() => undefined)));
      throw err;
    });
    return {
      schedules,
      undo: async () => void (await Promise.all(made.map((h) => h.delete().catch(() => undefined)))),
    };
  }

  /** The schedules a run request made, as its answer shows them (a repeated request's too). */
  async summaries(account: Account, taskId: string, count: number): Promise<ScheduledSummary[]> {
    return Promise.all(
      scheduleIdsFor(taskId, count).map(async (id) => ({
        schedule_id: id,
        next_run_at: (await this.describe(account, id).catch(() => undefined))?.next_run_at ?? null,
      })),
    );
  }

  async list(
    account: Account,
    q: { limit: number; cursor?: string },
  ): Promise<{ schedules: ScheduleView[]; next_cursor: string | null }> {
    const token = tokenOf(q.cursor);
    const res = await this.call(() =>
      this.client.workflowService.listSchedules({
        namespace: this.config.TEMPORAL_NAMESPACE,
        maximumPageSize: q.limit,
        nextPageToken: token,
        query: `${SEARCH_ATTRIBUTES.account} = ${quote(account.account)}`,
      }),
    ).catch((err) => {
      // A token the engine refuses is the client's cursor at fault (as in listRuns).
      if (
        token?.length &&
        [GrpcStatus.INVALID_ARGUMENT, GrpcStatus.UNKNOWN].includes((err as { code?: number }).code as GrpcStatus)
      )
        throw invalidCursor();
      throw err;
    });
    const schedules = await Promise.all(
      (res.schedules ?? []).map(async (s) => {
        const memo = await this.memoOf(s.memo?.fields ?? {});
        const next = s.info?.futureActionTimes?.[0];
        return view(s.scheduleId ?? '', memo, {
          paused: !!s.info?.paused,
          note: s.info?.notes || null,
          next: next ? new Date(Number(next.seconds ?? 0) * 1000) : undefined,
        });
      }),
    );
    return { schedules, next_cursor: cursorOf(res.nextPageToken?.length ? res.nextPageToken : undefined) };
  }

  async describe(account: Account, id: string): Promise<ScheduleDetail> {
    const d = await this.owned(account, id);
    const memo = d.memo as unknown as ScheduleMemo;
    const next = d.info.nextActionTimes;
    return {
      ...view(id, memo, { paused: d.state.paused, note: d.state.note || null, next: next[0] }),
      next_runs: next.slice(0, NEXT_RUNS_SHOWN).map((t) => t.toISOString()),
      runs: d.info.numActionsTaken,
      recent_tasks: d.info.recentActions.map((a) => ({
        task_id: scheduledTaskId(a.action.workflow.workflowId, a.action.workflow.firstExecutionRunId),
        scheduled_at: a.scheduledAt.toISOString(),
        started_at: a.takenAt.toISOString(),
      })),
      running_tasks: d.info.runningActions.map((a) =>
        scheduledTaskId(a.workflow.workflowId, a.workflow.firstExecutionRunId),
      ),
    };
  }

  async pause(account: Account, id: string, note?: string): Promise<ScheduleDetail> {
    await this.owned(account, id);
    await this.call(() => this.client.schedule.getHandle(id).pause(note ?? 'paused through the API'));
    return this.describe(account, id);
  }

  async unpause(account: Account, id: string): Promise<ScheduleDetail> {
    await this.owned(account, id);
    await this.call(() => this.client.schedule.getHandle(id).unpause('resumed through the API'));
    return this.describe(account, id);
  }

  /** Runs the schedule's action now, even while a task of it is running (the tasks take turns in the session). */
  async trigger(account: Account, id: string): Promise<void> {
    await this.owned(account, id);
    await this.call(() => this.client.schedule.getHandle(id).trigger('ALLOW_ALL'));
  }

  /** Deletes the schedule; the tasks it started run on. */
  async delete(account: Account, id: string): Promise<void> {
    await this.owned(account, id);
    await this.call(() => this.client.schedule.getHandle(id).delete());
  }

  private async owned(account: Account, id: string): Promise<ScheduleDescription> {
    const d = await this.call(() => this.client.schedule.getHandle(id).describe());
    if ((d.memo as Partial<ScheduleMemo> | undefined)?.account !== account.account)
      throw new NotFoundError('schedule not found');
    return d;
  }

  private async memoOf(fields: Record<string, unknown>): Promise<ScheduleMemo> {
    const entries = await Promise.all(
      Object.entries(fields).map(async ([k, p]) => [k, await decodeMemo(this.client, p as never)] as const),
    );
    return Object.fromEntries(entries) as unknown as ScheduleMemo;
  }
}

function view(
  id: string,
  memo: ScheduleMemo,
  state: { paused: boolean; note: string | null; next?: Date },
): ScheduleView {
  return {
    schedule_id: id,
    session: memo.session,
    schedule: memo.schedule,
    timezone: memo.timezone ?? null,
    overlap: memo.overlap,
    message_preview: memo.preview,
    paused: state.paused,
    state: !state.next ? 'done' : state.paused ? 'paused' : 'active',
    note: state.note,
    created_at: memo.createdAt,
    next_run_at: state.next ? state.next.toISOString() : null,
  };
}
