// agent run "message": runs the agent, streaming its answer and what it does.
// With --schedule, the request also makes a schedule that runs the agent
// later (once, or on a cron), shown as a [scheduled] line. With --datastore
// and --query, the agent reads registered datastores (agent datastores); --tools picks the
// built-in tools and --network gives its commands network.
import type { ForegroundRunRequest, NamedQuery, RunDatastore, ScheduleEntry } from '../../types';
import type { AgentClient } from '../../client';
import { listOption, positiveOption, stringOption, UsageError, type Command, type Values } from '../args';
import { scheduledText } from '../event-view';
import { follow } from '../follow';

/** As the service takes them: fast is another name of base (Agentbase's). */
const MODES = ['flash', 'base', 'fast', 'max'] as const;

/** The request's `schedules` from --schedule, --schedule-message and --timezone, or undefined without --schedule. */
function scheduleOption(values: Values, message: string): ScheduleEntry[] | undefined {
  const spec = stringOption(values, 'schedule');
  const scheduleMessage = stringOption(values, 'schedule-message');
  const timezone = stringOption(values, 'timezone');
  if (spec === undefined) {
    if (scheduleMessage !== undefined) throw new UsageError('--schedule-message goes with --schedule');
    if (timezone !== undefined) throw new UsageError('--timezone goes with --schedule');
    return undefined;
  }
  // A plain number is seconds from now; anything else (an ISO date-time, a cron string) goes as text.
  const schedule = /^\s*\d+(\.\d+)?\s*$/.test(spec) ? Number(spec) : spec;
  return [{ schedule, message: scheduleMessage ?? message, ...(timezone !== undefined && { timezone }) }];
}

/**
 * The request's `datastores` from --datastore ID[:NAME] (without NAME, the
 * datastore's registered name, asked of the service) and `queries` from
 * --query NAME=SQL (on the request's only SQL datastore).
 */
async function datastoreOptions(
  values: Values,
  client: () => AgentClient,
): Promise<{ datastores?: RunDatastore[]; queries?: NamedQuery[] }> {
  const specs = listOption(values, 'datastore').map((spec) => {
    const m = /^([^:\s]+)(?::(.+))?$/.exec(spec);
    if (!m) throw new UsageError(`--datastore must be ID or ID:NAME, got ${spec}`);
    return { id: m[1], name: m[2] };
  });
  const queries = listOption(values, 'query').map((spec): NamedQuery => {
    const m = /^([^=\s]+)=(.*\S.*)$/s.exec(spec);
    if (!m) throw new UsageError(`--query must be NAME=SQL, got ${spec}`);
    return { name: m[1], description: `Query ${m[1]}`, query: m[2].trim() };
  });
  const datastores = await Promise.all(
    specs.map(async ({ id, name }) => ({ id, name: name ?? (await client().datastores.get(id)).name })),
  );
  return { ...(datastores.length && { datastores }), ...(queries.length && { queries }) };
}

/** The request's caps from --max-steps, --max-cost and --max-duration (the service checks their ranges). */
function capOptions(values: Values): Pick<ForegroundRunRequest, 'max_steps' | 'max_cost' | 'max_duration'> {
  const [steps, cost, duration] = [
    positiveOption(values, 'max-steps', true),
    positiveOption(values, 'max-cost'),
    positiveOption(values, 'max-duration', true),
  ];
  return {
    ...(steps && { max_steps: steps }),
    ...(cost && { max_cost: cost }),
    ...(duration && { max_duration: duration }),
  };
}

/** The request's `tools` from --tools (comma-separated; none = no built-in tool) and `computer` from --network. */
function toolOptions(values: Values): Pick<ForegroundRunRequest, 'tools' | 'computer'> {
  const tools = stringOption(values, 'tools');
  const names =
    tools === undefined
      ? undefined
      : tools.trim() === 'none'
        ? []
        : tools
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean);
  return {
    // The service names a tool it does not know or offer (400, 422): passed on as they are.
    ...(names && { tools: names as NonNullable<ForegroundRunRequest['tools']> }),
    ...(values.network && { computer: { network: true } }),
  };
}

export const runCommand: Command = {
  name: 'run',
  summary: 'Run the agent on a message: its answer streams to stdout, tool calls and steps to stderr.',
  usage:
    'agent run "message" [--background] [--session S] [--mode flash|base|fast|max] [--tokens] [--json] [--schedule SPEC [--schedule-message TEXT] [--timezone ZONE]] [--datastore ID[:NAME]]... [--query NAME=SQL]... [--max-steps N] [--max-cost USD] [--max-duration S] [--tools A,B] [--network]',
  help: [
    '--background  start it in the background; print the task id (with --json, the answer of POST /)',
    '--session S   continue session S (default: a new session)',
    '--mode M      flash, base (default; also named fast) or max',
    '--tokens      stream the answer token by token (default: block by block)',
    '--json        print the events as JSON lines',
    '--schedule SPEC',
    '              also run it later, in the same session: SPEC is seconds from now, an ISO',
    '              date-time with its zone, or a five-field cron string (agent schedules lists it)',
    '--schedule-message TEXT',
    '              the message of the later runs (default: this one)',
    '--timezone ZONE',
    '              the IANA time zone of a cron SPEC (default UTC)',
    '--datastore ID[:NAME]',
    '              let the agent read a registered datastore (agent datastores), its tools named',
    '              after NAME (default: its registered name): describe_NAME, query_NAME, search_NAME;',
    '              repeatable',
    '--query NAME=SQL',
    "              a tool NAME running SQL on the run's SQL datastore, its ? or $1 markers the",
    "              tool's arguments p1, p2...; repeatable",
    '--max-steps N, --max-cost USD, --max-duration S',
    "              the run's caps: model turns, dollars, seconds of work",
    '--tools A,B   the built-in tools the model is offered (computer = bash, str_replace_editor,',
    "              glob, grep; none = no built-in tool; default: the service's BUILTIN_TOOLS)",
    "--network     the run's bash commands may reach the network, through the service's outbound",
    '              policy (a service with SANDBOX_NETWORK=off refuses it)',
    'exit status: 0 when the agent completed, 1 on an agent error',
  ],
  options: {
    background: { type: 'boolean' },
    session: { type: 'string' },
    mode: { type: 'string' },
    tokens: { type: 'boolean' },
    json: { type: 'boolean' },
    schedule: { type: 'string' },
    'schedule-message': { type: 'string' },
    timezone: { type: 'string' },
    datastore: { type: 'string', multiple: true },
    query: { type: 'string', multiple: true },
    'max-steps': { type: 'string' },
    'max-cost': { type: 'string' },
    'max-duration': { type: 'string' },
    tools: { type: 'string' },
    network: { type: 'boolean' },
  },
  positionals: { min: 1, max: 1 },
  async run(ctx, values, [message]) {
    const mode = stringOption(values, 'mode');
    if (mode !== undefined && !(MODES as readonly string[]).includes(mode))
      throw new UsageError(`--mode must be one of ${MODES.join(', ')}, got ${mode}`);
    const schedules = scheduleOption(values, message);
    const data = await datastoreOptions(values, ctx.client);
    const body: ForegroundRunRequest = {
      message,
      ...(mode && { mode: mode as (typeof MODES)[number] }),
      ...(values.tokens && { streaming_tokens: true }),
      ...(schedules && { schedules }),
      ...capOptions(values),
      ...toolOptions(values),
      ...data,
    };
    const session = stringOption(values, 'session');
    const json = !!values.json;
    if (values.background) {
      const accepted = await ctx.client().runBackground(body, { session });
      if (json) {
        ctx.out.line(JSON.stringify(accepted));
        return 0;
      }
      // The task id alone on stdout (for scripts); the schedules it made on stderr.
      ctx.out.line(accepted.task_id);
      for (const s of accepted.schedules ?? [])
        ctx.out.errLine(`${ctx.out.paint('magenta', '[scheduled]', true)} ${scheduledText(s)}`);
      return 0;
    }
    return follow(ctx.out, json, (streamOpts) => ctx.client().stream(body, { ...streamOpts, session }));
  },
};
