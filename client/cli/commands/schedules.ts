// agent schedules: the account's schedules (made by `schedules` in a run
// request, or `agent run --schedule`), one page as a table.
import { intOption, stringOption, type Command } from '../args';
import { scheduleWhen, stateText, table, when } from '../format';

export const schedulesCommand: Command = {
  name: 'schedules',
  summary: 'List your schedules (agent schedule <id> shows one).',
  usage: 'agent schedules [--limit N] [--cursor C] [--json]',
  help: [
    '--limit N     schedules per page, 1-100 (default 20)',
    '--cursor C    the page after the one that printed this cursor',
    '--json        print the page as JSON',
  ],
  options: { limit: { type: 'string' }, cursor: { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 0, max: 0 },
  async run(ctx, values) {
    const limit = intOption(values, 'limit', 1, 100);
    const page = await ctx.client().schedules.list({ limit, cursor: stringOption(values, 'cursor') });
    if (values.json) {
      ctx.out.line(JSON.stringify(page));
      return 0;
    }
    if (!page.schedules.length) {
      ctx.out.errLine('no schedules');
      return 0;
    }
    const rows = page.schedules.map((s) => [
      s.schedule_id,
      scheduleWhen(s),
      when(s.next_run_at),
      stateText(ctx.out, s.state),
      s.session,
    ]);
    ctx.out.line(table(['SCHEDULE', 'WHEN', 'NEXT RUN (UTC)', 'STATE', 'SESSION'], rows, ctx.out.columns));
    if (page.next_cursor)
      ctx.out.errLine(
        `more: agent schedules${limit !== undefined ? ` --limit ${limit}` : ''} --cursor ${page.next_cursor}`,
      );
    return 0;
  },
};
