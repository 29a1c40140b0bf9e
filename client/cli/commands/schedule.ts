// agent schedule <id>: one schedule (its times, state, next runs and the tasks
// it started), or one action on it: --pause [--note], --unpause, --trigger
// (a task now) or --delete.
import type { ScheduleDetail } from '../../types';
import { stringOption, UsageError, type Command, type Context } from '../args';
import { scheduleWhen, stateText, when } from '../format';

const ACTIONS = ['pause', 'unpause', 'trigger', 'delete'] as const;

function show(ctx: Context, d: ScheduleDetail): void {
  const { out } = ctx;
  const state = stateText(out, d.state);
  const rows: [string, string[]][] = [
    ['schedule', [d.schedule_id]],
    ['session', [d.session]],
    ['when', [scheduleWhen(d)]],
    ['overlap', [d.overlap]],
    ['state', [d.note ? `${state} (note: ${d.note})` : state]],
    ['message', [d.message_preview]],
    ['created', [when(d.created_at)]],
    ['next runs', d.next_runs.length ? d.next_runs.map((t) => `${when(t)} UTC`) : ['- (none left)']],
    ['runs', [String(d.runs)]],
    ['running', d.running_tasks.length ? d.running_tasks : ['-']],
    [
      'recent tasks',
      d.recent_tasks.length
        ? d.recent_tasks.map((t) => `${t.task_id}  due ${when(t.scheduled_at)}, started ${when(t.started_at)}`)
        : ['-'],
    ],
  ];
  for (const [k, [first, ...more]] of rows) {
    out.line(`${out.paint('bold', k.padEnd(12))} ${first}`);
    for (const v of more) out.line(`${' '.repeat(12)} ${v}`);
  }
  if (d.runs) out.errLine(`all its tasks: agent tasks --schedule ${d.schedule_id}`);
}

export const scheduleCommand: Command = {
  name: 'schedule',
  summary: 'Show a schedule (next runs, recent tasks), or pause, unpause, trigger or delete it.',
  usage: 'agent schedule <id> [--pause [--note TEXT] | --unpause | --trigger | --delete] [--json]',
  help: [
    '--pause       pause it: its times pass without a task until --unpause',
    '--note TEXT   with --pause: why (shown with the schedule)',
    '--unpause     resume it from its next time',
    '--trigger     start a task of it now (even while paused)',
    '--delete      delete it: it starts no more tasks (its tasks stay)',
    "--json        print the schedule (or the action's answer) as JSON",
    'without an action: the schedule, its next runs and its recent tasks',
  ],
  options: {
    pause: { type: 'boolean' },
    note: { type: 'string' },
    unpause: { type: 'boolean' },
    trigger: { type: 'boolean' },
    delete: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  positionals: { min: 1, max: 1 },
  async run(ctx, values, [id]) {
    const given = ACTIONS.filter((a) => values[a]);
    if (given.length > 1)
      throw new UsageError(
        `give at most one of ${ACTIONS.map((a) => `--${a}`).join(', ')}, got ${given.map((a) => `--${a}`).join(' and ')}`,
      );
    const note = stringOption(values, 'note');
    if (note !== undefined && given[0] !== 'pause') throw new UsageError('--note goes with --pause');
    const schedules = ctx.client().schedules;
    const json = !!values.json;
    switch (given[0]) {
      case 'delete':
        await schedules.delete(id);
        ctx.out.line(
          json
            ? JSON.stringify({ schedule_id: id, deleted: true })
            : `deleted: ${id} (it starts no more tasks; its tasks stay)`,
        );
        return 0;
      case 'trigger': {
        const t = await schedules.trigger(id);
        ctx.out.line(
          json
            ? JSON.stringify(t)
            : `triggered: ${t.schedule_id}; a task of it starts now: agent tasks --schedule ${t.schedule_id}`,
        );
        return 0;
      }
      default: {
        const d = await (given[0] === 'pause'
          ? schedules.pause(id, note)
          : given[0] === 'unpause'
            ? schedules.unpause(id)
            : schedules.get(id));
        if (json) ctx.out.line(JSON.stringify(d));
        else show(ctx, d);
        return 0;
      }
    }
  },
};
