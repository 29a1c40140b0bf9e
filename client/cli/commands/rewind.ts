// agent rewind <task> --step N: the task goes back to just before its model turn N and runs again.
import { intOption, stringOption, UsageError, type Command } from '../args';

export const rewindCommand: Command = {
  name: 'rewind',
  summary: 'Send a task back to just before one of its model turns; it runs again from there.',
  usage: 'agent rewind <task> --step N [--message TEXT [--replace]] [--json]',
  help: [
    '--step N      the model turn to go back to (agent tail shows [step N] lines)',
    '--message T   a message the model reads there, added to the thread',
    '--replace     the message replaces the last user message before the turn',
    '--json        print the answer as JSON',
  ],
  options: {
    step: { type: 'string' },
    message: { type: 'string' },
    replace: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  positionals: { min: 1, max: 1 },
  async run(ctx, values, [task]) {
    const step = intOption(values, 'step', 1, Number.MAX_SAFE_INTEGER);
    if (step === undefined) throw new UsageError('--step N is required');
    const message = stringOption(values, 'message');
    if (values.replace && message === undefined) throw new UsageError('--replace needs --message');
    const r = await ctx.client().tasks.rewind(task, {
      step,
      ...(message !== undefined && { message }),
      ...(values.replace === true && { replace: true }),
    });
    if (values.json) {
      ctx.out.line(JSON.stringify(r));
      return 0;
    }
    ctx.out.line(`${r.task_id}: back to turn ${r.step}, running again (run ${r.run_id})`);
    if (r.superseded_seqs)
      ctx.out.errLine(`events ${r.superseded_seqs.from_seq}-${r.superseded_seqs.to_seq} are superseded`);
    for (const e of r.side_effects)
      ctx.out.errLine(`already happened: ${e.tool} (${e.tool_call_id}, turn ${e.step}): ${e.state}`);
    return 0;
  },
};
