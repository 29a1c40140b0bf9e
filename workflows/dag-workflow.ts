// One declarative workflow of a request (SPEC 2.3), a child workflow of its
// task (`<task>:<workflow>`): each step starts as soon as every step it
// depends on is done, as a child workflow of its own; steps with nothing to
// wait for start together. An optional step that fails after its retries is
// skipped (its dependents run, told so); a required one fails the workflow,
// naming it, and cancels the steps still running. A step's end is published
// here (agent_step), before its dependents start, so the stream shows it
// before any of their events; the task hears of each step's start and end
// (dagStepSignal) for its progress, its status and its result.
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
} from '@temporalio/workflow';
import type { RetryPolicy } from '@temporalio/common';
import type { BlockEvent, DagStep, DagWorkflow, Usage } from './types';
import { type AnyTaskInput, readTaskInput } from './task-input';
import { dagStep, StepInputItem } from './dag-step';
import { innermostFailure } from './failure-cause';
import { dagStepSignal, dagWorkflowId } from './definitions';
import { localRelay } from './local-relay';

export interface DagWorkflowInput {
  /** The task's input, in either shape (runs started before the grouped input carry it flat). */
  task: AnyTaskInput;
  workflow: DagWorkflow;
}

export interface StepOutcome extends StepInputItem {
  usage?: Usage;
}

/** A step's end, as its child workflow ended. */
interface StepEnd {
  step: DagStep;
  status: 'completed' | 'skipped' | 'failed';
  output?: unknown;
  usage?: Usage;
  /** Why it failed (skipped or failed). */
  error?: string;
}

export interface StepReport {
  workflow_id: string;
  step_id: string;
  name: string;
  status: 'started' | 'completed' | 'skipped' | 'failed';
  usage?: Usage;
  /** The step's end is on the stream already (published by its workflow), at this seq. */
  published?: { seq: number };
}

export const STEP_FAILED = 'step_failed';

/** A step without a retry_policy: three attempts, 1 s then 2 s apart (documented in docs/api.md). */
export const DEFAULT_STEP_RETRY: RetryPolicy = {
  maximumAttempts: 3,
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '1m',
};

/**
 * Runs from before this patch left a step's end to the task, and started the
 * dependents once the report was delivered: the task could still publish it
 * after their first events.
 */
export const STEP_END_PATCH = 'dag-step-end-published-by-its-workflow';

/**
 * Runs from before this patch settled each step's end on its own, at once: when
 * two ends' local activities resolved in separate workflow tasks live but together
 * on replay, the commands that followed came out in another order, and the run
 * failed replay (nondeterminism). Runs since settle ends one at a time.
 */
export const SERIAL_ENDS_PATCH = 'dag-step-ends-one-at-a-time';

/** A step's end as an event: `step` is `<workflow>/<step>`. */
export function stepEndEvent(r: StepReport & { status: 'completed' | 'skipped' | 'failed' }): BlockEvent {
  const usage = r.usage && {
    usage: { prompt_tokens: r.usage.promptTokens, completion_tokens: r.usage.completionTokens },
  };
  return {
    type: 'agent_step',
    step: `${r.workflow_id}/${r.step_id}`,
    workflow_id: r.workflow_id,
    step_id: r.step_id,
    name: r.name,
    status: r.status,
    ...usage,
  };
}

// eslint-disable-next-line max-lines-per-function -- the DAG's scheduler: its start, publish and settle closures, each short, share the running count and outcomes; workflow code is held to saved histories, so it is not reshaped for length
export async function dagWorkflow(input: DagWorkflowInput): Promise<StepOutcome[]> {
  const { workflow } = input;
  const task = readTaskInput(input.task);
  // Runs since this patch settle their steps' ends one at a time (see SERIAL_ENDS_PATCH).
  const serial = patched(SERIAL_ENDS_PATCH);
  const parent = getExternalWorkflowHandle(task.taskId);
  // A report the task cannot take (it has closed) changes nothing here.
  const report = (step: DagStep, status: StepReport['status'], usage?: Usage): StepReport => ({
    workflow_id: workflow.id,
    step_id: step.id,
    name: step.name,
    status,
    ...(usage && { usage }),
  });
  const tell = (r: StepReport) => parent.signal(dagStepSignal, r).catch(() => undefined);
  // Delivered before this workflow closes, so the task has every end before it goes on.
  const endReports: Promise<unknown>[] = [];
  const reportsDelivered = () => CancellationScope.nonCancellable(() => Promise.all(endReports));
  const outcomes = new Map<string, StepOutcome>();
  const started = new Set<string>();
  const steps = new CancellationScope();
  /** Steps started whose end is not settled yet. */
  let running = 0;
  let failure: ApplicationFailure | undefined;

  // A step's end, on the stream before its dependents start; the task hears of it without holding them back.
  const publish = async (end: StepEnd) => {
    const r = { ...report(end.step, end.status, end.usage), status: end.status };
    // Runs since SERIAL_ENDS_PATCH came after STEP_END_PATCH: no need to ask for it.
    if (!serial && !patched(STEP_END_PATCH)) return tell(r);
    // Not published (the relay was down, or stayed down through the retries): the task publishes it itself.
    const published = await localRelay
      .publishStepEnd({
        taskId: task.taskId,
        session: task.session,
        producer: `dag:${workflow.id}:${end.step.id}`,
        event: stepEndEvent(r),
      })
      .then(
        ({ lastSeq, lost }) => (lost ? undefined : { published: { seq: lastSeq } }),
        () => undefined,
      );
    endReports.push(tell({ ...r, ...published }));
  };

  /** Records a step's end, publishes it, then starts what it made ready (or cancels the rest when it failed). */
  const settle = async (end: StepEnd) => {
    const { step } = end;
    if (end.status === 'failed')
      failure ??= ApplicationFailure.create({
        type: STEP_FAILED,
        message: `step "${step.name}" (${step.id}) of workflow "${workflow.name}" failed: ${end.error}`,
        nonRetryable: true,
      });
    else
      outcomes.set(step.id, {
        id: step.id,
        name: step.name,
        status: end.status,
        ...(end.status === 'completed' ? { output: end.output, usage: end.usage } : { error: end.error }),
      });
    await publish(end);
    if (end.status === 'failed') steps.cancel();
    running--;
    startReady();
  };

  // One end at a time, in the order the steps ended: each end's commands (its publication, its
  // report, the steps it starts) come out whole and in one order, whether the local activities'
  // results arrive one per workflow task (a live run) or together (the same run rebuilt from history).
  const ends: StepEnd[] = [];
  let draining = false;
  const drain = async () => {
    draining = true;
    for (let end = ends.shift(); end; end = ends.shift()) await settle(end);
    draining = false;
  };

  const run = async (step: DagStep) => {
    running++;
    // Not awaited: the step starts at once (the report goes out in the same workflow task).
    void tell(report(step, 'started'));
    const inputs = step.depends_on.map((d) => outcomes.get(d)!).map(({ usage: _u, ...item }) => item);
    let end: StepEnd | undefined;
    try {
      const r = await steps.run(() =>
        executeChild(dagStep, {
          workflowId: `${dagWorkflowId(task.taskId, workflow.id)}:${step.id}`,
          args: [
            {
              task,
              workflow: { id: workflow.id, name: workflow.name, description: workflow.description },
              step,
              inputs,
            },
          ],
          retry: retryPolicyOf(step),
        }),
      );
      end = { step, status: 'completed', output: r.output, usage: r.usage };
    } catch (err) {
      // Cancelled because another step failed or the task was cancelled: not an end of its own.
      if (!(isCancellation(err) && (failure || steps.consideredCancelled)))
        end = { step, status: step.optional ? 'skipped' : 'failed', error: reason(err) };
    }
    if (!end) {
      running--;
      return;
    }
    if (!serial) return settle(end);
    ends.push(end);
    if (!draining) void CancellationScope.nonCancellable(drain);
  };

  const startReady = () => {
    if (failure || (serial && steps.consideredCancelled)) return;
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
    await reportsDelivered();
    throw err;
  }
  await reportsDelivered();
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
  return innermostFailure(err)?.message ?? 'the step failed';
}
