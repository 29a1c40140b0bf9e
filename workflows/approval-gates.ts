// Approval gates of a run (docs/approvals.md): a gated call waits in the workflow (a condition
// with a timer: no activity held open, nothing running on a worker) until a person decides it
// through the approval update, or its time runs out. Each call is decided by its own id, so two
// gated calls of one turn never take each other's decision; calls that need none run meanwhile.
// While any call waits the task is input_required; the request and the decision go to the stream
// at once (a local activity caches the view first) and into the run's record, which the callback
// is fed from.
import { ApplicationFailure, condition, setHandler } from '@temporalio/workflow';
import type { ApprovalDecision, BlockEvent, PendingApproval, TaskInput, TaskView, ToolCall } from './types';
import { type ApprovalRequest, approvalUpdate, approvalsQuery } from './definitions';
import { approvalTimeout, callInput } from './approval-rules';
import type { RegisteredTool } from './tool-registry';
import { localRelay } from './local-relay';

/** What the run lends the gates: its view and status, its place on the relay, its record and callback. */
export interface GateHost {
  /** The waiting calls changed (with their tools' parameters): the view to cache (a task's; a workflow step has none). */
  waiting(pending: Shown[]): TaskView | undefined;
  floor(): number;
  heard(lastSeq: number, relayLost: boolean): void;
  /** An event for the run's record (the result's events, the callback's feed). */
  record(event: BlockEvent): Promise<void>;
  /** The run is ending (cancelled, interrupted, out of time): it takes no more decisions. */
  ending(): boolean;
}

interface Waiting {
  entry: PendingApproval;
  parameters?: Record<string, unknown>;
  decision?: ApprovalDecision;
}

/** A waiting call as the approvals query shows it: with its tool's parameters. */
export type Shown = PendingApproval & { parameters?: Record<string, unknown> };

/** A decision, or the run must fail: a call's time ran out and the request said on_timeout "fail". */
export type GateResult = { decision: ApprovalDecision } | { fail: { message: string } };

export class ApprovalGates {
  private readonly waitingCalls = new Map<string, Waiting>();
  /** Set when a timeout fails the run: the other waiting calls stop waiting too. */
  private failing = false;

  constructor(
    private readonly input: TaskInput,
    /** Every decision of the run so far (carried over a continue-as-new). */
    readonly decisions: ApprovalDecision[],
    private readonly host: GateHost,
    /** Gated calls waiting elsewhere that the query shows too (a task's workflow steps'). */
    others: () => { pending: Shown[]; decided: ApprovalDecision[] } = () => ({ pending: [], decided: [] }),
  ) {
    setHandler(approvalsQuery, () => ({
      pending: [...this.waiting(), ...others().pending],
      decided: [...this.decisions, ...others().decided],
    }));
    setHandler(approvalUpdate, (req) => this.decide(req), { validator: (req) => this.check(req) });
  }

  private shown(w: Waiting): Shown {
    return { ...w.entry, ...(w.parameters && { parameters: w.parameters }) };
  }

  /** The calls waiting for a decision now. */
  private waiting(): Shown[] {
    return [...this.waitingCalls.values()].filter((w) => !w.decision).map((w) => this.shown(w));
  }

  /** The decision on call `id`: the waiting call's own first (a model may reuse an id across turns), else the run's record. */
  private decided(id: string): ApprovalDecision | undefined {
    const w = this.waitingCalls.get(id);
    return w ? w.decision : this.decisions.find((d) => d.tool_call_id === id);
  }

  /** Refuses an unknown call and a decision other than the one made; accepts the same one again. */
  private check(req: ApprovalRequest): void {
    if (req?.decision !== 'approve' && req?.decision !== 'deny')
      throw ApplicationFailure.create({ type: 'approval_invalid', message: 'decision must be "approve" or "deny"' });
    const id = req.tool_call_id;
    if (this.host.ending())
      throw ApplicationFailure.create({
        type: 'approval_closed',
        message: 'the task is ending; it takes no decisions',
      });
    const first = this.decided(id);
    if (!first && !this.waitingCalls.has(id))
      throw ApplicationFailure.create({
        type: 'approval_not_found',
        message: `no call ${JSON.stringify(id)} of this task waits for a decision`,
      });
    if (first && first.decision !== req.decision)
      throw ApplicationFailure.create({
        type: 'approval_conflict',
        message: `call ${id} was already decided: ${first.decision}${first.by === 'timeout' ? ' (its time ran out)' : ''}`,
        details: [first],
      });
  }

  private decide(req: ApprovalRequest): ApprovalDecision {
    const first = this.decided(req.tool_call_id);
    if (first) return first;
    const w = this.waitingCalls.get(req.tool_call_id);
    // The validator let it through: a call that waits, or one decided already (answered above).
    if (!w)
      throw ApplicationFailure.create({ type: 'approval_not_found', message: `no call ${req.tool_call_id} waits` });
    w.decision = {
      tool_call_id: req.tool_call_id,
      decision: req.decision,
      by: 'user',
      ...(req.reason && { reason: req.reason }),
      ...(req.decision === 'approve' && req.input !== undefined && { input: req.input }),
      decided_at: new Date(Date.now()).toISOString(),
    };
    this.decisions.push(w.decision);
    return w.decision;
  }

  /** Waits for the decision on `call`; publishes the request and the decision as they happen. */
  async wait(call: ToolCall, tool: RegisteredTool, producer: string): Promise<GateResult> {
    const { ms, onTimeout } = approvalTimeout(this.input);
    const now = Date.now();
    const entry: PendingApproval = {
      tool_call_id: call.id,
      tool: call.name,
      input: callInput(call.arguments),
      since: new Date(now).toISOString(),
      timeout_at: new Date(now + ms).toISOString(),
    };
    const w: Waiting = { entry, parameters: tool.parameters as Record<string, unknown> | undefined };
    this.waitingCalls.set(call.id, w);
    const { since: _since, ...shown } = entry;
    await this.publish(`${producer}:approval`, { type: 'agent_approval_request', ...shown });
    let decided: boolean;
    try {
      decided = await condition(() => w.decision !== undefined || this.failing, ms);
    } finally {
      // Ended while it waited (cancelled, interrupted, out of time): it waits no more either.
      this.waitingCalls.delete(call.id);
    }
    if (!decided && !w.decision) w.decision = this.timedOut(call.id, ms, onTimeout);
    const d = w.decision ?? this.timedOut(call.id, ms, 'deny', 'another call of the turn ran out of time');
    const { decided_at: _at, ...event } = d;
    await this.publish(`${producer}:decision`, { type: 'agent_approval_decision', ...event });
    if (!decided && onTimeout === 'fail')
      return { fail: { message: `no decision on the call of ${call.name} (${call.id}) within ${ms / 1000} s` } };
    return { decision: d };
  }

  private timedOut(id: string, ms: number, onTimeout: 'deny' | 'fail', why?: string): ApprovalDecision {
    if (onTimeout === 'fail') this.failing = true;
    const d: ApprovalDecision = {
      tool_call_id: id,
      decision: 'deny',
      by: 'timeout',
      reason: why ?? `no decision within ${ms / 1000} s`,
      decided_at: new Date(Date.now()).toISOString(),
    };
    this.decisions.push(d);
    return d;
  }

  private async publish(producer: string, event: BlockEvent): Promise<void> {
    const view = this.host.waiting(this.waiting());
    const tag = this.input.step?.tag;
    const r = await localRelay.publishApproval({
      taskId: this.input.taskId,
      session: this.input.session,
      producer,
      floor: this.host.floor(),
      events: [event],
      ...(view && { view }),
      ...(tag && { tag }),
    });
    this.host.heard(r.lastSeq, r.relayLost === true);
    await this.host.record(event);
  }
}

/** The result the model reads for a denied call. */
export function deniedContent(d: ApprovalDecision): string {
  if (d.by === 'timeout') return `Error: this call was not run: ${d.reason ?? 'no decision came in time'}.`;
  return `Error: a person denied this call; it was not run.${d.reason ? ` Their reason: ${d.reason}` : ''}`;
}
