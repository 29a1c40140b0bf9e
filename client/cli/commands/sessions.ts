// agent sessions: the account's sessions, one page as a table.
import { intOption, stringOption, type Command } from '../args';
import { table, when } from '../format';

export const sessionsCommand: Command = {
  name: 'sessions',
  summary: 'List your sessions.',
  usage: 'agent sessions [--limit N] [--cursor C] [--json]',
  help: [
    '--limit N     sessions per page, 1-100 (default 20)',
    '--cursor C    the page after the one that printed this cursor',
    '--json        print the page as JSON',
  ],
  options: { limit: { type: 'string' }, cursor: { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 0, max: 0 },
  async run(ctx, values) {
    const page = await ctx
      .client()
      .sessions.list({ limit: intOption(values, 'limit', 1, 100), cursor: stringOption(values, 'cursor') });
    if (values.json) {
      ctx.out.line(JSON.stringify(page));
      return 0;
    }
    if (!page.sessions.length) {
      ctx.out.errLine('no sessions');
      return 0;
    }
    const rows = page.sessions.map((s) => [
      s.session,
      when(s.created_at),
      s.open ? ctx.out.paint('green', 'open') : 'closed',
    ]);
    ctx.out.line(table(['SESSION', 'CREATED (UTC)', 'STATE'], rows, ctx.out.columns));
    if (page.next_cursor) ctx.out.errLine(`more: agent sessions --cursor ${page.next_cursor}`);
    return 0;
  },
};
