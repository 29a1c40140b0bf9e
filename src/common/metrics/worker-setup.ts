// The worker process's metrics: its registry, its activities wrapped to record
// their attempts, and its endpoint when WORKER_METRICS_PORT is set (npm start
// sets it, and the gateway's /metrics includes it).
import type { Logger } from 'pino';
import type { Config } from '../config';
import { instrumentActivities } from './activity-metrics';
import { serveMetrics, type MetricsServer } from './metrics-server';
import { processRegistry } from './registry';
import { WorkerMetrics } from './worker-metrics';

type SetupConfig = Pick<
  Config,
  | 'WORKER_METRICS_PORT'
  | 'WORKER_METRICS_HOST'
  | 'METRICS_TOKEN'
  | 'MODEL_FLASH'
  | 'MODEL_BASE'
  | 'MODEL_MAX'
  | 'MODEL_PRICES'
>;

export interface WorkerMetricsHandle {
  metrics: WorkerMetrics;
  /** The activities, each recording its attempts. */
  instrument<T extends Record<string, (...args: any[]) => Promise<unknown>>>(activities: T): T;
  close(): Promise<void>;
}

export async function startWorkerMetrics(config: SetupConfig, logger: Logger): Promise<WorkerMetricsHandle> {
  const metrics = new WorkerMetrics(processRegistry('worker'));
  let server: MetricsServer | undefined;
  if (config.WORKER_METRICS_PORT > 0) {
    const at = { port: config.WORKER_METRICS_PORT, host: config.WORKER_METRICS_HOST };
    server = await serveMetrics(metrics.registry, { ...at, token: config.METRICS_TOKEN, logger }).catch(
      (err: Error) => {
        throw new Error(
          `the worker's metrics endpoint could not listen on ${at.host}:${at.port} (${err.message}); set WORKER_METRICS_PORT to a free port, or 0 for none`,
        );
      },
    );
    logger.info({ port: server.port, host: at.host }, 'worker metrics at /metrics');
  }
  return {
    metrics,
    instrument: (activities) => instrumentActivities(activities, metrics, config),
    close: async () => server?.close(),
  };
}
