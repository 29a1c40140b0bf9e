// The bubblewrap command line of one sandboxed command: every namespace of its own (no network,
// its own pids, a user namespace where it is uid 1000 with no capability and may not make
// another), a clear environment, the host's /usr and a minimal /etc read-only, a private size-
// limited /tmp, and the workspace read-write at /workspace, the only writable host folder. With
// network allowed, still no network of its own: the policy proxy's socket (network.ts).
// Pure: the host's layout is read once (host-layout.ts).
import { WORKSPACE_MOUNT } from '../../../workflows/tool-registry';
import type { HostLayout } from './host-layout';
import { networkBinds, PROXY_ENV, withForwarder } from './network';

export interface BwrapOptions {
  /** uid and gid inside the sandbox. */
  uid: number;
  gid: number;
  /** Size of /tmp and of /dev/shm (tmpfs; their pages count in the command's memory too). */
  tmpBytes: number;
  /** Host folder holding the sandbox's own /etc files (generatedEtc). */
  etcDir: string;
  /** Names of the files in etcDir. */
  etcFiles: readonly string[];
  /** Where bwrap writes its JSON status (child-pid when the sandbox is up, exit-code at the end). */
  statusFd: number;
  /** Network through the policy proxy (network.ts): the host paths of its socket and of the forwarder. */
  network?: { socket: string; forwarder: string };
}

export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The environment every command starts with; the command's own variables are added to it. */
export const BASE_ENV: Readonly<Record<string, string>> = {
  PATH: SANDBOX_PATH,
  HOME: WORKSPACE_MOUNT,
  LANG: 'C.UTF-8',
  TERM: 'dumb',
};

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks names of extra variables (bwrap would set anything; a name with '=' is nobody's intent). */
export function checkEnv(env: Record<string, string> | undefined): void {
  for (const name of Object.keys(env ?? {}))
    if (!ENV_NAME.test(name)) throw new TypeError(`not a variable name: ${JSON.stringify(name)}`);
}

function rootArgs(layout: HostLayout, opts: BwrapOptions): string[] {
  const args: string[] = [];
  const add = (e: HostLayout['entries'][number]) =>
    'bind' in e ? args.push('--ro-bind', e.bind, e.path) : args.push('--symlink', e.symlink, e.path);
  layout.entries.filter((e) => !e.path.startsWith('/etc/')).forEach(add);
  args.push('--perms', '0755', '--dir', '/etc');
  layout.entries.filter((e) => e.path.startsWith('/etc/')).forEach(add);
  for (const f of opts.etcFiles) args.push('--ro-bind', `${opts.etcDir}/${f}`, `/etc/${f}`);
  args.push('--proc', '/proc');
  for (const p of layout.procCovers) args.push('--ro-bind', p, p);
  args.push('--dev', '/dev');
  args.push('--perms', '01777', '--size', String(opts.tmpBytes), '--tmpfs', '/tmp');
  args.push('--size', String(opts.tmpBytes), '--tmpfs', '/dev/shm');
  return args;
}

/** bwrap's arguments (without the program name) for `argv` over the host folder `workspace`. */
export function bwrapArgs(
  layout: HostLayout,
  opts: BwrapOptions,
  cmd: { argv: string[]; workspace: string; cwd?: string; env?: Record<string, string> },
): string[] {
  checkEnv(cmd.env);
  if (!cmd.argv.length) throw new TypeError('argv is empty');
  const env = { ...BASE_ENV, ...(opts.network && PROXY_ENV), ...cmd.env };
  return [
    // --unshare-all is user (try), ipc, pid, net, uts and cgroup (try); user is asked for outright
    // so that a host without user namespaces fails here instead of running the command as root.
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--uid',
    String(opts.uid),
    '--gid',
    String(opts.gid),
    '--hostname',
    'sandbox',
    '--clearenv',
    ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
    ...rootArgs(layout, opts),
    '--bind',
    cmd.workspace,
    WORKSPACE_MOUNT,
    ...(opts.network ? networkBinds(opts.network) : []),
    // The root itself (a tmpfs bwrap makes) read-only: else any path outside /tmp and /workspace
    // would be writable, in memory that no tmpfs size bounds.
    '--remount-ro',
    '/',
    '--chdir',
    cmd.cwd ?? WORKSPACE_MOUNT,
    '--json-status-fd',
    String(opts.statusFd),
    '--',
    ...(opts.network ? withForwarder(cmd.argv) : cmd.argv),
  ];
}
