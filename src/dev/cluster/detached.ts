// Processes of the cluster on one machine: started detached (their own session, output to a log
// file), so that they outlive `scripts/cluster.sh up`, and stopped by pid from `down` or a test.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TS_LOADER_ARGS } from '../../common/ts-loader';
import { ROOT } from '../launcher/processes';

export interface DetachedProcess {
  name: string;
  pid: number;
  log: string;
}

/** Starts `cmd` in a session of its own, its stdout and stderr appended to `<logDir>/<name>.log`. */
export function startDetached(
  name: string,
  cmd: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; logDir: string; cwd?: string },
): DetachedProcess {
  const log = path.join(opts.logDir, `${name}.log`);
  const fd = fs.openSync(log, 'a');
  try {
    const child = spawn(cmd, args, { env: opts.env, cwd: opts.cwd ?? ROOT, detached: true, stdio: ['ignore', fd, fd] });
    if (child.pid === undefined) throw new Error(`${name} could not be started (${cmd})`);
    child.unref();
    return { name, pid: child.pid, log };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * One of the service's Node processes (a TypeScript entry), detached: of this checkout, or of the
 * release checked out at `root` (a rollout's new build), with that release's own loader.
 */
export function startDetachedNode(
  name: string,
  entry: string,
  opts: { env: NodeJS.ProcessEnv; logDir: string; nodeArgs?: readonly string[]; args?: string[]; root?: string },
): DetachedProcess {
  const root = opts.root ?? ROOT;
  const loader = root === ROOT ? TS_LOADER_ARGS : ['-r', path.join(root, 'bin', 'register-ts.js')];
  const argv = [...(opts.nodeArgs ?? []), ...loader, path.join(root, entry), ...(opts.args ?? [])];
  return startDetached(name, process.execPath, argv, { ...opts, cwd: root });
}

/** Running (a zombie, which a parent that does not reap leaves behind, counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S ...", the state after the command's closing parenthesis.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc here: kill's answer stands
  }
}

/** Sends `signal`, waits up to `graceMs` for the process to end, then kills it. Resolves once it is gone. */
export async function stopPid(pid: number, signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000): Promise<void> {
  if (!isAlive(pid)) return;
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const end = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
    while (isAlive(pid)) await new Promise((r) => setTimeout(r, 50));
  }
}

/** The end of a process's log, for an error message. */
export function logTail(log: string, chars = 3000): string {
  try {
    return fs.readFileSync(log, 'utf8').slice(-chars);
  } catch {
    return '';
  }
}
