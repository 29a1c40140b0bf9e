// Command-line arguments, as the SDKs' ephemeral-server launcher passes them: the
// Temporal CLI's `server start-dev ...` or the Java test server's `<port> [extra]`.
// Values are checked the way the CLI checks them, so a typo fails at start with a
// usage error instead of silently running with a default.

export type LogFormat = 'json' | 'pretty' | 'text';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'never';
export type SearchAttributeTypeName = 'Text' | 'Keyword' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

export interface ParsedArgs {
  mode: 'dev' | 'time-skipping';
  port: number;
  ip: string;
  /** The first --namespace given, else "default" (kept for callers that know one namespace). */
  namespace: string;
  /** Every namespace to create at start: "default" first, then each --namespace. */
  namespaces: string[];
  logFormat: LogFormat;
  logLevel: LogLevel;
  dbFilename?: string;
  uiRequested: boolean;
  uiPort?: number;
  /** --dynamic-config-value KEY=JSON, values parsed. */
  dynamicConfig: Record<string, unknown>;
  /** --search-attribute NAME=TYPE, type canonicalised (the CLI matches it case-insensitively). */
  searchAttributes: Record<string, SearchAttributeTypeName>;
  /** Time-skipping mode: whatever followed the port. */
  extraArgs: string[];
}

export class UsageError extends Error {}

const USAGE =
  'usage: temporal-dev server start-dev [--port P] [--namespace NS]... [--ip IP] [--db-filename FILE] [--log-format json|pretty] ' +
  '[--log-level debug|info|warn|error|never] [--dynamic-config-value K=V]... [--search-attribute K=TYPE]... [--ui-port P | --headless]\n' +
  '       temporal-dev <port> [extra...]   (time-skipping test server)';

const LOG_FORMATS: readonly string[] = ['json', 'pretty', 'text'];
const LOG_LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error', 'never'];
const SA_TYPES: readonly SearchAttributeTypeName[] = [
  'Text',
  'Keyword',
  'Int',
  'Double',
  'Bool',
  'Datetime',
  'KeywordList',
];

/** start-dev and global CLI flags we accept but have no use for: name -> takes a value. */
const IGNORED: Record<string, boolean> = {
  '--http-port': true,
  '--metrics-port': true,
  '--ui-ip': true,
  '--ui-public-path': true,
  '--ui-asset-path': true,
  '--ui-codec-endpoint': true,
  '--ui-disable-news-fetch': false,
  '--sqlite-pragma': true,
  '--log-config': false,
  '--env': true,
  '--env-file': true,
  '--config-file': true,
  '--profile': true,
  '--disable-config-file': false,
  '--disable-config-env': false,
  '--output': true,
  '-o': true,
  '--time-format': true,
  '--color': true,
  '--no-json-shorthand-payloads': false,
  '--command-timeout': true,
  '--client-connect-timeout': true,
};

const WITH_VALUE = new Set([
  '--port',
  '-p',
  '--ip',
  '--namespace',
  '-n',
  '--db-filename',
  '-f',
  '--log-format',
  '--log-level',
  '--dynamic-config-value',
  '--search-attribute',
  '--ui-port',
]);
const BOOLEAN = new Set(['--headless']);

export function parseArgs(argv: string[]): ParsedArgs {
  if (argv.length >= 1 && /^\d+$/.test(argv[0])) {
    return {
      ...defaults('time-skipping'),
      port: parsePort(argv[0], 'port'),
      extraArgs: argv.slice(1),
    };
  }
  const out = defaults('dev');
  const positionals: string[] = [];
  const extraNamespaces: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const read = readFlag(argv, i);
    i = read.next;
    applyFlag(out, extraNamespaces, read);
  }
  if (positionals.length !== 2 || positionals[0] !== 'server' || positionals[1] !== 'start-dev') {
    throw new UsageError(positionals.length ? `unexpected arguments: ${positionals.join(' ')}\n${USAGE}` : USAGE);
  }
  if (out.uiPort !== undefined && !out.uiRequested) out.uiPort = undefined;
  out.namespace = extraNamespaces[0] ?? 'default';
  out.namespaces = ['default', ...extraNamespaces];
  return out;
}

/** One flag as given: its name, its value (inline or the next argument), whether a boolean flag is on. */
interface FlagRead {
  flag: string;
  value: string;
  on: boolean;
  /** Index of the flag's last argument (its value's, when that came separately). */
  next: number;
}

/** Reads the flag at argv[i], refusing an unknown flag, a missing value or a boolean that is neither true nor false. */
function readFlag(argv: string[], i: number): FlagRead {
  const arg = argv[i];
  const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
  const flag = eq > 0 ? arg.slice(0, eq) : arg;
  const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
  const takesValue = WITH_VALUE.has(flag) || IGNORED[flag] === true;
  if (!takesValue && !BOOLEAN.has(flag) && IGNORED[flag] === undefined)
    throw new UsageError(`unknown flag: ${flag}\n${USAGE}`);
  let value = '';
  if (takesValue) {
    if (inline !== undefined) value = inline;
    else if (i + 1 < argv.length) value = argv[++i];
    else throw new UsageError(`flag needs an argument: ${flag}`);
  } else if (inline !== undefined && !/^(true|false)$/i.test(inline)) {
    throw new UsageError(`invalid boolean value "${inline}" for ${flag}`);
  }
  const on = inline === undefined || inline.toLowerCase() === 'true';
  return { flag, value, on, next: i };
}

/** Records what the flag says in `out` (a namespace other than default in `extraNamespaces`). */
function applyFlag(out: ParsedArgs, extraNamespaces: string[], { flag, value, on }: FlagRead): void {
  switch (flag) {
    case '--port':
    case '-p':
      out.port = parsePort(value, flag);
      break;
    case '--ip':
      // Like the CLI: the server needs an IP, and "localhost" means the loopback one.
      out.ip = value === 'localhost' ? '127.0.0.1' : value;
      break;
    case '--namespace':
    case '-n':
      if (!value) throw new UsageError('--namespace needs a non-empty name');
      if (value !== 'default' && !extraNamespaces.includes(value)) extraNamespaces.push(value);
      break;
    case '--log-format':
      out.logFormat = oneOf(value, LOG_FORMATS, 'log format') as LogFormat;
      break;
    case '--log-level':
      out.logLevel = oneOf(value, LOG_LEVELS, 'log level') as LogLevel;
      break;
    case '--db-filename':
    case '-f':
      out.dbFilename = value || undefined;
      break;
    case '--dynamic-config-value': {
      const [k, v] = keyValue(value, 'dynamic config value');
      out.dynamicConfig[k] = parseJsonValue(k, v);
      break;
    }
    case '--search-attribute': {
      const [k, v] = keyValue(value, 'search attribute');
      const type = SA_TYPES.find((t) => t.toLowerCase() === v.toLowerCase());
      if (!type) throw new UsageError(`invalid search attribute value type "${v}" (one of ${SA_TYPES.join(', ')})`);
      out.searchAttributes[k] = type;
      break;
    }
    case '--ui-port':
      out.uiPort = parsePort(value, flag);
      out.uiRequested = true;
      break;
    case '--headless':
      out.uiRequested = !on;
      break;
    default:
      break; // accepted, not used
  }
}

function defaults(mode: ParsedArgs['mode']): ParsedArgs {
  const dev = mode === 'dev';
  return {
    mode,
    port: 7233,
    ip: '127.0.0.1',
    namespace: 'default',
    namespaces: ['default'],
    logFormat: 'pretty',
    logLevel: dev ? 'info' : 'warn',
    uiRequested: dev,
    dynamicConfig: {},
    searchAttributes: {},
    extraArgs: [],
  };
}

function parsePort(v: string, what: string): number {
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new UsageError(`invalid ${what} "${v}": want an integer 0-65535`);
  return n;
}

function oneOf(v: string, allowed: readonly string[], what: string): string {
  if (!allowed.includes(v)) throw new UsageError(`invalid ${what} "${v}" (one of ${allowed.join(', ')})`);
  return v;
}

function keyValue(s: string, what: string): [string, string] {
  const i = s.indexOf('=');
  if (i <= 0) throw new UsageError(`invalid ${what} "${s}": missing expected '=' (KEY=VALUE)`);
  return [s.slice(0, i), s.slice(i + 1)];
}

function parseJsonValue(key: string, v: string): unknown {
  try {
    return JSON.parse(v);
  } catch {
    throw new UsageError(`invalid dynamic config values: invalid JSON value for key "${key}"`);
  }
}
