// Waiting on `npm start` under test: a wait gives up at once when the launcher has exited, and a
// failed wait shows the launcher's last output (test/support/wait-until.ts does the polling).
import type { ChildProcess } from 'node:child_process';
import { waitUntil } from '../../support/wait-until';

/** A waitFor(what, cond, timeoutMs?) bound to the launcher `proc()` and its output so far, `output()`. */
export function launcherWait(proc: () => ChildProcess, output: () => string) {
  return (what: string, cond: () => boolean, timeoutMs?: number) =>
    waitUntil(what, cond, {
      timeoutMs,
      giveUpIf: () => (proc().exitCode !== null ? `npm start exited (${proc().exitCode})` : undefined),
    }).catch((err: Error) => {
      throw new Error(`${err.message}\noutput:\n${output().slice(-3000)}`);
    });
}
