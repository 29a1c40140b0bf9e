// How a sandboxed command is started: node spawns bash with this script, which closes every file
// descriptor it inherited beyond the six it is given (a worker inherits descriptors from whatever
// started it, and bwrap passes all of them on to the command), writes its own pid into the
// command's control groups (so bwrap and everything it forks are in them from the first
// instruction), sets the rlimits with bash's ulimit (prlimit would cost one more program start,
// 2.6 ms here), then execs bwrap, which stays our child: its --die-with-parent ties the command to
// the worker.
import type { SandboxLimits } from './sandbox';

/** Exit code of the script when it could not set up the command (which never ran). */
export const SETUP_FAILED = 125;

export const SPAWN_SCRIPT = [
  'for f in /proc/self/fd/*; do n=${f##*/}; if [ "$n" -gt 5 ]; then eval "exec $n>&-"; fi; done',
  'n=$1; shift',
  'while [ "$n" -gt 0 ]; do',
  `  echo $$ > "$1" || { echo "sandbox: cannot join the control group $1" >&2; exit ${SETUP_FAILED}; }`,
  '  shift; n=$((n - 1))',
  'done',
  // $1 and $2: ulimit's options (soft limits, then hard: lowering a hard limit below its soft one
  // fails), split into words on purpose.
  `ulimit -S $1 && ulimit -H $2 || { echo "sandbox: cannot set the rlimits" >&2; exit ${SETUP_FAILED}; }`,
  'shift 2',
  'exec "$@"',
].join('\n');

/** The command line node spawns. */
export function spawnArgv(bwrap: string, procsFiles: string[], rlimits: Rlimits, bwrapArgs: string[]): string[] {
  return [
    'bash',
    '-c',
    SPAWN_SCRIPT,
    'agent-sandbox-spawn',
    String(procsFiles.length),
    ...procsFiles,
    rlimits.soft,
    rlimits.hard,
    bwrap,
    ...bwrapArgs,
  ];
}

/** ulimit's options for the soft and the hard limits. */
export interface Rlimits {
  soft: string;
  hard: string;
}

/**
 * The rlimits of one command. Always: no core files (they would land in the workspace) and
 * RLIMIT_FSIZE (ulimit counts it in KiB: rounded down). With a control group, RLIMIT_CPU is a
 * backstop a second past the group's limit (the sandbox kills at the group's total first, and says
 * why); without one, the rlimits are all there is: CPU per process (SIGXCPU at the limit, SIGKILL a
 * second later), address space for memory, RLIMIT_NPROC for processes (which does not bind a
 * worker running as root: the kernel exempts uid 0, which the sandbox's processes are on the host).
 */
export function rlimits(limits: SandboxLimits, mode: { cgroup: boolean; root: boolean }): Rlimits {
  const cpu = mode.cgroup ? limits.cpuSeconds + 1 : limits.cpuSeconds;
  const common = ['-c', '0', '-f', String(Math.max(0, Math.floor(limits.fileSizeBytes / 1024)))];
  if (!mode.cgroup) {
    common.push('-v', String(Math.floor(limits.memoryBytes / 1024)));
    if (!mode.root) common.push('-u', String(limits.processes));
  }
  return { soft: [...common, '-t', String(cpu)].join(' '), hard: [...common, '-t', String(cpu + 1)].join(' ') };
}
