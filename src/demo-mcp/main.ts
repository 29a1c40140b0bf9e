// CLI: runs the demo MCP server until SIGINT/SIGTERM.
//   node -r tsx/cjs src/demo-mcp/main.ts [--port 8790] [--host 127.0.0.1] [--log-level info]
// The port defaults to DEMO_MCP_PORT, else 8790 (the port `npm start` uses too).
import { createLogger } from '../logger';
import { DEMO_MCP_TOOLS, startDemoMcpServer } from './server';

const DEFAULT_PORT = 8790;

interface CliArgs {
  port: number;
  host: string;
  logLevel: string;
}

function parsePort(raw: string | undefined, what: string): number {
  const port = Number(raw);
  if (raw === undefined || raw === '' || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${what} needs a port number (0-65535), got ${raw}`);
  return port;
}

function parseArgs(argv: string[], env: NodeJS.ProcessEnv): CliArgs {
  const args: CliArgs = {
    port: env.DEMO_MCP_PORT ? parsePort(env.DEMO_MCP_PORT, 'DEMO_MCP_PORT') : DEFAULT_PORT,
    host: '127.0.0.1',
    logLevel: env.LOG_LEVEL || 'info',
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case '--port':
        args.port = parsePort(value(), '--port');
        break;
      case '--host':
        args.host = value();
        break;
      case '--log-level':
        args.logLevel = value();
        break;
      case '--help':
      case '-h':
        process.stdout.write('usage: demo-mcp [--port 8790] [--host 127.0.0.1] [--log-level info|debug|warn]\n');
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!args.host) throw new Error('--host needs an address');
  return args;
}

async function main(): Promise<void> {
  let args: CliArgs;
  try {
    args = parseArgs(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  const logger = createLogger({ level: args.logLevel, name: 'demo-mcp' });
  const server = await startDemoMcpServer({ port: args.port, host: args.host, logger });
  logger.info({ url: server.url, tools: DEMO_MCP_TOOLS }, `demo MCP server at ${server.url}`);
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`demo-mcp failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
