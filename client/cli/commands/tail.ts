// agent tail <task>: follows a task's events (from the first, or after --after),
// resuming by itself after a dropped connection.
import { intOption, type Command } from '../args';
import { follow } from '../follow';

export const tailCommand: Command = {
  name: 'tail',
  summary: "Follow a task's events until it ends (resumes after dropped connections).",
  usage: 'agent tail <task> [--after SEQ] [--json]',
  help: [
    '--after SEQ   only events after this seq (default: from the first)',
    '--json        print the events as JSON lines',
    'exit status: 0 when the agent completed, 1 on an agent error',
  ],
  options: { after: { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  run(ctx, values, [taskId]) {
    const after = intOption(values, 'after', 0, Number.MAX_SAFE_INTEGER);
    return follow(ctx.out, !!values.json, (streamOpts) => ctx.client().tasks.events(taskId, { ...streamOpts, after }));
  },
};
