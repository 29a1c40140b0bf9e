// Waiting for a detached process of the cluster to be ready: its check passes, or it dies (or the
// deadline passes) and the error carries the end of its log.
import { isAlive, logTail } from './detached';
import type { DetachedProcess } from './detached';

export async function waitForReady(
  node: DetachedProcess,
  ready: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await ready()) return;
    } catch (err) {
      last = err; // not up yet
    }
    const why = !isAlive(node.pid) ? 'exited' : Date.now() > end ? `was not ready after ${timeoutMs / 1000} s` : '';
    if (why) {
      const detail = last instanceof Error ? ` (last check: ${last.message})` : '';
      throw new Error(`${node.name} ${why}${detail}; the end of ${node.log}:\n${logTail(node.log)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
