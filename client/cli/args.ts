// Argument parsing of the CLI over node:util parseArgs: each command declares
// its options, the connection options (--url, --key) and --help are common to
// all. Anything unknown or malformed is a UsageError (exit 2, usage on stderr).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { AgentClient } from '../client';
import type { Output } from './output';

export class UsageError extends Error {}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;
/** An option declared `multiple: true` is a string[]. */
export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Context {
  /** Lazily made, so --help and usage errors never need a service. */
  client(): AgentClient;
  out: Output;
  env: NodeJS.ProcessEnv;
}

export interface Command {
  name: string;
  /** One line for `agent --help`. */
  summary: string;
  /** The synopsis, e.g. `agent task <id> [--json]`. */
  usage: string;
  /** One line per option or argument for `agent <command> --help`. */
  help: string[];
  options: OptionSpec;
  /** How many positionals the command takes. */
  positionals: { min: number; max: number };
  run(ctx: Context, values: Values, positionals: string[]): Promise<number>;
}

export const COMMON_OPTIONS: OptionSpec = {
  url: { type: 'string' },
  key: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

export const COMMON_HELP = [
  '--url URL     the service (default: AGENT_URL, else http://127.0.0.1:8080, `npm start`)',
  '--key KEY     the API key (default: AGENT_API_KEY, else the `npm start` dev key)',
  '-h, --help    this help',
];

export function parseCommand(cmd: Command, argv: string[]): { values: Values; positionals: string[] } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...COMMON_OPTIONS, ...cmd.options },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    // Node's messages go on about '--' escaping; the first sentence is what matters here.
    throw new UsageError((err as Error).message.split('. ')[0]);
  }
  const values = parsed.values as Values;
  if (values.help) return { values, positionals: parsed.positionals };
  const n = parsed.positionals.length;
  if (n < cmd.positionals.min) throw new UsageError(n ? 'missing arguments' : 'missing argument');
  if (n > cmd.positionals.max) throw new UsageError(`unexpected argument: ${parsed.positionals[cmd.positionals.max]}`);
  return { values, positionals: parsed.positionals };
}

/** An integer option within bounds, or undefined when absent. */
export function intOption(values: Values, name: string, min: number, max: number): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^\d+$/.test(raw.trim()) || n < min || n > max)
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got ${String(raw)}`);
  return n;
}

/** A non-negative number of seconds, or undefined when absent. */
export function secondsOption(values: Values, name: string): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== 'string' || raw.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new UsageError(`--${name} must be a number of seconds, got ${String(raw)}`);
  return n;
}

/** A number above 0 (whole with `whole`), or undefined when absent. */
export function positiveOption(values: Values, name: string, whole = false): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== 'string' || !raw.trim() || !Number.isFinite(n) || n <= 0 || (whole && !Number.isInteger(n)))
    throw new UsageError(`--${name} must be a positive ${whole ? 'whole ' : ''}number, got ${String(raw)}`);
  return n;
}

export function stringOption(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

/** A repeatable option's values (declared `multiple: true`), in the order given; [] when absent. */
export function listOption(values: Values, name: string): string[] {
  const v = values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

export function helpText(cmd: Command): string {
  return [`usage: ${cmd.usage}`, '', cmd.summary, '', ...[...cmd.help, ...COMMON_HELP].map((l) => `  ${l}`)].join('\n');
}
