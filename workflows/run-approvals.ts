// A task run's approval gates (docs/approvals.md) on the run's side: its own gates
// (approval-gates.ts) and its workflow steps' waiting calls (step-approvals.ts), shown together in
// the task's view (input_required while any waits) and in its approvals query; the view is cached
// as they change. The run lends its view, status, record and callback feed.
import type { BlockEvent, TaskInput, TaskStatus, TaskView } from './types';
import { isFinished } from './types';
import { ApprovalGates, type Shown } from './approval-gates';
import { StepApprovals } from './step-approvals';
import type { LoopState } from './agent-loop';
import { localRelay } from './local-relay';

/** What the run lends: its input, loop state and view, and how to set its status, feed its callback, and whether it is ending. */
export interface ApprovalsHost {
  input: TaskInput;
  state: LoopState;
  view: TaskView;
  setStatus(status: TaskStatus): void;
  flush?(blocks: readonly BlockEvent[]): Promise<void>;
  ending(): boolean;
}

export class RunApprovals {
  readonly gates: ApprovalGates;
  /** The run's own calls waiting for a decision (its workflow steps' are in `steps`). */
  private own: Shown[] = [];
  private readonly steps = new StepApprovals();

  constructor(private readonly run: ApprovalsHost) {
    const { state } = run;
    this.gates = new ApprovalGates(
      run.input,
      (state.decisions ??= []),
      {
        waiting: (pending) => {
          this.own = pending;
          return this.view();
        },
        floor: () => state.seqFloor,
        heard: (lastSeq, relayLost) => {
          state.seqFloor = Math.max(state.seqFloor, lastSeq);
          if (relayLost) state.relayLost = true;
        },
        record: async (event) => {
          state.blocks.push(event);
          await run.flush?.(state.blocks);
        },
        ending: () => run.ending(),
      },
      () => this.steps.all(),
    );
  }

  /** The view with every call waiting now: input_required while any waits. */
  private view(): TaskView {
    const { view } = this.run;
    const all = [...this.own, ...this.steps.all().pending].map(({ parameters: _p, ...p }) => p);
    view.approvals = all;
    const status = all.length ? 'input_required' : 'running';
    if (view.status !== status && !isFinished(view.status)) this.run.setStatus(status);
    return { ...view };
  }

  /** Caches the view whenever the workflow steps' waiting calls change, for the run's life (none: nothing happens). */
  watchSteps(): void {
    const { input, state } = this.run;
    void this.steps
      .watch(async () => {
        await localRelay.publishApproval({
          taskId: input.taskId,
          session: input.session,
          producer: 'step-approvals',
          floor: state.seqFloor,
          events: [],
          view: this.view(),
        });
      })
      .catch(() => undefined); // cancelled with the run
  }
}
