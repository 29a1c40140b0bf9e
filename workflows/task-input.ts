// A task's input as the workflows read it. Inputs have two shapes: the grouped TaskInput of
// today (workflows/types.ts), and the flat one every run started before it carries, in its
// history and in every history it continues or starts children from (FlatTaskInput below). Each
// workflow entry that takes a task's input (agentTask, dagWorkflow, dagStep, and scheduledRun's
// prepared task) reads it with readTaskInput, so runs in flight and saved histories go on with the
// same commands, whichever shape they carry. Pure code: bundled into the workflow sandbox.
import type {
  CallbackConfig,
  DagStepRun,
  DagWorkflow,
  FinalOutputSpec,
  HandoffAgent,
  McpServerConfig,
  Mode,
  Price,
  RequestedDatastore,
  RequestedQuery,
  RunCarry,
  ScheduledSummary,
  TaskAdmission,
  TaskInput,
  TaskLimits,
  TaskRequest,
} from './types';

/**
 * A task's input as runs started before the grouped shape carry it: every field at the top.
 * Frozen as it was (a field renamed in a group must still be read from here by its old name).
 */
export interface FlatTaskInput {
  taskId: string;
  account: string;
  session: string;
  message: string;
  system?: string;
  rules?: string[];
  mode: Mode;
  streamTokens: boolean;
  background: boolean;
  createdAt: string;
  metadata: Record<string, unknown>;
  multitask: 'queue' | 'reject';
  modelHeartbeatTimeoutMs: number;
  slots?: { limit: number };
  maxSteps: number;
  maxCost?: number;
  maxDurationMs?: number;
  tools: string[];
  toolResultMaxChars: number;
  mcpServers?: McpServerConfig[];
  agents?: HandoffAgent[];
  datastores?: RequestedDatastore[];
  queries?: RequestedQuery[];
  mcpCallTimeoutMs?: number;
  mcpConnectTimeoutMs?: number;
  callback?: CallbackConfig;
  carry?: RunCarry;
  price?: Price;
  joinGraceMs?: number;
  ownsTurn?: boolean;
  joinsSession?: boolean;
  workflows?: DagWorkflow[];
  step?: DagStepRun;
  finalOutput?: FinalOutputSpec;
  schedules?: ScheduledSummary[];
}

/** A task's input in either shape: what a workflow entry may be handed. */
export type AnyTaskInput = TaskInput | FlatTaskInput;

/** The grouped input, whichever shape `raw` has: grouped as it is, a flat one with each field in its group. */
export function readTaskInput(raw: AnyTaskInput): TaskInput {
  return isGrouped(raw) ? raw : groupFlat(raw);
}

function isGrouped(raw: AnyTaskInput): raw is TaskInput {
  const request = (raw as Partial<TaskInput>).request;
  return typeof request === 'object' && request !== null;
}

/**
 * A flat input's fields, each in its group; a field it lacks stays absent (not present as
 * undefined). Each group is typed as it is built, so a field put in the wrong group does not compile.
 */
function groupFlat(flat: FlatTaskInput): TaskInput {
  const { taskId, account, session, createdAt, step, carry } = flat;
  const { message, system, rules, mode, streamTokens, metadata, mcpServers, agents } = flat;
  const { datastores, queries, workflows, finalOutput, callback, schedules } = flat;
  const { maxSteps, maxCost, maxDurationMs, tools, toolResultMaxChars, modelHeartbeatTimeoutMs } = flat;
  const { mcpCallTimeoutMs, mcpConnectTimeoutMs, price } = flat;
  const { background, multitask, slots, joinGraceMs, ownsTurn, joinsSession } = flat;
  return present<TaskInput>({
    taskId,
    account,
    session,
    createdAt,
    request: present<TaskRequest>({
      message,
      system,
      rules,
      mode,
      streamTokens,
      metadata,
      mcpServers,
      agents,
      datastores,
      queries,
      workflows,
      finalOutput,
      callback,
      schedules,
    }),
    limits: present<TaskLimits>({
      maxSteps,
      maxCost,
      maxDurationMs,
      tools,
      toolResultMaxChars,
      modelHeartbeatTimeoutMs,
      mcpCallTimeoutMs,
      mcpConnectTimeoutMs,
      price,
    }),
    admission: present<TaskAdmission>({ background, multitask, slots, joinGraceMs, ownsTurn, joinsSession }),
    step,
    carry,
  });
}

/** `o` without its undefined fields: what a field absent from the flat input stays in its group. */
function present<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
