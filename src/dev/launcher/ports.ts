// The ports `npm start` will listen on, checked before anything starts: a port
// that is taken ends the start with one line naming it and the variable that
// moves it, instead of a banner against someone else's server or a stack trace.
import net from 'node:net';
import { envSchema } from '../../common/config';
import { engineFromEnv } from './engines';

export interface WantedPort {
  port: number;
  host: string;
  /** The environment variable that moves it. */
  variable: string;
  what: string;
}

const port = (env: NodeJS.ProcessEnv, name: 'PORT' | 'TEMPORAL_PORT' | 'TEMPORAL_UI_PORT' | 'WORKER_METRICS_PORT') =>
  envSchema.shape[name].parse(env[name] || undefined);

/** `npm start` serves the worker's metrics on this port unless WORKER_METRICS_PORT says otherwise (0 = none). */
export const LAUNCHER_WORKER_METRICS_PORT = 9464;

/** The worker metrics port `npm start` uses with this environment; 0 = none. */
export function launcherWorkerMetricsPort(env: NodeJS.ProcessEnv): number {
  return env.WORKER_METRICS_PORT ? port(env, 'WORKER_METRICS_PORT') : LAUNCHER_WORKER_METRICS_PORT;
}

/** Every port `npm start` would listen on with this environment. */
export function wantedPorts(env: NodeJS.ProcessEnv): WantedPort[] {
  const out: WantedPort[] = [
    {
      port: port(env, 'PORT'),
      host: envSchema.shape.HOST.parse(env.HOST || undefined),
      variable: 'PORT',
      what: 'the gateway',
    },
  ];
  if (!env.TEMPORAL_ADDRESS) {
    const engine = engineFromEnv(env);
    out.push({
      port: port(env, 'TEMPORAL_PORT'),
      host: '127.0.0.1',
      variable: 'TEMPORAL_PORT',
      what: `the ${engine === 'embedded' ? 'embedded Temporal engine' : 'Temporal dev server'}`,
    });
    if (engine === 'temporal-cli')
      out.push({
        port: port(env, 'TEMPORAL_UI_PORT'),
        host: '127.0.0.1',
        variable: 'TEMPORAL_UI_PORT',
        what: 'the Temporal Web UI',
      });
  }
  if (env.DEMO_MCP !== 'false')
    out.push({
      port: Number(env.DEMO_MCP_PORT || 8790),
      host: '127.0.0.1',
      variable: 'DEMO_MCP_PORT',
      what: 'the demo MCP server',
    });
  if (env.DEMO_WEB !== 'false')
    out.push({
      port: Number(env.DEMO_WEB_PORT || 8791),
      host: '127.0.0.1',
      variable: 'DEMO_WEB_PORT',
      what: 'the demo web site',
    });
  out.push({
    port: launcherWorkerMetricsPort(env),
    host: envSchema.shape.WORKER_METRICS_HOST.parse(env.WORKER_METRICS_HOST || undefined),
    variable: 'WORKER_METRICS_PORT',
    what: "the worker's metrics endpoint",
  });
  return out.filter((p) => p.port !== 0);
}

/** Why the port cannot be listened on (EADDRINUSE, EACCES...), or undefined when it can. */
export function portProblem(p: Pick<WantedPort, 'port' | 'host'>): Promise<string | undefined> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code === 'EADDRINUSE' ? 'is in use' : `cannot be opened (${err.code ?? err.message})`),
    );
    srv.listen(p.port, p.host, () => srv.close(() => resolve(undefined)));
  });
}

/** The first taken port as the one line to print, or undefined when all are free. */
export async function firstTakenPort(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  for (const p of wantedPorts(env)) {
    const problem = await portProblem(p);
    if (problem)
      return `port ${p.port} (${p.what}, ${p.variable}) ${problem}: stop what uses it, or set ${p.variable} to a free port`;
  }
  return undefined;
}
