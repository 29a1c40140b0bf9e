// CLI: runs the scripted model server until SIGINT/SIGTERM.
//   tsx src/scripted-model/main.ts [--port 8787] [--host 127.0.0.1] [--log-level info]
import pino from 'pino';
import { startScriptedModel } from './server';

const DEFAULT_PORT = 8787;

interface CliArgs {
  port: number;
  host: string;
  logLevel: string;
}

function parseArgs(argv: string[]): CliArgs {
  const args: CliArgs = { port: DEFAULT_PORT, host: '127.0.0.1', logLevel: 'info' };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--port': {
        const port = Number(value());
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port needs a port number, got ${argv[i]}`);
        args.port = port;
        break;
      }
      case '--host':
        args.host = value();
        break;
      case '--log-level':
        args.logLevel = value();
        break;
      case '--help':
      case '-h':
        process.stdout.write('usage: scripted-model [--port 8787] [--host 127.0.0.1] [--log-level info|debug|warn]\n');
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  return args;
}

async function main(): Promise<void> {
  let args: CliArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  const logger = pino({ level: args.logLevel, base: { component: 'scripted-model' } }, pino.destination(2));
  const model = await startScriptedModel({ port: args.port, host: args.host, logger });
  const stop = () => {
    model.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`scripted-model failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
