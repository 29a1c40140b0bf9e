// agent cancel <id>: asks the service to cancel a running or queued task.
import type { Command } from '../args';

export const cancelCommand: Command = {
  name: 'cancel',
  summary: 'Cancel a queued or running task (it becomes cancelled shortly after).',
  usage: 'agent cancel <id> [--json]',
  help: ['--json        print the answer as JSON'],
  options: { json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  async run(ctx, values, [id]) {
    const t = await ctx.client().tasks.cancel(id);
    ctx.out.line(values.json ? JSON.stringify(t) : `cancel requested: ${t.task_id} (was ${t.status})`);
    return 0;
  },
};
