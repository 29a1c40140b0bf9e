// CLI: runs the demo MCP server until SIGINT/SIGTERM.
//   node -r ./bin/register-ts.js src/dev/demo-mcp/main.ts [--port 8790] [--host 127.0.0.1] [--log-level info]
// The port defaults to DEMO_MCP_PORT, else 8790 (the port `npm start` uses too).
import { createLogger } from '../../common/logger';
import { closeOnSignal, parsePort, serveArgsOrExit } from '../../cli/serve-args';
import { DEMO_MCP_TOOLS, startDemoMcpServer } from './server';

async function main(): Promise<void> {
  const env = process.env;
  const port = env.DEMO_MCP_PORT ? parsePort(env.DEMO_MCP_PORT, 'DEMO_MCP_PORT') : 8790;
  const args = serveArgsOrExit('demo-mcp', { port, host: '127.0.0.1', logLevel: env.LOG_LEVEL || 'info' });
  const logger = createLogger({ level: args.logLevel, name: 'demo-mcp' });
  const server = await startDemoMcpServer({ port: args.port, host: args.host, logger });
  logger.info({ url: server.url, tools: DEMO_MCP_TOOLS }, `demo MCP server at ${server.url}`);
  closeOnSignal(() => server.close());
}

main().catch((err) => {
  process.stderr.write(`demo-mcp failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
