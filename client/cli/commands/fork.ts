// agent fork <session>: a new session with the session's conversation, or its first messages.
import { intOption, stringOption, type Command } from '../args';

export const forkCommand: Command = {
  name: 'fork',
  summary: "Start a new session from a session's conversation (all of it, or its first messages).",
  usage: 'agent fork <session> [--at N] [--as ID] [--json]',
  help: [
    '--at N        keep the first N messages (agent messages lists them; default all)',
    "--as ID       the new session's id (default a new sess_… id)",
    '--json        print the answer as JSON',
  ],
  options: { at: { type: 'string' }, as: { type: 'string' }, json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  async run(ctx, values, [session]) {
    const forked = await ctx.client().sessions.fork(session, {
      at: intOption(values, 'at', 0, Number.MAX_SAFE_INTEGER),
      session: stringOption(values, 'as'),
    });
    if (values.json) ctx.out.line(JSON.stringify(forked));
    else {
      ctx.out.line(forked.session);
      ctx.out.errLine(`forked from ${forked.forked_from} with ${forked.messages} messages`);
    }
    return 0;
  },
};
