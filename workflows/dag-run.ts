// The task's side of its declarative workflows (SPEC 2.3): every workflow of
// the request runs at once as a child workflow; each step's end becomes an
// agent_step event {workflow_id, step_id, name, status} and an agent_progress
// (finished steps over all), and the task's status shows the progress and the
// running steps. When all are done, the agent answers the request with the
// steps' outputs in its context. A workflow that fails (a required step)
// cancels the others and fails the task.
import { CancellationScope, condition, executeChild, isCancellation, setHandler } from '@temporalio/workflow';
import type { BlockEvent, DagWorkflow, TaskInput, TaskView, Usage } from './types';
import { dagWorkflow, stepEndEvent, StepOutcome, StepReport } from './dag-workflow';
import { resultLine } from './dag-step';
import { addUsage } from './types';
import { dagStepSignal, dagWorkflowId } from './definitions';
import { localRelay } from './local-relay';

export interface DagRunOutcome {
  /** What the agent is given: each workflow's steps and their outputs. */
  context: string;
  usage: Usage;
}

export class DagRun {
  private readonly reports: StepReport[] = [];
  private readonly runningSteps = new Set<string>();
  private finished = 0;
  private published = 0;
  private readonly total: number;
  /** The step-end events, for the task's result. */
  readonly blocks: BlockEvent[] = [];
  /** The relay did not take some of the reports' events: the task's end republishes them. */
  relayLost = false;

  constructor(
    private readonly input: TaskInput,
    /** The request's workflows (input.request.workflows). */
    private readonly workflows: DagWorkflow[],
    private readonly view: TaskView,
    /** The highest seq the task has heard of, and how to raise it. */
    private readonly seq: { get(): number; set(n: number): void },
  ) {
    this.total = workflows.reduce((n, w) => n + w.steps.length, 0);
    view.workflows = workflows.map((w) => ({
      id: w.id,
      name: w.name,
      steps: w.steps.map((s) => ({ id: s.id, name: s.name, depends_on: s.depends_on, status: 'pending' as const })),
    }));
    setHandler(dagStepSignal, (r) => void this.reports.push(r));
  }

  /** Runs every workflow; `first` are the events to publish before any step's (agent_started). */
  async run(first: BlockEvent[]): Promise<DagRunOutcome> {
    let done = false;
    // Not cancellable: after a cancel it still publishes what the steps reported, then ends with the run.
    const reporter = CancellationScope.nonCancellable(() => this.report(first, () => done));
    const scope = new CancellationScope();
    let settled: PromiseSettledResult<StepOutcome[]>[];
    try {
      // Every workflow settles before the run goes on: a cancelled one has stopped its steps by then.
      settled = await scope.run(() =>
        Promise.allSettled(
          this.workflows.map((workflow) =>
            executeChild(dagWorkflow, {
              workflowId: dagWorkflowId(this.input.taskId, workflow.id),
              args: [{ task: { ...this.input, carry: undefined }, workflow }],
            }).catch((err) => {
              scope.cancel(); // one failed: the others stop too
              throw err;
            }),
          ),
        ),
      );
    } finally {
      done = true;
      await reporter;
    }
    const failures = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failures.length) {
      // The steps that were running when the run stopped show as cancelled, not running for ever.
      for (const step of this.view.workflows?.flatMap((w) => w.steps) ?? []) {
        if (step.status === 'running') step.status = 'cancelled';
      }
      // The failure that made the others stop, rather than their cancellation.
      throw failures.find((e) => !isCancellation(e)) ?? failures[0];
    }
    const results = settled.map((r) => (r as PromiseFulfilledResult<StepOutcome[]>).value);
    const usage = results
      .flat()
      .reduce<Usage>((u, s) => (s.usage ? addUsage(u, s.usage) : u), { promptTokens: 0, completionTokens: 0 });
    return { context: contextOf(this.workflows, results), usage };
  }

  /** Publishes the steps' reports as they come, in order, until the run is done and all are out. */
  private async report(first: BlockEvent[], done: () => boolean): Promise<void> {
    let pending = [...first];
    for (;;) {
      // A step's start moves the status too (current_step): published even without events.
      let moved = false;
      for (const r of this.reports.splice(0)) {
        pending.push(...this.take(r));
        moved = true;
      }
      if (pending.length || moved) {
        const events = pending;
        pending = [];
        const r = await localRelay.publishDagEvents({
          taskId: this.input.taskId,
          session: this.input.session,
          offset: this.published,
          floor: this.seq.get(),
          events,
          view: { ...this.view },
        });
        this.published += events.length;
        this.seq.set(r.lastSeq);
        if (r.lost) this.relayLost = true;
        continue;
      }
      if (done()) return;
      await condition(() => this.reports.length > 0 || done());
    }
  }

  /** A report's events, with the status they move. */
  private take(r: StepReport): BlockEvent[] {
    const key = `${r.workflow_id}/${r.step_id}`;
    const shown = this.view.workflows?.find((w) => w.id === r.workflow_id)?.steps.find((s) => s.id === r.step_id);
    if (shown) shown.status = r.status === 'started' ? 'running' : r.status;
    if (r.status === 'started') {
      this.runningSteps.add(key);
      this.view.current_step = [...this.runningSteps].join(',');
      return [];
    }
    this.runningSteps.delete(key);
    this.finished++;
    const progress = this.finished / this.total;
    // The status stays short of 1 until the task itself has answered.
    this.view.progress = Math.min(0.95, progress);
    this.view.current_step = [...this.runningSteps].join(',') || null;
    const events: BlockEvent[] = [stepEndEvent({ ...r, status: r.status }), { type: 'agent_progress', progress }];
    this.blocks.push(...events);
    // The step's workflow published its end already (runs since STEP_END_PATCH): only the progress is left.
    if (!r.published) return events;
    this.seq.set(Math.max(this.seq.get(), r.published.seq));
    return events.slice(1);
  }
}

function contextOf(workflows: DagWorkflow[], results: StepOutcome[][]): string {
  const lines = ['', '', 'The workflows of this request have run. Their steps and results:'];
  workflows.forEach((w, i) => {
    lines.push(`Workflow "${w.name}" (${w.id}):`);
    for (const s of results[i]) lines.push(resultLine(s));
  });
  lines.push('Answer the request with these results in view.');
  return lines.join('\n');
}
