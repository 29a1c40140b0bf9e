// The command line of the project's small servers (the scripted model, the demo
// MCP server): `--port`, `--host`, `--log-level`, `--help`; and running one
// until SIGINT/SIGTERM.

export interface ServeArgs {
  port: number;
  host: string;
  logLevel: string;
}

export function parsePort(raw: string | undefined, what: string): number {
  const port = Number(raw);
  if (raw === undefined || raw === '' || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`${what} needs a port number (0-65535), got ${raw}`);
  return port;
}

/** Parses the flags over `defaults`; --help prints the usage line and exits. Throws on a bad flag. */
export function parseServeArgs(argv: string[], name: string, defaults: ServeArgs): ServeArgs {
  const args = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--port') args.port = parsePort(value(), '--port');
    else if (flag === '--host') args.host = value();
    else if (flag === '--log-level') args.logLevel = value();
    else if (flag === '--help' || flag === '-h') {
      process.stdout.write(
        `usage: ${name} [--port ${defaults.port}] [--host 127.0.0.1] [--log-level info|debug|warn]\n`,
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!args.host) throw new Error('--host needs an address');
  return args;
}

/** The arguments, or exit 2 with the reason (a usage error, not a crash). */
export function serveArgsOrExit(name: string, defaults: ServeArgs): ServeArgs {
  try {
    return parseServeArgs(process.argv.slice(2), name, defaults);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
}

/** Closes the server on SIGINT/SIGTERM, then exits (1 if closing failed). */
export function closeOnSignal(close: () => Promise<void>): void {
  const stop = () => {
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
