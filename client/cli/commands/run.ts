// agent run "message": runs the agent, streaming its answer and what it does.
import type { ForegroundRunRequest } from '../../types';
import { stringOption, UsageError, type Command } from '../args';
import { follow } from '../follow';

const MODES = ['flash', 'base', 'max'] as const;

export const runCommand: Command = {
  name: 'run',
  summary: 'Run the agent on a message: its answer streams to stdout, tool calls and steps to stderr.',
  usage: 'agent run "message" [--background] [--session S] [--mode flash|base|max] [--tokens] [--json]',
  help: [
    '--background  start it in the background; print the task id (with --json, the answer of POST /)',
    '--session S   continue session S (default: a new session)',
    '--mode M      flash, base (default) or max',
    '--tokens      stream the answer token by token (default: block by block)',
    '--json        print the events as JSON lines',
    'exit status: 0 when the agent completed, 1 on an agent error',
  ],
  options: {
    background: { type: 'boolean' },
    session: { type: 'string' },
    mode: { type: 'string' },
    tokens: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  positionals: { min: 1, max: 1 },
  async run(ctx, values, [message]) {
    const mode = stringOption(values, 'mode');
    if (mode !== undefined && !(MODES as readonly string[]).includes(mode)) throw new UsageError(`--mode must be one of ${MODES.join(', ')}, got ${mode}`);
    const body: ForegroundRunRequest = { message, ...(mode && { mode: mode as (typeof MODES)[number] }), ...(values.tokens && { streaming_tokens: true }) };
    const session = stringOption(values, 'session');
    const json = !!values.json;
    if (values.background) {
      const accepted = await ctx.client().runBackground(body, { session });
      ctx.out.line(json ? JSON.stringify(accepted) : accepted.task_id);
      return 0;
    }
    return follow(ctx.out, json, (streamOpts) => ctx.client().stream(body, { ...streamOpts, session }));
  },
};
