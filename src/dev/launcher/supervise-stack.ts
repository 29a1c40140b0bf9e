// The supervisor of a started stack: each process `npm start` started, with
// the health check that fits it.
import type { Stack } from './stack';
import { ClosableProbe, httpProbe, ipcProbe, redisProbe, temporalProbe } from './probes';
import { Supervised, Supervisor, SupervisorOptions } from './supervisor';
import type { RestartsMessage } from '../../common/metrics/gateway-metrics';

export interface SupervisedStack {
  supervisor: Supervisor;
  /** Stops supervising and closes the health checks' connections (before the stack stops). */
  close(): Promise<void>;
}

export function superviseStack(stack: Stack, opts: SupervisorOptions): SupervisedStack {
  const closables: ClosableProbe[] = [];
  const probeOf = (name: string): (() => Promise<boolean>) | undefined => {
    const keep = (p: ClosableProbe) => (closables.push(p), p.probe);
    if (name === 'engine') return keep(temporalProbe(stack.temporalAddress));
    if (name === 'redis') return keep(redisProbe(stack.redisUrl));
    if (name === 'worker') return ipcProbe(() => stack.children.worker);
    if (name === 'gateway') return httpProbe(`${stack.gatewayUrl}/healthz`);
    return undefined;
  };
  const components: Supervised[] = Object.entries(stack.restarters).map(([name, restart]) => ({
    name,
    current: () => stack.children[name],
    restart,
    probe: probeOf(name),
  }));
  // The gateway's /metrics shows the restarts (aes_component_restarts_total): it gets the totals
  // now, after each restart, and again after a restart of its own (a new gateway starts with none).
  const sendRestarts = () => sendToGateway(stack, { type: 'restarts', counts: supervisor.restartTotals() });
  const supervisor = new Supervisor(components, {
    ...opts,
    onRestarted: (name) => {
      sendRestarts();
      opts.onRestarted?.(name);
    },
  });
  supervisor.start();
  sendRestarts();
  return {
    supervisor,
    close: async () => {
      supervisor.stop();
      await Promise.all(closables.map((c) => c.close().catch(() => undefined)));
    },
  };
}

/** A message over the gateway's IPC channel, if it has one open (lost otherwise: the next restart sends all again). */
function sendToGateway(stack: Stack, message: RestartsMessage): void {
  const proc = stack.children.gateway?.proc;
  if (proc?.connected) proc.send(message, () => undefined);
}
