// POST /tasks/{id}/rewind (docs/rewind.md): the task goes back to just before its model turn N
// and runs again from there. A Temporal reset of the task's current run to the workflow task that
// decided turn N (the Web UI shows it; the old run stays, terminated if it was running); the
// reset's reason tells the new run what the rewind asks (src/common/tasks/rewind-spec.ts). Then
// the relay opens a new epoch, superseding the abandoned branch's events, and the cached status
// and result go. Finished tasks may be rewound: the new run takes its session's turn again.
import { randomUUID } from 'node:crypto';
import type { Client, Connection, WorkflowExecutionDescription } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Logger } from 'pino';
import {
  ConflictError,
  DependencyUnavailableError,
  ServiceError,
  UnprocessableRequestError,
} from '../../common/errors';
import type { Account } from '../../common/accounts/registry';
import type { StatusCache } from '../../common/relay/status-cache';
import type { EventPublisher } from '../../common/relay/publisher';
import { rewindReason } from '../../common/tasks/rewind-spec';
import type { TaskView } from '../../../workflows/types';
import { readRunTurns, sideEffectsAfter, type RunTurns, type SideEffect } from './rewind-history';
import type { TaskService } from './task-service';
import { temporalCall } from './temporal-errors';

export interface RewindRequest {
  step: number;
  message?: string;
  replace?: boolean;
}

export interface RewindAnswer {
  task_id: string;
  /** The Temporal run the task goes on in. */
  run_id: string;
  step: number;
  status: TaskView['status'];
  /** The abandoned branch's events (null when it had none), read with `superseded: true` from now on. */
  superseded_seqs: { from_seq: number; to_seq: number } | null;
  /** Calls of the abandoned branch that may have acted on the world: their effects stay. */
  side_effects: SideEffect[];
}

export class RewindService {
  constructor(
    private readonly client: Client,
    private readonly connection: Connection,
    private readonly tasks: TaskService,
    private readonly cache: StatusCache,
    private readonly publisher: EventPublisher,
    private readonly logger: Logger,
  ) {}

  private deadline<T>(ms: number, fn: () => Promise<T>): Promise<T> {
    return temporalCall(() => this.connection.withDeadline(Date.now() + ms, fn));
  }

  async rewind(account: Account, taskId: string, req: RewindRequest): Promise<RewindAnswer> {
    const view = await this.tasks.view(account, taskId);
    if (view.status === 'queued') throw new ConflictError('the task has not started; it has no turn to go back to');
    // One rewind of a task at a time: each opens the epoch after the last one's.
    let answer: RewindAnswer | undefined;
    try {
      answer = await this.publisher.rewinding(taskId, (relayEpoch) => this.rewindNow(account, view, req, relayEpoch));
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      throw new DependencyUnavailableError('redis', 'the event relay is unavailable; retry shortly');
    }
    if (!answer)
      throw new ConflictError('another rewind of this task is under way; retry in a moment', undefined, true);
    return answer;
  }

  private async rewindNow(
    account: Account,
    view: TaskView,
    req: RewindRequest,
    relayEpoch: number,
  ): Promise<RewindAnswer> {
    const taskId = view.task_id;
    const { desc, run } = await this.currentRun(taskId);
    const turn = run.turns.get(req.step);
    if (!turn) throw outOfReach(req.step, [...run.turns.keys()]);
    const epoch = Math.max(run.epoch, relayEpoch) + 1;
    // Temporal's record says whether the run gave its session's turn back (it ended, or is ending).
    const rejoin = desc.status.name !== 'RUNNING' || (run.releasedAfter ?? 0) > turn.decidedAt;
    const reason = await rewindReason(this.client, {
      step: req.step,
      epoch,
      ...(req.replace && { replace: true }),
      ...(rejoin && { rejoin: true }),
      ...(req.message !== undefined && { message: req.message }),
    });
    // The session's thread keeps the run's first answer: a session never opened (lazy-sessions.ts) opens
    // now, from that answer, before the rewound run rejoins it.
    if (rejoin) await this.tasks.openSession(account, view.session);
    const runId = await this.reset(taskId, desc.runId, turn.decidedAt, reason);
    const superseded = await this.onRelay(view, { epoch, fromSeq: turn.floor + 1, step: req.step, runId });
    await this.cache.forget(taskId, { result: true });
    await this.cache.put({
      ...view,
      status: 'running',
      error: null,
      completed_at: null,
      current_step: String(req.step),
      ...(view.approvals && { approvals: [] }),
    });
    this.logger.info({ taskId, step: req.step, runId, epoch }, 'task rewound');
    return {
      task_id: taskId,
      run_id: runId,
      step: req.step,
      status: 'running',
      superseded_seqs: superseded,
      side_effects: sideEffectsAfter(run, turn.decidedAt, pendingStates(desc)),
    };
  }

  /** Temporal's reset of the run to the workflow task that ended with event `finishEventId`; the new run's id. */
  private async reset(taskId: string, runId: string, finishEventId: number, reason: string): Promise<string> {
    const r = await this.deadline(30_000, () =>
      this.client.workflowService.resetWorkflowExecution({
        namespace: this.client.options.namespace,
        workflowExecution: { workflowId: taskId, runId },
        reason,
        // protobufjs takes a number for an int64 field; its type names only Long.
        workflowTaskFinishEventId: finishEventId as never,
        requestId: randomUUID(),
        // What the old branch was sent (messages, decisions, metadata) stays with it.
        resetReapplyType: temporal.api.enums.v1.ResetReapplyType.RESET_REAPPLY_TYPE_NONE,
      }),
    );
    return r.runId ?? '';
  }

  /** The task's current run and what a rewind reads in it; a task with workflows cannot be rewound. */
  private async currentRun(taskId: string): Promise<{ desc: WorkflowExecutionDescription; run: RunTurns }> {
    const desc = await this.deadline(5000, () => this.client.workflow.getHandle(taskId).describe());
    const history = await this.deadline(30_000, () =>
      this.client.workflow.getHandle(taskId, desc.runId).fetchHistory(),
    );
    const events = history.events ?? [];
    // A request's workflows run as child workflows of fixed ids, which a run going back cannot start again.
    const child = (e: (typeof events)[number]) =>
      e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name ?? 'callbackDelivery';
    if (events.some((e) => child(e) !== 'callbackDelivery'))
      throw UnprocessableRequestError.at(
        'path.id',
        'a task whose request has workflows cannot be rewound',
        'not_rewindable',
      );
    return { desc, run: await readRunTurns(this.client, events) };
  }

  /** The relay's new epoch; with Redis away, the new branch still publishes (its producers are new) but nothing is marked. */
  private async onRelay(
    view: TaskView,
    rewind: { epoch: number; fromSeq: number; step: number; runId: string },
  ): Promise<RewindAnswer['superseded_seqs']> {
    try {
      return (await this.publisher.rewind({ taskId: view.task_id, session: view.session }, rewind)).superseded;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, taskId: view.task_id }, 'rewind not marked on the event relay');
      return null;
    }
  }
}

const PendingState = temporal.api.enums.v1.PendingActivityState;

/** The base run's activities under way, by id: started (or tried before) counts as "may have acted". */
function pendingStates(desc: WorkflowExecutionDescription): Map<string, SideEffect['state']> {
  const out = new Map<string, SideEffect['state']>();
  for (const a of desc.raw.pendingActivities ?? []) {
    const started = a.state !== PendingState.PENDING_ACTIVITY_STATE_SCHEDULED || (a.attempt ?? 1) > 1;
    out.set(a.activityId ?? '', started ? 'started' : 'scheduled');
  }
  return out;
}

function outOfReach(step: number, turns: number[]): UnprocessableRequestError {
  if (!turns.length)
    return UnprocessableRequestError.at('body.step', 'the task has taken no model turn yet', 'out_of_range');
  const [first, last] = [Math.min(...turns), Math.max(...turns)];
  const why =
    step > last
      ? `the task has taken turns up to ${last}`
      : `turn ${step} is in an earlier run of the task (it continued as new); this run has turns ${first} to ${last}`;
  return UnprocessableRequestError.at('body.step', why, 'out_of_range');
}
