// A run's final output (SPEC 2.6), after its last answer: one model call over
// the whole thread held to the schema, and up to two repair calls that show
// the model what did not validate. The workflow decides; the activity calls
// the model and validates (activities/final-output.ts).
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { FinalOutputAnswer } from '../activities/final-output';
import type { FinalOutputSpec, RunMessage, TaskInput, Usage } from './types';
import { INLINE_THREAD_CHARS } from './agent-loop';
import { addUsage } from './types';

/** Repair calls after the first answer that did not validate. */
export const FINAL_OUTPUT_REPAIRS = 2;

export type FinalOutcome = { usage: Usage } & ({ output: unknown } | { errors: string[] });

export interface FinalOutputContext {
  sessionMessages: number;
  thread: RunMessage[];
  agent?: { name: string; description: string };
}

export async function finalOutputOf(
  input: TaskInput,
  spec: FinalOutputSpec,
  ctx: FinalOutputContext,
): Promise<FinalOutcome> {
  const acts = proxyActivities<Activities>({
    startToCloseTimeout: '10m',
    heartbeatTimeout: input.limits.modelHeartbeatTimeoutMs || 20_000,
    retry: {
      initialInterval: '1s',
      maximumInterval: '30s',
      maximumAttempts: 10,
      nonRetryableErrorTypes: ['ModelBadRequest'],
    },
  });
  let usage: Usage = { promptTokens: 0, completionTokens: 0 };
  const rejected: { text: string; errors: string[] }[] = [];
  for (;;) {
    const answer: FinalOutputAnswer = await acts.finalOutput({
      taskId: input.taskId,
      account: input.account,
      session: input.session,
      mode: input.request.mode,
      system: input.request.system,
      rules: input.request.rules,
      ...(ctx.agent && { agent: ctx.agent }),
      thread: { sessionMessages: ctx.sessionMessages, runMessages: ctx.thread.length },
      ...(JSON.stringify(ctx.thread).length <= INLINE_THREAD_CHARS && { runThread: ctx.thread }),
      spec,
      rejected,
    });
    usage = addUsage(usage, answer.usage);
    if ('output' in answer) return { usage, output: answer.output };
    rejected.push({ text: answer.text, errors: answer.errors });
    if (rejected.length > FINAL_OUTPUT_REPAIRS) return { usage, errors: answer.errors };
  }
}
