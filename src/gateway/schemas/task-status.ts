// A task's status and its gated tool calls in the API's answers: the status every task answer
// carries, the calls waiting for a decision (GET /tasks/{id}, GET /tasks/{id}/approvals) and the
// decisions (POST /tasks/{id}/approvals/{tool_call_id}).
import { z } from 'zod';
import { TASK_STATUSES, type TaskStatus } from '../../../workflows/types';
import type { ApprovalsPage } from '../services/approval-service';
import type { RewindAnswer } from '../services/rewind-service';
import { same } from './same-type';

export const taskStatusSchema = z
  .enum(TASK_STATUSES)
  .describe(
    'queued → running → completed | failed | cancelled; input_required while a tool call waits for a decision (approvals), then running again.',
  );

export const pendingApprovalSchema = z
  .object({
    tool_call_id: z.string().describe('The call; POST /tasks/{id}/approvals/{tool_call_id} decides it.'),
    tool: z.string().describe('The tool as the model called it.'),
    input: z.unknown().describe("The call's arguments as the model wrote them (parsed JSON)."),
    since: z.string().describe('When it began to wait (ISO 8601).'),
    timeout_at: z.string().describe('When it stops waiting: its require_approval on_timeout then applies (ISO 8601).'),
    workflow_id: z
      .string()
      .optional()
      .describe("A workflow step's call: the step's child workflow (in the Web UI), where it waits."),
  })
  .describe('A tool call waiting for a decision.');

const approvalDecisionOutSchema = z
  .object({
    tool_call_id: z.string(),
    decision: z.enum(['approve', 'deny']),
    by: z.enum(['user', 'timeout']).describe('user: a decision was posted; timeout: none came in time (a denial).'),
    reason: z.string().optional(),
    input: z.unknown().optional().describe('The arguments the call ran with, when the decision edited them.'),
    decided_at: z.string().describe('ISO 8601.'),
    workflow_id: z.string().optional().describe("A workflow step's call: the step's child workflow."),
  })
  .describe('A decision on a gated call; the same decision posted again answers this one.');
export { approvalDecisionOutSchema as approvalDecisionSchema };

export const approvalsPageSchema = z
  .object({
    task_id: z.string(),
    status: taskStatusSchema,
    pending: z.array(pendingApprovalSchema).describe('The calls waiting for a decision, oldest first.'),
    decided: z.array(approvalDecisionOutSchema).describe('The decisions made so far, in order.'),
  })
  .describe("A task's gated tool calls.");
same<z.output<typeof approvalsPageSchema>, ApprovalsPage>(true);
same<z.output<typeof taskStatusSchema>, TaskStatus>(true);

export const rewindAnswerSchema = z
  .object({
    task_id: z.string(),
    run_id: z.string().describe('The Temporal run the task goes on in (the Web UI shows the reset that made it).'),
    step: z.number().int().min(1).describe('The model turn it went back to.'),
    status: taskStatusSchema,
    superseded_seqs: z
      .object({ from_seq: z.number().int().min(1), to_seq: z.number().int().min(1) })
      .nullable()
      .describe("The abandoned branch's events, still readable by seq, marked superseded: true."),
    side_effects: z
      .array(
        z.object({
          tool_call_id: z.string(),
          tool: z.string(),
          step: z.number().int().min(0).describe('The model turn that made the call.'),
          state: z
            .enum(['completed', 'failed', 'started', 'scheduled'])
            .describe('completed or failed: it ran; started: it may have; scheduled: it never started.'),
        }),
      )
      .describe(
        'Calls of the abandoned branch that may have acted on the world (commands, edits, browser actions, MCP tools): their effects stay.',
      ),
  })
  .describe('The task went back to just before the turn and runs again from there.');
same<z.output<typeof rewindAnswerSchema>, RewindAnswer>(true);

export const workflowViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    steps: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        depends_on: z.array(z.string()).describe('The steps it waits for.'),
        status: z
          .enum(['pending', 'running', 'completed', 'skipped', 'failed', 'cancelled'])
          .describe(
            'pending: waiting for the steps it depends on (or never run, its run having ended); running: started; then how it ended (cancelled: stopped because its run failed or was cancelled).',
          ),
      }),
    ),
  })
  .describe('A declarative workflow of the task, as it stands: the web console draws it as a graph.');
