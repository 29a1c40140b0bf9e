// The supervisor of a started stack: each process `npm start` started, with
// the health check that fits it.
import type { Stack } from './stack';
import { ClosableProbe, httpProbe, ipcProbe, redisProbe, temporalProbe } from './probes';
import { Supervised, Supervisor, SupervisorOptions } from './supervisor';

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
  const supervisor = new Supervisor(components, opts);
  supervisor.start();
  return {
    supervisor,
    close: async () => {
      supervisor.stop();
      await Promise.all(closables.map((c) => c.close().catch(() => undefined)));
    },
  };
}
