// One declarative workflow of a request (SPEC 2.3), a child workflow of its
// task (`<task>:<workflow>`): each step starts as soon as every step it
// depends on is done, as a child workflow of its own; steps with nothing to
// wait for start together. An optional step that fails after its retries is
// skipped (its dependents run, told so); a required one fails the workflow,
// naming it, and cancels the steps still running. The task hears of each
// step's start and end (dagStepSignal) for its events and its status.
import { ApplicationFailure, CancellationScope, condition, defineSignal, executeChild, getExternalWorkflowHandle, isCancellation } from '@temporalio/workflow';
import type { RetryPolicy } from '@temporalio/common';
import type { DagStep, DagWorkflow, TaskInput, Usage } from './types';
import { dagStep, StepInputItem } from './dag-step';

export interface DagWorkflowInput {
  task: TaskInput;
  workflow: DagWorkflow;
}

export interface StepOutcome extends StepInputItem {
  usage?: Usage;
}

export interface StepReport {
  workflow_id: string;
  step_id: string;
  name: string;
  status: 'started' | 'completed' | 'skipped' | 'failed';
  usage?: Usage;
}

export const dagStepSignal = defineSignal<[StepReport]>('dagStep');

export const STEP_FAILED = 'step_failed';

/** A step without a retry_policy: three attempts, 1 s then 2 s apart (documented in the README). */
export const DEFAULT_STEP_RETRY: RetryPolicy = { maximumAttempts: 3, initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' };

export function dagWorkflowId(taskId: string, workflowId: string): string {
  return `${taskId}:${workflowId}`;
}

export async function dagWorkflow(input: DagWorkflowInput): Promise<StepOutcome[]> {
  const { task, workflow } = input;
  const parent = getExternalWorkflowHandle(task.taskId);
  // A report the task cannot take (it has closed) changes nothing here.
  const tell = (step: DagStep, status: StepReport['status'], usage?: Usage) =>
    parent.signal(dagStepSignal, { workflow_id: workflow.id, step_id: step.id, name: step.name, status, ...(usage && { usage }) }).catch(() => undefined);
  const outcomes = new Map<string, StepOutcome>();
  const started = new Set<string>();
  const steps = new CancellationScope();
  let running = 0;
  let failure: ApplicationFailure | undefined;

  const run = async (step: DagStep) => {
    running++;
    try {
      // Not awaited: the step starts at once (the report goes out in the same workflow task).
      void tell(step, 'started');
      const inputs = step.depends_on.map((d) => outcomes.get(d)!).map(({ usage: _u, ...item }) => item);
      const r = await steps.run(() =>
        executeChild(dagStep, { workflowId: `${dagWorkflowId(task.taskId, workflow.id)}:${step.id}`, args: [{ task, workflow: { id: workflow.id, name: workflow.name, description: workflow.description }, step, inputs }], retry: retryPolicyOf(step) }),
      );
      outcomes.set(step.id, { id: step.id, name: step.name, status: 'completed', output: r.output, usage: r.usage });
      // Reported (delivered to the task) before its dependents start: the stream shows a step's end before their events.
      await tell(step, 'completed', r.usage);
    } catch (err) {
      if (isCancellation(err) && (failure || CancellationScope.current().consideredCancelled)) return;
      const why = reason(err);
      if (step.optional) {
        outcomes.set(step.id, { id: step.id, name: step.name, status: 'skipped', error: why });
        await tell(step, 'skipped');
      } else {
        failure ??= ApplicationFailure.create({ type: STEP_FAILED, message: `step "${step.name}" (${step.id}) of workflow "${workflow.name}" failed: ${why}`, nonRetryable: true });
        await tell(step, 'failed');
        steps.cancel();
      }
    } finally {
      running--;
    }
    startReady();
  };

  const startReady = () => {
    if (failure) return;
    for (const s of workflow.steps) {
      if (!started.has(s.id) && s.depends_on.every((d) => outcomes.has(d))) {
        started.add(s.id);
        void run(s);
      }
    }
  };

  startReady();
  try {
    await condition(() => running === 0 && (failure !== undefined || outcomes.size === workflow.steps.length));
  } catch (err) {
    // Cancelled (the task was): the steps are being cancelled too; close only once they have.
    if (isCancellation(err)) await CancellationScope.nonCancellable(() => condition(() => running === 0));
    throw err;
  }
  if (failure) throw failure;
  return workflow.steps.map((s) => outcomes.get(s.id)!);
}

function retryPolicyOf(step: DagStep): RetryPolicy {
  const r = step.retry_policy;
  if (!r) return DEFAULT_STEP_RETRY;
  return {
    maximumAttempts: r.max_attempts ?? DEFAULT_STEP_RETRY.maximumAttempts,
    backoffCoefficient: r.backoff === 'fixed' ? 1 : 2,
    initialInterval: (r.initial_interval ?? 1) * 1000,
    ...(r.max_interval !== undefined && { maximumInterval: r.max_interval * 1000 }),
  };
}

/** What failed, from a child's failure: the innermost message. */
function reason(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  while (e?.cause && (e.cause as { message?: string }).message) e = e.cause as typeof e;
  return e?.message ?? 'the step failed';
}
