// One step of a declarative workflow (SPEC 2.4): the agent loop, with the
// task's tools, on the step's description, the request, and the outputs of
// the steps it depends on. Its own child workflow (id `<task>:<workflow>:<step>`
// in the Web UI), so Temporal retries it under the step's retry_policy and a
// finished step is never run again. Its events go to the task's stream,
// tagged with the workflow and step ids.
import {
  ApplicationFailure,
  continueAsNew,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DagStep, DagWorkflow, TaskInput, Usage } from './types';
import { type AnyTaskInput, readTaskInput } from './task-input';
import { AgentLoop, LoopState } from './agent-loop';
import { threadPage } from './run-events';
import { recoverLostEvents } from './relay-recovery';
import { stepApprovalsSignal, threadQuery } from './definitions';
import { ApprovalGates } from './approval-gates';

/** What a step is told of a step it depends on. */
export interface StepInputItem {
  id: string;
  name: string;
  status: 'completed' | 'skipped';
  /** The step's output (parsed JSON when it has an output_schema); absent when skipped. */
  output?: unknown;
  /** Why a skipped step failed. */
  error?: string;
}

export interface StepRunInput {
  /**
   * The task's input: the request's settings and tools (its own fields for a task's run are not used).
   * Either shape: runs started before the grouped input carry it flat.
   */
  task: AnyTaskInput;
  workflow: Pick<DagWorkflow, 'id' | 'name' | 'description'>;
  step: DagStep;
  inputs: StepInputItem[];
  /** What a step that grew a large history hands its continuation. */
  carry?: LoopState;
}

export interface StepResult {
  /** The answer: parsed JSON with an output_schema, else the text. */
  output: unknown;
  usage: Usage;
}

export const STEP_OUTPUT_INVALID = 'step_output_invalid';

const checks = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3 } });

// eslint-disable-next-line max-lines-per-function -- one step's run in order (prepare, loop, recover lost events, check the output); workflow code is held to saved histories, so it is not reshaped for length
export async function dagStep(input: StepRunInput): Promise<StepResult> {
  const info = workflowInfo();
  const { step } = input;
  const task = readTaskInput(input.task);
  const prompt = stepPrompt(input, task.request.message);
  const state: LoopState = input.carry ?? {
    thread: [{ role: 'user', content: prompt }],
    blocks: [],
    step: 0,
    usage: { promptTokens: 0, completionTokens: 0 },
    seqFloor: 0,
    inbox: [],
    pending: [],
    output: '',
  };
  setHandler(threadQuery, (from) => threadPage(state.thread, from));
  const runInput: TaskInput = {
    ...task,
    request: {
      ...task.request,
      message: prompt,
      workflows: undefined,
      finalOutput: undefined,
      callback: undefined,
      schedules: undefined,
    },
    carry: undefined,
    step: {
      tag: { workflow_id: input.workflow.id, step_id: step.id },
      threadWorkflowId: info.workflowId,
      // Each attempt of the step is its own producer: a retried step publishes anew.
      producerPrefix: `${info.workflowId}#${info.attempt}:`,
      ...(step.output_schema && {
        responseFormat: {
          type: 'json_schema',
          json_schema: { name: schemaName(step.id), strict: false, schema: step.output_schema },
        },
      }),
    },
  };
  const loop = new AgentLoop(
    runInput,
    state,
    () => 0,
    () => ({}),
  );
  loop.gates = stepGates(runInput, state, info.workflowId);
  await loop.prepare(undefined);
  const end = await loop.run();
  if (end.kind === 'continue') return await continueAsNew<typeof dagStep>({ ...input, task, carry: state });
  // The relay failed to take some of the step's events: what it lacks goes out again from the step's record.
  if (state.relayLost) {
    await recoverLostEvents(
      {
        taskId: task.taskId,
        session: task.session,
        floor: state.seqFloor,
        producer: `${runInput.step!.producerPrefix}recovered`,
        record: state.blocks,
        tag: runInput.step!.tag,
      },
      { patient: true },
    );
  }
  if (end.kind === 'cap') throw ApplicationFailure.create({ type: end.type, message: end.message, nonRetryable: true });
  if (!step.output_schema) return { output: state.output, usage: state.usage };
  const judged = await checks.checkStepOutput({ schema: step.output_schema, text: state.output });
  // A misfit fails this attempt: the step's retry policy decides whether another comes.
  if ('errors' in judged)
    throw ApplicationFailure.create({
      type: STEP_OUTPUT_INVALID,
      message: `the answer does not fit the step's output_schema: ${judged.errors.join('; ')}`,
    });
  return { output: judged.output, usage: state.usage };
}

/**
 * A step's approval gates: a gated call waits in the step, as in a task's own run, and the step
 * tells its task what waits and what was decided (the task shows them and is input_required); the
 * gateway sends a decision here, to the step's workflow.
 */
function stepGates(runInput: TaskInput, state: LoopState, workflowId: string): ApprovalGates {
  const task = getExternalWorkflowHandle(runInput.taskId);
  const decisions = (state.decisions ??= []);
  return new ApprovalGates(runInput, decisions, {
    waiting: (pending) => {
      void task.signal(stepApprovalsSignal, { workflowId, pending, decided: [...decisions] }).catch(() => undefined);
      return undefined;
    },
    floor: () => state.seqFloor,
    heard: (lastSeq, relayLost) => {
      state.seqFloor = Math.max(state.seqFloor, lastSeq);
      if (relayLost) state.relayLost = true;
    },
    record: async (event) => void state.blocks.push(event),
    ending: () => false,
  });
}

/** The step's own message: the workflow, the step, the task's request (`request`), its dependencies' results. */
function stepPrompt(input: StepRunInput, request: string): string {
  const { workflow, step, inputs } = input;
  const lines = [
    `You are doing one step of the workflow "${workflow.name}" (${workflow.description}).`,
    `The step: ${step.name}. ${step.description}`,
    '',
    `The request the workflow serves: ${request}`,
  ];
  if (inputs.length) {
    lines.push('', 'Results of the steps this one depends on:');
    for (const i of inputs) lines.push(resultLine(i));
  }
  lines.push('', 'Do this step and answer with its result only.');
  return lines.join('\n');
}

/** One step's result as a prompt line: its output (JSON unless text), or why it was skipped. */
export function resultLine(s: StepInputItem): string {
  if (s.status === 'skipped') return `- ${s.name} (${s.id}): skipped, it failed (${s.error ?? 'no reason given'})`;
  return `- ${s.name} (${s.id}): ${typeof s.output === 'string' ? s.output : JSON.stringify(s.output)}`;
}

/** A response_format name from a step id (letters, digits, _ and -, at most 64). */
function schemaName(stepId: string): string {
  return `step_${stepId.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 64);
}
