// agent task <id>: one task's status view.
import type { Command } from '../args';
import { statusText, when } from '../format';

export const taskCommand: Command = {
  name: 'task',
  summary: "Show a task's status, progress, error and metadata.",
  usage: 'agent task <id> [--json]',
  help: ['--json        print the task as JSON'],
  options: { json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  async run(ctx, values, [id]) {
    const t = await ctx.client().tasks.get(id);
    if (values.json) {
      ctx.out.line(JSON.stringify(t));
      return 0;
    }
    const rows: [string, string][] = [
      ['task', t.task_id],
      ['status', statusText(ctx.out, t.status)],
      ['session', t.session],
      ['progress', `${Math.round(t.progress * 100)}%`],
      ['step', t.current_step ?? '-'],
      ['created', when(t.created_at)],
      ['started', when(t.started_at)],
      ['completed', when(t.completed_at)],
    ];
    if (t.error) rows.push(['error', `${t.error.type}: ${t.error.message}`]);
    // Set only while a model or tool call is being retried: why the task seems to stand still.
    if (t.attempt)
      rows.push([
        'attempt',
        `${t.attempt}${t.last_error ? ` (last: ${t.last_error.type}: ${t.last_error.message})` : ''}`,
      ]);
    if (Object.keys(t.metadata).length) rows.push(['metadata', JSON.stringify(t.metadata)]);
    for (const [k, v] of rows) ctx.out.line(`${ctx.out.paint('bold', k.padEnd(10))} ${v}`);
    return 0;
  },
};
