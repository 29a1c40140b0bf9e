// `agent`: the command-line client of the Agent Execution Service (bin/agent).
// Parses the command, runs it against the service with the typed client, and
// turns failures into one line on stderr: exit 1 for an HTTP or connection
// error (its type and message), exit 2 for bad usage (with the usage).
import { AgentClient } from '../client';
import { AgentApiError, AuthenticationError, ConnectionError } from '../errors';
import { COMMON_HELP, helpText, parseCommand, UsageError, type Command, type Context } from './args';
import { Output } from './output';
import { cancelCommand } from './commands/cancel';
import { datastoreCommand } from './commands/datastore';
import { datastoresCommand } from './commands/datastores';
import { documentsCommand } from './commands/documents';
import { filesCommand } from './commands/files';
import { messagesCommand } from './commands/messages';
import { replayCommand } from './commands/replay';
import { resultCommand } from './commands/result';
import { runCommand } from './commands/run';
import { scheduleCommand } from './commands/schedule';
import { schedulesCommand } from './commands/schedules';
import { sessionsCommand } from './commands/sessions';
import { forkCommand } from './commands/fork';
import { approvalsCommand, approveCommand, denyCommand } from './commands/approvals';
import { rewindCommand } from './commands/rewind';
import { tailCommand } from './commands/tail';
import { taskCommand } from './commands/task';
import { tasksCommand } from './commands/tasks';

const COMMANDS: Command[] = [
  runCommand,
  tailCommand,
  tasksCommand,
  taskCommand,
  cancelCommand,
  resultCommand,
  sessionsCommand,
  messagesCommand,
  forkCommand,
  approvalsCommand,
  approveCommand,
  denyCommand,
  rewindCommand,
  filesCommand,
  schedulesCommand,
  scheduleCommand,
  datastoresCommand,
  datastoreCommand,
  documentsCommand,
  replayCommand,
];

function generalHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'usage: agent <command> [options]   (agent <command> --help for its options)',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'options of every command:',
    ...COMMON_HELP.map((l) => `  ${l}`),
  ].join('\n');
}

/** `--url X` / `--key=X` given before the command: moved after it, where the command's parser reads them. */
function hoistCommonOptions(argv: string[]): string[] {
  const lead: string[] = [];
  let i = 0;
  while (i < argv.length && /^--(url|key)(=|$)/.test(argv[i])) {
    lead.push(argv[i]);
    if (!argv[i].includes('=') && i + 1 < argv.length) lead.push(argv[++i]);
    i++;
  }
  return [...argv.slice(i, i + 1), ...lead, ...argv.slice(i + 1)];
}

export async function main(argv: string[], out = new Output(), env = process.env): Promise<number> {
  const [name, ...rest] = hoistCommonOptions(argv);
  if (name === '--help' || name === '-h' || name === 'help') {
    out.line(generalHelp());
    return 0;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    out.errLine(
      `${name === undefined ? 'agent: no command given' : `agent: unknown command ${name}`}\n${generalHelp()}`,
    );
    return 2;
  }
  let client: AgentClient | undefined;
  try {
    const { values, positionals } = parseCommand(cmd, rest);
    if (values.help) {
      out.line(helpText(cmd));
      return 0;
    }
    const ctx: Context = {
      out,
      env,
      client: () =>
        (client ??= new AgentClient({
          baseUrl: (values.url as string | undefined) ?? env.AGENT_URL,
          apiKey: (values.key as string | undefined) ?? env.AGENT_API_KEY,
        })),
    };
    return await cmd.run(ctx, values, positionals);
  } catch (err) {
    if (err instanceof UsageError) {
      out.errLine(`agent ${cmd.name}: ${err.message}\nusage: ${cmd.usage}   (agent ${cmd.name} --help)`);
      return 2;
    }
    out.errLine(errorLine(err, client));
    return 1;
  }
}

/** The one line a failure gets: the service's error type and message, or what kept the request from it. */
function errorLine(err: unknown, client: AgentClient | undefined): string {
  if (err instanceof ConnectionError)
    return `error: ${err.type}: ${err.message}${client ? ' (is the service running? npm start, or set AGENT_URL / --url)' : ''}`;
  if (err instanceof AuthenticationError)
    return `error: ${err.type}: ${err.message} (HTTP 401; set AGENT_API_KEY or --key)`;
  if (err instanceof AgentApiError)
    return `error: ${err.type}: ${err.message}${err.status ? ` (HTTP ${err.status})` : ''}`;
  return `error: ${err instanceof Error ? err.message.replace(/\s*\n\s*/g, ' ') : String(err)}`;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      // Let stdout drain (a pipe is asynchronous), then leave even if a keep-alive socket lingers.
      process.stdout.write('', () => process.exit(code));
    },
    (err) => {
      process.stderr.write(`agent: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
