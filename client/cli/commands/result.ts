// agent result <id> [--wait SECONDS]: a finished task's answer. The service
// holds a request at most 60 s, so a longer --wait asks again until the time
// is up. A task still running when the time is up is not an error: the CLI
// says so and exits with STILL_RUNNING, so a script can tell it from a failure.
import { ConflictError } from '../../errors';
import type { TaskResult } from '../../types';
import { secondsOption, type Command, type Context } from '../args';

const SERVER_MAX_WAIT = 60;
/** The exit code of a task not finished when the wait was up (1 is a failed task or an error, 2 bad usage). */
export const STILL_RUNNING = 3;

/** The result, or the task's status when it had not finished by the end of the wait. */
async function waitForResult(
  ctx: Context,
  id: string,
  waitSeconds: number,
): Promise<TaskResult | { unfinished: string }> {
  const deadline = Date.now() + waitSeconds * 1000;
  for (;;) {
    const left = Math.max(0, (deadline - Date.now()) / 1000);
    try {
      return await ctx.client().tasks.result(id, { wait: Math.min(SERVER_MAX_WAIT, Math.ceil(left)) });
    } catch (err) {
      // 409: not finished yet. Ask again while there is time left.
      if (!(err instanceof ConflictError)) throw err;
      if (Date.now() >= deadline - 500)
        return { unfinished: String((err.details as { status?: string } | null)?.status ?? 'running') };
    }
  }
}

export const resultCommand: Command = {
  name: 'result',
  summary: "Print a finished task's answer (exit 1 if it failed or was cancelled, 3 if it is still running).",
  usage: 'agent result <id> [--wait SECONDS] [--json]',
  help: [
    '--wait S      wait up to S seconds for the task to finish (default: answer at once)',
    '--json        print the result as JSON',
  ],
  options: { wait: { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  async run(ctx, values, [id]) {
    const wait = secondsOption(values, 'wait') ?? 0;
    const r = await waitForResult(ctx, id, wait);
    if ('unfinished' in r) {
      ctx.out.errLine(
        `task ${id} is still ${r.unfinished}${wait ? ` after ${wait} s` : ''}; ask again later (agent result ${id} --wait SECONDS)`,
      );
      return STILL_RUNNING;
    }
    const ok = r.status === 'completed';
    if (values.json) {
      ctx.out.line(JSON.stringify(r));
      return ok ? 0 : 1;
    }
    if (r.output) ctx.out.line(r.output);
    if (r.status !== 'completed')
      ctx.out.errLine(
        `${ctx.out.paint('red', `task ${r.status}`, true)}${r.error ? `: ${r.error.type}: ${r.error.message}` : ''}`,
      );
    return ok ? 0 : 1;
  },
};
