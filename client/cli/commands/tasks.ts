// agent tasks: the account's tasks, newest first, one page as a table.
import type { TaskStatus } from '../../types';
import { intOption, stringOption, UsageError, type Command } from '../args';
import { statusText, table, when } from '../format';

// The client takes only types from the service, so the list is written here; the compiler holds it
// to the service's TaskStatus (no status missing, none unknown).
const STATUSES = [
  'queued',
  'running',
  'input_required',
  'completed',
  'failed',
  'cancelled',
] as const satisfies readonly TaskStatus[];
const EVERY_STATUS: [Exclude<TaskStatus, (typeof STATUSES)[number]>] extends [never] ? true : never = true;
void EVERY_STATUS;

export const tasksCommand: Command = {
  name: 'tasks',
  summary: 'List your tasks, newest first.',
  usage: 'agent tasks [--status S] [--session S] [--schedule ID] [--limit N] [--cursor C] [--json]',
  help: [
    `--status S    only tasks in this status (${STATUSES.join(', ')})`,
    '--session S   only tasks of this session',
    '--schedule ID only tasks this schedule started (agent schedules lists them)',
    '--limit N     tasks per page, 1-100 (default 20)',
    '--cursor C    the page after the one that printed this cursor',
    '--json        print the page as JSON',
  ],
  options: {
    status: { type: 'string' },
    session: { type: 'string' },
    schedule: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    json: { type: 'boolean' },
  },
  positionals: { min: 0, max: 0 },
  async run(ctx, values) {
    const status = stringOption(values, 'status');
    if (status !== undefined && !(STATUSES as readonly string[]).includes(status))
      throw new UsageError(`--status must be one of ${STATUSES.join(', ')}, got ${status}`);
    const filters = {
      status: status as TaskStatus | undefined,
      session: stringOption(values, 'session'),
      schedule: stringOption(values, 'schedule'),
      limit: intOption(values, 'limit', 1, 100),
    };
    const page = await ctx.client().tasks.list({ ...filters, cursor: stringOption(values, 'cursor') });
    if (values.json) {
      ctx.out.line(JSON.stringify(page));
      return 0;
    }
    if (!page.tasks.length) {
      ctx.out.errLine('no tasks');
      return 0;
    }
    const rows = page.tasks.map((t) => [
      t.task_id,
      statusText(ctx.out, t.status),
      when(t.created_at),
      t.session,
      t.preview,
    ]);
    ctx.out.line(table(['TASK', 'STATUS', 'CREATED (UTC)', 'SESSION', 'MESSAGE'], rows, ctx.out.columns));
    // The cursor goes with the query that made it: the hint repeats the filters.
    const again = Object.entries(filters).flatMap(([k, v]) => (v === undefined ? [] : [`--${k} ${v}`]));
    if (page.next_cursor) ctx.out.errLine(`more: agent tasks ${[...again, `--cursor ${page.next_cursor}`].join(' ')}`);
    return 0;
  },
};
