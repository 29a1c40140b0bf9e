// agent messages <session>: a session's conversation.
import type { Command } from '../args';

export const messagesCommand: Command = {
  name: 'messages',
  summary: "Print a session's conversation, oldest first.",
  usage: 'agent messages <session> [--json]',
  help: ['--json        print the messages as JSON'],
  options: { json: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  async run(ctx, values, [session]) {
    const m = await ctx.client().sessions.messages(session);
    if (values.json) {
      ctx.out.line(JSON.stringify(m));
      return 0;
    }
    for (const msg of m.messages)
      ctx.out.line(`${ctx.out.paint(msg.role === 'user' ? 'cyan' : 'green', `${msg.role}:`)} ${msg.content}`);
    if (!m.messages.length) ctx.out.errLine('no messages');
    return 0;
  },
};
