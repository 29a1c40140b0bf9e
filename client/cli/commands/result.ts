// agent result <id> [--wait SECONDS]: a finished task's answer. The service
// holds a request at most 60 s, so a longer --wait asks again until the time
// is up.
import { ConflictError } from '../../errors';
import type { TaskResult } from '../../types';
import { secondsOption, type Command, type Context } from '../args';

const SERVER_MAX_WAIT = 60;

async function waitForResult(ctx: Context, id: string, waitSeconds: number): Promise<TaskResult> {
  const deadline = Date.now() + waitSeconds * 1000;
  for (;;) {
    const left = Math.max(0, (deadline - Date.now()) / 1000);
    try {
      return await ctx.client().tasks.result(id, { wait: Math.min(SERVER_MAX_WAIT, Math.ceil(left)) });
    } catch (err) {
      // Not finished yet: ask again while there is time left, else report the 409.
      if (!(err instanceof ConflictError) || Date.now() >= deadline - 500) throw err;
    }
  }
}

export const resultCommand: Command = {
  name: 'result',
  summary: "Print a finished task's answer (exit 1 if it failed or was cancelled).",
  usage: 'agent result <id> [--wait SECONDS] [--json]',
  help: ['--wait S      wait up to S seconds for the task to finish (default: answer at once)', '--json        print the result as JSON'],
  options: { wait: { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  async run(ctx, values, [id]) {
    const r = await waitForResult(ctx, id, secondsOption(values, 'wait') ?? 0);
    const ok = r.status === 'completed';
    if (values.json) {
      ctx.out.line(JSON.stringify(r));
      return ok ? 0 : 1;
    }
    if (r.output) ctx.out.line(r.output);
    if (r.status !== 'completed') ctx.out.errLine(`${ctx.out.paint('red', `task ${r.status}`, true)}${r.error ? `: ${r.error.type}: ${r.error.message}` : ''}`);
    return ok ? 0 : 1;
  },
};
