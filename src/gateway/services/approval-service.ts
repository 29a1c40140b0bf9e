// Approval gates from the gateway's side (docs/approvals.md): a task's gated calls, read from its
// run (the approvals query), and a person's decision, sent as the run's approval update. The run
// decides what a decision means; here an edited input is checked against the tool's parameters
// before it is sent, and the update's refusals become the API's 404 and 409.
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client, type Connection } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { ConflictError, DependencyUnavailableError, NotFoundError, ValidationError } from '../../common/errors';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { Account } from '../../common/accounts/registry';
import { valueIssues } from '../../common/json-schema/schema-check';
import { approvalsQuery, approvalUpdate, type ApprovalRequest } from '../../../workflows/definitions';
import type { ApprovalDecision, PendingApproval, TaskStatus } from '../../../workflows/types';
import { isFinished } from '../../../workflows/types';
import type { TaskService } from './task-service';
import { grpcCodeOf, mapTemporalError, temporalCall } from './temporal-errors';

export interface ApprovalsPage {
  task_id: string;
  status: TaskStatus;
  pending: PendingApproval[];
  decided: ApprovalDecision[];
}

/** What the run's approvals query answers: waiting calls with their tool's parameters, and the decisions. */
interface Found {
  pending: (PendingApproval & { parameters?: Record<string, unknown> })[];
  decided: ApprovalDecision[];
}

/**
 * A task still queued (the status its run caches only moves on from there before any call of its
 * is gated, and a gated call is cached before its events say so) has no approvals: it is answered
 * without a query, which a run waiting for its turn answers only once a worker takes it up (on a
 * loaded worker, past the query's deadline: a 503).
 */
const NONE: Found = { pending: [], decided: [] };

const unknownCall = (req: ApprovalRequest) =>
  new NotFoundError(`no call ${JSON.stringify(req.tool_call_id)} of this task waited for a decision`);

export class ApprovalService {
  constructor(
    private readonly client: Client,
    private readonly connection: Connection,
    private readonly tasks: TaskService,
  ) {}

  private deadline<T>(ms: number, fn: () => Promise<T>): Promise<T> {
    return temporalCall(() => this.connection.withDeadline(Date.now() + ms, fn));
  }

  /** The task's gated calls: those waiting for a decision, and those decided. */
  async list(account: Account, taskId: string): Promise<ApprovalsPage> {
    const view = await this.tasks.view(account, taskId);
    const found = view.status === 'queued' ? NONE : await this.read(taskId);
    return {
      task_id: taskId,
      status: view.status,
      pending: found.pending.map(({ parameters: _p, ...p }) => p),
      decided: found.decided,
    };
  }

  /** Reads the run's approvals; a run that never had a gate (or one from before gates) has none. */
  private async read(taskId: string): Promise<Found> {
    try {
      return await this.deadline(5000, () => this.client.workflow.getHandle(taskId).query(approvalsQuery));
    } catch (err) {
      if (/did not register a handler for approvals|unknown query/i.test((err as Error).message ?? ''))
        return { pending: [], decided: [] };
      throw err;
    }
  }

  /**
   * Decides a gated call: 200 with the decision (the first one again when repeated), 404 unknown,
   * 409 decided otherwise. A workflow step's call is decided in the step's workflow, where it waits.
   */
  async decide(account: Account, taskId: string, req: ApprovalRequest): Promise<ApprovalDecision> {
    const view = await this.tasks.view(account, taskId);
    if (isFinished(view.status)) return this.afterEnd(taskId, req, view.status);
    // A queued task has made no call yet: no need to ask its run, which may not have started.
    if (view.status === 'queued') throw unknownCall(req);
    // An input only counts with approve (a denied call runs with nothing).
    const asked: ApprovalRequest = req.decision === 'deny' ? { ...req, input: undefined } : req;
    const found = await this.read(taskId);
    const pending = found.pending.find((p) => p.tool_call_id === asked.tool_call_id);
    if (asked.input !== undefined && pending?.parameters) checkInput(pending.parameters, asked.input);
    const where =
      pending?.workflow_id ?? found.decided.find((d) => d.tool_call_id === asked.tool_call_id)?.workflow_id ?? taskId;
    try {
      return await this.connection.withDeadline(Date.now() + 10_000, () =>
        this.client.workflow.getHandle(where).executeUpdate(approvalUpdate, { args: [asked] }),
      );
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError && refused(err)) throw refusal(err);
      // Temporal takes no update while the run's workflow task is being retried: a moment's wait.
      if (grpcCodeOf(err) === GrpcStatus.FAILED_PRECONDITION)
        throw new DependencyUnavailableError('temporal', 'the task is catching up; retry the decision shortly', 1);
      // The run (or the step) closed meanwhile: what it decided stands, or the task takes no more decisions.
      if (closedMeanwhile(err)) return this.afterEnd(taskId, asked, (await this.tasks.view(account, taskId)).status);
      throw mapTemporalError(err);
    }
  }

  /** A finished task (or step) takes no decision; the same one as it made is answered with it. */
  private async afterEnd(taskId: string, req: ApprovalRequest, status: TaskStatus): Promise<ApprovalDecision> {
    const found = await this.read(taskId).catch(() => undefined);
    const first = found?.decided.find((d) => d.tool_call_id === req.tool_call_id);
    if (first && first.decision === req.decision) return first;
    if (found && !first) throw unknownCall(req);
    if (first)
      throw new ConflictError(`call ${req.tool_call_id} was already decided: ${first.decision}`, { decided: first });
    throw new ConflictError(`the task is already ${status}; it takes no decisions`, {
      status,
      decided: first ?? null,
    });
  }
}

/** An edited input must fit the tool's parameters: a 400 naming each problem under body.input. */
function checkInput(parameters: Record<string, unknown>, input: unknown): void {
  let issues;
  try {
    issues = valueIssues(parameters, input, 'body.input');
  } catch {
    return; // a schema the validator cannot compile (an MCP server's own): the tool judges its input
  }
  if (issues.length) throw ValidationError.of(issues);
}

const REFUSALS = new Set(['approval_not_found', 'approval_conflict', 'approval_invalid', 'approval_closed']);

/** The workflow the update went to had closed: Temporal answers so in more than one way. */
function closedMeanwhile(err: unknown): boolean {
  if (err instanceof WorkflowNotFoundError || err instanceof WorkflowUpdateFailedError) return true;
  return mapTemporalError(err) instanceof NotFoundError;
}

/** The run's validator refused the decision (as opposed to the run being gone). */
function refused(err: WorkflowUpdateFailedError): boolean {
  return err.cause instanceof ApplicationFailure && REFUSALS.has(err.cause.type ?? '');
}

/** The validator's refusal as the API's error: unknown call 404, decided otherwise 409, a bad decision 400. */
function refusal(err: unknown): Error {
  if (!(err instanceof WorkflowUpdateFailedError) || !(err.cause instanceof ApplicationFailure)) return err as Error;
  const { type, message, details } = err.cause;
  if (type === 'approval_not_found') return new NotFoundError(message);
  if (type === 'approval_conflict') return new ConflictError(message, { decided: details?.[0] ?? null });
  if (type === 'approval_closed') return new ConflictError(message);
  if (type === 'approval_invalid') return ValidationError.at('body.decision', message, 'invalid_value');
  return err;
}
