// Entry point of the gateway process: the HTTP API. Stateless; scale it by
// starting more of them behind a load balancer.
import { policyFromEnv } from '../outbound/policy';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { commandClient, subscriberClient } from '../redis';
import { StatusCache } from '../relay/status-cache';
import { EventSubscriber } from '../relay/subscriber';
import { EventPublisher } from '../relay/publisher';
import { RunEnds } from './run-end';
import { AccountDirectory, AccountsRegistry } from '../accounts/registry';
import { parseApiKeys } from '../accounts/keys';
import { TaskService } from './task-service';
import { inProcessStarter, relayAwareStarter, ThreadedStarter } from './start-thread/starter';
import { createApp } from './app';
import { Drain } from './drain';
import { createExpressServer } from '../http/express-server';
import { codecDataConverter, codecFromKeys, payloadKeysInForce } from '../codec/data-converter';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger({ level: config.LOG_LEVEL, format: config.LOG_FORMAT, name: 'gateway' });
  // Before anything connects: with no payload keys the gateway refuses to start.
  const payloadKeys = payloadKeysInForce(config);
  const payloadCodec = codecFromKeys(payloadKeys);
  // Lazy: the gateway starts (and answers 503) even while Temporal is down.
  const connection = Connection.lazy({ address: config.TEMPORAL_ADDRESS });
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter: codecDataConverter(payloadCodec) });
  const redis = commandClient(config.REDIS_URL, logger, 'gateway');
  const sub = subscriberClient(config.REDIS_URL, logger, 'gateway-sub');
  const ttlMs = config.RETENTION_DAYS * 86_400_000;
  const envKeys = parseApiKeys(config.API_KEYS);
  const registry = config.API_KEYS_SOURCE === 'temporal' ? new AccountsRegistry(client, config.TEMPORAL_TASK_QUEUE) : undefined;
  const accounts = new AccountDirectory(registry, envKeys, logger);
  await accounts.start().catch(() => logger.warn('accounts registry not reachable yet; serving API_KEYS accounts'));
  const threaded = new ThreadedStarter({
    config: { address: config.TEMPORAL_ADDRESS, namespace: config.TEMPORAL_NAMESPACE, logLevel: config.LOG_LEVEL, logJson: config.LOG_FORMAT === 'json', payloadKeys },
    logger,
  });
  await threaded.ready();
  const subscriber = new EventSubscriber(redis, sub, logger);
  const starter = relayAwareStarter(inProcessStarter(client, connection), threaded, () => subscriber.activeTasks > 0);
  const cache = new StatusCache(redis, logger, ttlMs);
  const publisher = new EventPublisher({ redis, logger, ttlMs });
  const drain = new Drain();
  const app = createApp({
    config,
    logger,
    client,
    connection,
    redis,
    subscriber,
    tasks: new TaskService(client, connection, cache, config, logger, starter),
    runEnds: new RunEnds(client, connection, publisher, cache),
    accounts,
    payloadCodec,
    outbound: policyFromEnv(config),
    drain,
  });
  const server = createExpressServer(app);
  // Long SSE streams and long polls must not be cut by Node's defaults.
  server.requestTimeout = 0;
  server.headersTimeout = 65_000;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  logger.info({ port: config.PORT, host: config.HOST, payloadKeyIds: payloadCodec.keyIds, codecEndpoint: config.CODEC_AUTH_TOKEN ? 'on' : 'off' }, 'gateway listening');

  const stop = async () => {
    logger.info({ deadlineMs: config.GATEWAY_DRAIN_MS }, 'gateway stopping: answering the requests in flight, ending streams');
    const { cut } = await drain.run(server, config.GATEWAY_DRAIN_MS);
    logger.info({ cut }, cut ? 'gateway drained; requests still open at the deadline were cut' : 'gateway drained');
    accounts.stop();
    redis.disconnect();
    sub.disconnect();
    void Promise.allSettled([starter.close(), connection.close()]).finally(() => process.exit(0));
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((err) => {
  process.stderr.write(`gateway failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
