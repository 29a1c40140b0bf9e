// agent approvals <task>, agent approve <task> <call>, agent deny <task> <call>: a task's tool
// calls that wait for a person's decision, and the decision (docs/approvals.md).
import { secondsOption, stringOption, UsageError, type Command } from '../args';
import { table, when } from '../format';
import type { AgentClient } from '../../client';
import type { TaskApprovals } from '../../types';

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/** The task's approvals, once a call waits (or the task has finished, or `seconds` have passed). */
async function waitForPending(client: AgentClient, task: string, seconds: number): Promise<TaskApprovals> {
  const until = Date.now() + seconds * 1000;
  for (;;) {
    const page = await client.tasks.approvals(task);
    if (page.pending.length || FINISHED.has(page.status) || Date.now() >= until) return page;
    await new Promise((r) => setTimeout(r, 500));
  }
}

export const approvalsCommand: Command = {
  name: 'approvals',
  summary: "List a task's tool calls that wait for a decision, and those decided.",
  usage: 'agent approvals <task> [--wait S] [--json]',
  help: [
    '--wait S      wait up to S seconds for a call to wait for a decision (or the task to finish)',
    '--json        print the answer as JSON',
  ],
  options: { wait: { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  async run(ctx, values, [task]) {
    const page = await waitForPending(ctx.client(), task, secondsOption(values, 'wait') ?? 0);
    if (values.json) {
      ctx.out.line(JSON.stringify(page));
      return 0;
    }
    if (page.pending.length)
      ctx.out.line(
        table(
          ['CALL', 'TOOL', 'INPUT', 'WAITING SINCE', 'UNTIL'],
          page.pending.map((p) => [p.tool_call_id, p.tool, JSON.stringify(p.input), when(p.since), when(p.timeout_at)]),
          ctx.out.columns,
        ),
      );
    else ctx.out.errLine(`no call of ${task} waits for a decision (${page.status})`);
    for (const d of page.decided)
      ctx.out.errLine(`${d.tool_call_id}: ${d.decision} by ${d.by}${d.reason ? ` (${d.reason})` : ''}`);
    return 0;
  },
};

export const approveCommand: Command = {
  name: 'approve',
  summary: 'Approve a tool call that waits for a decision; --input runs it with other arguments.',
  usage: "agent approve <task> <call> [--input '<json>'] [--json]",
  help: [
    "--input JSON  the arguments the call runs with instead of the model's (they must fit the tool's parameters)",
    '--json        print the decision as JSON',
  ],
  options: { input: { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 2, max: 2 },
  async run(ctx, values, [task, call]) {
    const raw = stringOption(values, 'input');
    let input: unknown;
    if (raw !== undefined) {
      try {
        input = JSON.parse(raw);
      } catch (err) {
        throw new UsageError(`--input is not JSON: ${(err as Error).message}`);
      }
    }
    const d = await ctx.client().tasks.approve(task, call, input);
    ctx.out.line(values.json ? JSON.stringify(d) : `${d.tool_call_id}: ${d.decision}d`);
    return 0;
  },
};

export const denyCommand: Command = {
  name: 'deny',
  summary: 'Deny a tool call that waits for a decision; the model reads --reason.',
  usage: 'agent deny <task> <call> [--reason TEXT] [--json]',
  help: ["--reason TEXT why (the model reads it in the call's result)", '--json        print the decision as JSON'],
  options: { reason: { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 2, max: 2 },
  async run(ctx, values, [task, call]) {
    const d = await ctx.client().tasks.deny(task, call, stringOption(values, 'reason'));
    ctx.out.line(
      values.json ? JSON.stringify(d) : `${d.tool_call_id}: ${d.decision === 'deny' ? 'denied' : d.decision}`,
    );
    return 0;
  },
};
