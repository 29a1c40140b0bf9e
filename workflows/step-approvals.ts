// The gated calls of a task's workflow steps, as the task sees them: each step (its own child
// workflow, dag-step.ts) tells the task its waiting calls and decisions whenever they change
// (stepApprovalsSignal); the task shows them with its own (status input_required, view.approvals,
// the approvals query, each with the step's workflow id, where the gateway sends its decision).
import { condition, setHandler } from '@temporalio/workflow';
import type { ApprovalDecision } from './types';
import type { Shown } from './approval-gates';
import { stepApprovalsSignal } from './definitions';

export class StepApprovals {
  private readonly steps = new Map<string, { pending: Shown[]; decided: ApprovalDecision[] }>();
  private changed = false;

  constructor() {
    setHandler(stepApprovalsSignal, ({ workflowId, pending, decided }) => {
      this.steps.set(workflowId, {
        pending: pending.map((p) => ({ ...p, workflow_id: workflowId })),
        decided: decided.map((d) => ({ ...d, workflow_id: workflowId })),
      });
      this.changed = true;
    });
  }

  /** Every step's waiting calls and decisions. */
  all(): { pending: Shown[]; decided: ApprovalDecision[] } {
    const steps = [...this.steps.values()];
    return { pending: steps.flatMap((s) => s.pending), decided: steps.flatMap((s) => s.decided) };
  }

  /**
   * Calls `onChange` after each change, for the run's life. Waiting issues no command: a run whose
   * steps never gate a call records nothing more.
   */
  async watch(onChange: () => Promise<void>): Promise<void> {
    for (;;) {
      await condition(() => this.changed);
      this.changed = false;
      await onChange();
    }
  }
}
