// POST /tasks/{id}/rewind (docs/rewind.md): the task goes back to just before its model turn N
// and runs again from there. A Temporal reset of the task's current run to the workflow task that
// decided turn N (the Web UI shows it; the old run stays, terminated if it was running); the
// reset's reason tells the new run what the rewind asks (src/common/tasks/rewind-spec.ts). Then
// the relay opens a new epoch, superseding the abandoned branch's events, and the cached status
// and result go. Finished tasks may be rewound: the new run takes its session's turn again.
import { randomUUID } from 'node:crypto';
import type { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Logger } from 'pino';
import { ConflictError, UnprocessableRequestError } from '../../common/errors';
import type { Account } from '../../common/accounts/registry';
import type { StatusCache } from '../../common/relay/status-cache';
import type { EventPublisher } from '../../common/relay/publisher';
import { rewindReason } from '../../common/tasks/rewind-spec';
import { isFinished, type TaskView } from '../../../workflows/types';
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
    const { runId: baseRun, run } = await this.currentRun(taskId);
    const turn = run.turns.get(req.step);
    if (!turn) throw outOfReach(req.step, [...run.turns.keys()]);
    const epoch = run.epoch + 1;
    const reason = await rewindReason(this.client, {
      step: req.step,
      epoch,
      ...(req.replace && { replace: true }),
      ...(isFinished(view.status) && { rejoin: true }),
      ...(req.message !== undefined && { message: req.message }),
    });
    const reset = await this.deadline(30_000, () =>
      this.client.workflowService.resetWorkflowExecution({
        namespace: this.client.options.namespace,
        workflowExecution: { workflowId: taskId, runId: baseRun },
        reason,
        // protobufjs takes a number for an int64 field; its type names only Long.
        workflowTaskFinishEventId: turn.decidedAt as never,
        requestId: randomUUID(),
        // What the old branch was sent (messages, decisions, metadata) stays with it.
        resetReapplyType: temporal.api.enums.v1.ResetReapplyType.RESET_REAPPLY_TYPE_NONE,
      }),
    );
    const runId = reset.runId ?? '';
    const superseded = await this.onRelay(view, { epoch, fromSeq: turn.floor + 1, step: req.step, runId });
    const running: TaskView = {
      ...view,
      status: 'running',
      error: null,
      completed_at: null,
      current_step: String(req.step),
    };
    await this.cache.forget(taskId, { result: true });
    await this.cache.put(running);
    this.logger.info({ taskId, step: req.step, runId, epoch }, 'task rewound');
    return {
      task_id: taskId,
      run_id: runId,
      step: req.step,
      status: 'running',
      superseded_seqs: superseded,
      side_effects: sideEffectsAfter(run, turn.decidedAt),
    };
  }

  /** The task's current run and what a rewind reads in it; a task with workflows cannot be rewound. */
  private async currentRun(taskId: string): Promise<{ runId: string; run: RunTurns }> {
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
    return { runId: desc.runId, run: await readRunTurns(this.client, events) };
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
