// Entry point of bin/temporal-dev.
import { parseArgs, UsageError } from './cli-args';
import { createLogger } from './logger';
import { startDevServer } from './server';
import { setUpStartupNamespaces } from './engine/namespaces';

async function main(): Promise<void> {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ format: args.logFormat, level: args.logLevel });
  if (args.uiRequested)
    logger.warn('the embedded Temporal dev server serves no Web UI; use temporal-docker/ for the Temporal UI');
  const server = await startDevServer({
    port: args.port,
    ip: args.ip,
    namespace: args.namespace,
    dbFilename: args.dbFilename,
    timeSkipping: args.mode === 'time-skipping',
    dynamicConfig: args.dynamicConfig,
    logger,
  });
  setUpStartupNamespaces(server.engine, args.namespaces, args.searchAttributes);
  await server.engine.flush();
  logger.info(
    {
      address: `${args.ip}:${server.port}`,
      namespace: args.namespace,
      persistence: args.dbFilename ?? 'memory',
      mode: args.mode,
    },
    'embedded Temporal server started',
  );
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((err) => {
  process.stderr.write(`temporal-dev failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
