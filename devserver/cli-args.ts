// Command-line arguments, exactly as the SDKs' ephemeral-server launcher passes
// them: the Temporal CLI's `server start-dev ...` or the test server's `<port> [extra]`.

export interface ParsedArgs {
  mode: 'dev' | 'time-skipping';
  port: number;
  ip: string;
  namespace: string;
  logFormat: string;
  logLevel: string;
  dbFilename?: string;
  uiRequested: boolean;
  dynamicConfig: Record<string, string>;
  searchAttributes: Record<string, string>;
}

export class UsageError extends Error {}

export function parseArgs(argv: string[]): ParsedArgs {
  if (argv[0] === 'server' && argv[1] === 'start-dev') return parseStartDev(argv.slice(2));
  if (argv.length >= 1 && /^\d+$/.test(argv[0])) {
    return {
      mode: 'time-skipping',
      port: Number(argv[0]),
      ip: '127.0.0.1',
      namespace: 'default',
      logFormat: 'pretty',
      logLevel: 'warn',
      uiRequested: false,
      dynamicConfig: {},
      searchAttributes: {},
    };
  }
  throw new UsageError('usage: temporal-dev server start-dev [--port P] [--namespace NS] [--ip IP] [--db-filename FILE] ... | temporal-dev <port>');
}

function parseStartDev(args: string[]): ParsedArgs {
  const out: ParsedArgs = {
    mode: 'dev',
    port: 7233,
    ip: '127.0.0.1',
    namespace: 'default',
    logFormat: 'pretty',
    logLevel: 'info',
    uiRequested: true,
    dynamicConfig: {},
    searchAttributes: {},
  };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].includes('=') && args[i].startsWith('--') ? splitOnce(args[i]) : [args[i], undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      const v = args[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--port':
      case '-p':
        out.port = Number(value());
        break;
      case '--ip':
        out.ip = value();
        break;
      case '--namespace':
      case '-n':
        out.namespace = value();
        break;
      case '--log-format':
        out.logFormat = value();
        break;
      case '--log-level':
        out.logLevel = value();
        break;
      case '--db-filename':
      case '-f':
        out.dbFilename = value();
        break;
      case '--dynamic-config-value': {
        const [k, v] = splitOnce(value());
        out.dynamicConfig[k] = v ?? '';
        break;
      }
      case '--search-attribute': {
        const [k, v] = splitOnce(value());
        out.searchAttributes[k] = v ?? 'Keyword';
        break;
      }
      case '--ui-port':
        value();
        out.uiRequested = true;
        break;
      case '--headless':
        out.uiRequested = false;
        break;
      case '--ui-ip':
      case '--ui-public-path':
      case '--ui-asset-path':
      case '--ui-codec-endpoint':
      case '--http-port':
      case '--metrics-port':
      case '--sqlite-pragma':
      case '--config':
      case '--log-config':
        value();
        break;
      default:
        throw new UsageError(`unknown flag ${flag}`);
    }
  }
  if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) throw new UsageError(`invalid --port`);
  return out;
}

function splitOnce(s: string): [string, string | undefined] {
  const i = s.indexOf('=');
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}
