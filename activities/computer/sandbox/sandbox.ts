// What the session's computer needs from a sandbox: run one command over a workspace folder, with
// limits, and say how it ended. The local implementation is bubblewrap (bwrap-sandbox.ts); a remote
// provider (E2B, a Kubernetes sandbox) can implement the same interface, with the workspace synced
// or mounted on its side. docs/computer.md ("Sandbox", "Threat model") says what each promise is
// and how the local one keeps it.

/** Why the sandbox ended a command (not set when the command ended on its own). */
export type SandboxKill =
  /** It ran longer than timeoutMs. */
  | 'timeout'
  /** Its processes together used more than limits.memoryBytes. */
  | 'memory'
  /** It tried to have more than limits.processes processes (or threads) at once. */
  | 'processes'
  /** Its processes together used more than limits.cpuSeconds of CPU time. */
  | 'cpu'
  /** The caller's signal aborted it. */
  | 'cancel'
  /** It wrote more than limits.maxOutputBytes to stdout and stderr together. */
  | 'output';

export interface SandboxLimits {
  /** Memory of the command's processes together (the kernel's out-of-memory killer acts beyond). */
  memoryBytes: number;
  /** Processes and threads at once. */
  processes: number;
  /** CPU time of the command's processes together, seconds. */
  cpuSeconds: number;
  /** stdout and stderr together: killed beyond. */
  maxOutputBytes: number;
  /** Largest file the command may write (RLIMIT_FSIZE: a write beyond fails with EFBIG / SIGXFSZ). */
  fileSizeBytes: number;
}

export interface SandboxCommand {
  /** The program and its arguments, as the sandbox sees them (argv[0] is looked up in its PATH). */
  argv: string[];
  /** The host folder mounted read-write at /workspace (the only writable host folder). */
  workspace: string;
  /** Working directory inside the sandbox; default /workspace. */
  cwd?: string;
  /** Variables added to the sandbox's own (PATH, HOME=/workspace, LANG, TERM). */
  env?: Record<string, string>;
  timeoutMs: number;
  /** Aborting it kills the command and all its processes ('cancel'). */
  signal?: AbortSignal;
  limits: SandboxLimits;
  /** Bytes of each of stdout and stderr kept in memory for the result (the head of each). */
  keepBytes: number;
  /**
   * Where the whole stdout / stderr go (up to limits.maxOutputBytes): a host path (created or
   * truncated), or a file descriptor open for writing, written from its position and left open.
   */
  outputFiles?: { stdout?: string | number; stderr?: string | number };
  /**
   * A private channel beside stdout and stderr (the bash tool passes its saved shell state through
   * it): the command reads `input` on fd 3 (then end of file) and what it writes to fd 4 comes back
   * as the result's `channelOutput`, cut to `maxOutputBytes`.
   */
  channel?: { input: string; maxOutputBytes: number };
  /**
   * Network through the outbound policy (HTTP_PROXY and HTTPS_PROXY name the way out); without it,
   * none. A sandbox made without a policy refuses it (SandboxStartError).
   */
  network?: boolean;
}

export interface SandboxResult {
  /**
   * The command's exit code; a process killed by a signal counts 128 + the signal's number. Null
   * when the sandbox killed it (set when the out-of-memory killer ended one of its processes and it
   * went on to exit: `killed` is then 'memory').
   */
  exitCode: number | null;
  /** The signal that ended the sandbox's own process (SIGKILL when the sandbox ended the command), else null. */
  signal: NodeJS.Signals | null;
  /** The first keepBytes of each stream, utf8 (a character cut at the end is left out). */
  stdout: string;
  stderr: string;
  /** How many bytes each stream carried in all. */
  stdoutBytes: number;
  stderrBytes: number;
  durationMs: number;
  killed?: SandboxKill;
  /** What the command wrote to the channel's fd 4 (when the command asked for a channel). */
  channelOutput?: string;
  /** How each limit was enforced for this command (e.g. memory: 'cgroup v1'), as probe() found the host. */
  enforcement: LimitEnforcement;
}

/** How a sandbox enforces each limit on this host: a mechanism, or 'none' with the reason. */
export interface LimitEnforcement {
  memory: string;
  processes: string;
  cpu: string;
  fileSize: string;
}

export interface Sandbox {
  /** For logs and results: e.g. 'bubblewrap'. */
  readonly name: string;
  /**
   * Checks that the sandbox can work on this host (runs one command through it); throws
   * SandboxUnavailableError naming the fix when it cannot. Idempotent; run() probes first.
   */
  probe(): Promise<LimitEnforcement>;
  /** Runs one command to its end. Throws SandboxStartError when the sandbox itself failed to start. */
  run(cmd: SandboxCommand): Promise<SandboxResult>;
  /** Releases what the sandbox keeps between commands (the worker is stopping); commands still running end first. */
  close(): Promise<void>;
}

/** The sandbox cannot work on this host; the message names the fix. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
}

/** The sandbox failed to set up around a command (the command did not run). */
export class SandboxStartError extends Error {
  override readonly name = 'SandboxStartError';
}
