// CLI: runs the scripted model server until SIGINT/SIGTERM.
//   tsx src/dev/scripted-model/main.ts [--port 8787] [--host 127.0.0.1] [--log-level info]
import pino from 'pino';
import { closeOnSignal, serveArgsOrExit } from '../../cli/serve-args';
import { startScriptedModel } from './server';

async function main(): Promise<void> {
  const args = serveArgsOrExit('scripted-model', { port: 8787, host: '127.0.0.1', logLevel: 'info' });
  const logger = pino({ level: args.logLevel, base: { component: 'scripted-model' } }, pino.destination(2));
  const model = await startScriptedModel({ port: args.port, host: args.host, logger });
  closeOnSignal(() => model.close());
}

main().catch((err) => {
  process.stderr.write(`scripted-model failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
