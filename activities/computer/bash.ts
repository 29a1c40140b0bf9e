// The `bash` tool: one command in the session's sandbox, run by bash in /workspace, the result
// told to the model (exit code, stdout and stderr cut to a size, where the whole is, why the
// sandbox ended it). Like a terminal, the working directory and the exported variables carry over
// to the next call, in this run and the session's later ones: a script around the command saves
// them when it exits, through the sandbox's private channel (never a file the agent could read in
// another session, nor one of /workspace), into the workspace's state folder on the host, and
// restores them before the next command. A command that is killed leaves the previous state.
// The workspace's quota holds as the command runs: a file may not grow beyond what remains
// (RLIMIT_FSIZE), and the workspace is measured every half second (the command is killed once
// it is over). A workspace already over its quota (files written between two measures) still
// runs commands, with that said first: they may delete, not add (no file may grow, and one that
// adds a file is killed). Refused outright, they would leave the agent no way to make room: no
// other tool deletes. docs/computer.md says more.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../src/common/config';
import type { Logger } from '../../src/common/logger';
import type { SessionWorkspace } from '../../src/common/workspaces/layout';
import { workspaceUsage, type WorkspaceUsage } from '../../src/common/workspaces/usage';
import { WORKSPACE_MOUNT } from '../../workflows/tool-registry';
import type { Sandbox, SandboxKill } from './sandbox';
import { PROXY_ENV } from './sandbox/network';
import { utf8Head } from './sandbox/output';
import { OutputFiles, type StreamName } from './sandbox/workspace-output';

export { OUTPUTS_FOLDER } from './sandbox/workspace-output';

export interface BashLimits {
  workspaceMaxBytes: number;
  workspaceMaxFiles: number;
  timeoutDefaultS: number;
  timeoutMaxS: number;
  memoryBytes: number;
  processes: number;
  cpuSeconds: number;
  /** stdout and stderr together; the command is killed beyond. */
  maxOutputBytes: number;
  /** Each of stdout and stderr reaches the model cut to this many bytes. */
  modelOutputBytes: number;
}

type BashConfig = Pick<
  Config,
  | 'WORKSPACE_MAX_BYTES'
  | 'WORKSPACE_MAX_FILES'
  | 'BASH_TIMEOUT_DEFAULT_S'
  | 'BASH_TIMEOUT_MAX_S'
  | 'SANDBOX_MEMORY_MB'
  | 'SANDBOX_MAX_PROCESSES'
  | 'SANDBOX_CPU_SECONDS'
  | 'SANDBOX_MAX_OUTPUT_BYTES'
  | 'BASH_OUTPUT_MODEL_BYTES'
>;

/** The limits the deployment's configuration sets. */
export function bashLimits(config: BashConfig): BashLimits {
  return {
    workspaceMaxBytes: config.WORKSPACE_MAX_BYTES,
    workspaceMaxFiles: config.WORKSPACE_MAX_FILES,
    timeoutDefaultS: config.BASH_TIMEOUT_DEFAULT_S,
    timeoutMaxS: config.BASH_TIMEOUT_MAX_S,
    memoryBytes: config.SANDBOX_MEMORY_MB * 1024 * 1024,
    processes: config.SANDBOX_MAX_PROCESSES,
    cpuSeconds: config.SANDBOX_CPU_SECONDS,
    maxOutputBytes: config.SANDBOX_MAX_OUTPUT_BYTES,
    modelOutputBytes: config.BASH_OUTPUT_MODEL_BYTES,
  };
}

export interface RunBashInput {
  sandbox: Sandbox;
  workspace: SessionWorkspace;
  command: string;
  /** The model's `timeout` argument, seconds (absent: the default; more than the maximum: clamped). */
  timeoutS?: number;
  limits: BashLimits;
  /** The call's id, the same across its retries: its output files are named after it. */
  callId: string;
  /** Aborting it kills the command. */
  signal?: AbortSignal;
  /** The command may use the network through the outbound policy (the sandbox's proxy). */
  network?: boolean;
  /** The workspace's size now, when the caller has just measured it (else it is measured here). */
  usageBefore?: WorkspaceUsage;
  logger?: Logger;
  /** How often the workspace is measured while the command runs, ms; default 500. */
  quotaCheckMs?: number;
}

/** One stream as the model gets it. */
export interface BashStream {
  /** What the model reads: all of it, or its head and tail around a note of what was cut. */
  text: string;
  /** Bytes the command wrote to it. */
  bytes: number;
  /** Bytes left out of `text`. */
  cutBytes: number;
  /** Where the whole stream is when it was cut: a path of the sandbox (/workspace/.outputs/...). */
  file?: string;
}

export type BashKill = SandboxKill | 'disk';

export interface BashResult {
  /** What the model reads. */
  text: string;
  /** The sandbox ended the command (`killed` says why). */
  isError: boolean;
  /** Null when it was killed. */
  exitCode: number | null;
  killed?: BashKill;
  durationMs: number;
  /** The timeout applied, seconds. */
  timeoutS: number;
  /** The working directory the command ended in (as the next call starts in it). */
  cwd?: string;
  stdout: BashStream;
  stderr: BashStream;
}

const PROXY_NAMES = Object.keys(PROXY_ENV).join(' | ');

/** The saved shell state (cwd and exported variables), in the workspace's state folder. */
export const SHELL_STATE_FILE = 'bash-shell.sh';
/** Largest saved shell state; beyond, the variables do not carry over (the result says so). */
const MAX_STATE_BYTES = 256 * 1024;
const STATE_END = '#agent-bash-state-end';

/**
 * The script bash runs: restore the saved state (read from fd 3), then run the command ($1) in this
 * same shell, as a terminal would, and save the state (to fd 4, moved to a free descriptor so that
 * the command has 3 and 4 to itself) when it ends, by `exit` too (the EXIT trap; a command that
 * sets its own EXIT trap and exits leaves the previous state). Builtins are called as `builtin`
 * after the command, whatever functions it defined; tracing is off and IFS is ours while saving.
 * SIGXFSZ is ignored (and so for every program the command starts: an ignored signal stays
 * ignored across exec), so that a write beyond the file size limit fails with "File too large"
 * rather than killing the writer, the shell itself included. The proxy variables are the
 * sandbox's, set for a run given network only: they are not carried to the next call.
 */
export const BASH_WRAPPER = `trap '' XFSZ
IFS= read -r -d '' __agent_state <&3; exec 3<&- {__agent_out}>&4 4>&-
__agent_gone() { builtin echo "bash: the working directory $1 is gone; starting in ${WORKSPACE_MOUNT}" >&2; builtin cd ${WORKSPACE_MOUNT}; }
eval "$__agent_state"; unset __agent_state
__agent_save() {
  { builtin set +x; } 2>/dev/null
  [[ -z $__agent_saved ]] || builtin return 0
  __agent_saved=1
  builtin local IFS=$' \\t\\n' __n
  {
    [[ $PWD == *$'\\n'* ]] || builtin printf '# cwd: %s\\n' "$PWD"
    builtin printf 'builtin cd -- %q 2>/dev/null || __agent_gone %q\\n' "$PWD" "$PWD"
    for __n in $(builtin compgen -e); do
      case $__n in PWD | OLDPWD | SHLVL | _ | BASH* | SHELLOPTS | EUID | UID | PPID | ${PROXY_NAMES}) continue ;; esac
      builtin printf 'builtin export %s=%q\\n' "$__n" "\${!__n-}"
    done
    builtin echo '${STATE_END}'
  } >&$__agent_out
}
trap __agent_save EXIT
__agent_cmd=$1; set --
builtin eval "$__agent_cmd"
__agent_status=$?; __agent_save; builtin exit $__agent_status`;

/** The timeout a call gets: the model's, within [1 s, max]; absent or not a number: the default. */
export function bashTimeout(asked: unknown, limits: Pick<BashLimits, 'timeoutDefaultS' | 'timeoutMaxS'>) {
  if (typeof asked !== 'number' || !Number.isFinite(asked) || asked <= 0) return { seconds: limits.timeoutDefaultS };
  if (asked > limits.timeoutMaxS) return { seconds: limits.timeoutMaxS, clampedFrom: asked };
  return { seconds: Math.max(1, asked) };
}

/** A file name made of the call's id: its safe characters, and a hash when some were not. */
export function outputName(callId: string): string {
  const safe =
    callId
      .replace(/[^A-Za-z0-9_.-]/g, '_')
      .replace(/^[.-]+/, '_')
      .slice(0, 80) || 'call';
  if (safe === callId) return safe;
  return `${safe}-${createHash('sha256').update(callId).digest('hex').slice(0, 8)}`;
}

const MiB = (n: number) => `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;
const seconds = (ms: number) => `${ms < 10_000 ? (ms / 1000).toFixed(2) : Math.round(ms / 1000)} s`;

/** Why the sandbox ended the command, in words a model acts on. */
export function killedText(reason: BashKill, limits: BashLimits, timeoutS: number): string {
  switch (reason) {
    case 'timeout':
      return `killed: it ran longer than its timeout of ${timeoutS} s${timeoutS < limits.timeoutMaxS ? ` (a longer one may be asked, up to ${limits.timeoutMaxS} s)` : ''}`;
    case 'memory':
      return `killed: it used more than ${MiB(limits.memoryBytes)} of memory`;
    case 'processes':
      return `killed: it tried to run more than ${limits.processes} processes at once`;
    case 'cpu':
      return `killed: it used more than ${limits.cpuSeconds} s of CPU time`;
    case 'output':
      return `killed: it wrote more than ${MiB(limits.maxOutputBytes)} of output (send big output to a file)`;
    case 'cancel':
      return 'killed: the run was cancelled';
    case 'disk':
      return `killed: ${quotaText(limits)}`;
  }
}

function quotaText(limits: BashLimits): string {
  return `the workspace is over its quota of ${limits.workspaceMaxBytes} bytes or ${limits.workspaceMaxFiles} files: delete files (rm) to make room`;
}

const over = (u: WorkspaceUsage, cap: WorkspaceUsage) => u.bytes > cap.bytes || u.files > cap.files;

/** The workspace's quota while a command runs: measured now and then; the command is aborted once over. */
function quotaWatch(files: string, cap: WorkspaceUsage, everyMs: number, abort: () => void) {
  let busy = false;
  let exceeded = false;
  const timer = setInterval(() => {
    if (busy || exceeded) return;
    busy = true;
    workspaceUsage(files)
      .then((u) => {
        if (over(u, cap)) {
          exceeded = true;
          abort();
        }
      })
      .catch(() => undefined) // a file removed mid-walk: the next check sees the workspace again
      .finally(() => (busy = false));
  }, everyMs);
  return { stop: () => clearInterval(timer), exceeded: () => exceeded };
}

/** The saved shell state, '' before the session's first call. */
async function readState(stateDir: string): Promise<string> {
  try {
    return await fs.promises.readFile(path.join(stateDir, SHELL_STATE_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

/** Saves what the script wrote at its end; a note for the model when it could not. */
async function saveState(stateDir: string, written: string | undefined): Promise<string | undefined> {
  if (written === undefined || !written.endsWith(`${STATE_END}\n`)) return undefined; // no end: the shell did not get to save
  if (Buffer.byteLength(written) > MAX_STATE_BYTES)
    return `note: the exported variables are too big to carry over (more than ${MAX_STATE_BYTES / 1024} KiB): the next command starts with those of before this one`;
  const file = path.join(stateDir, SHELL_STATE_FILE);
  await fs.promises.writeFile(`${file}.tmp`, written, { mode: 0o600 });
  await fs.promises.rename(`${file}.tmp`, file);
  return undefined;
}

/** The working directory the saved state names (first line), if the script got to save it. */
function cwdOf(written: string | undefined): string | undefined {
  return /^# cwd: (.*)$/m.exec(written ?? '')?.[1];
}

/** `text` cut to at most `max` bytes, at its last line break when that keeps most of it. */
function headAt(text: string, max: number): string {
  const head = utf8Head(Buffer.from(text), max);
  const nl = head.lastIndexOf('\n');
  return nl >= 0 && Buffer.byteLength(head.slice(0, nl + 1)) >= max * 0.8 ? head.slice(0, nl + 1) : head;
}

/** `text` without its first partial line, when that keeps most of it. */
function tailAt(text: string, max: number): string {
  const nl = text.indexOf('\n');
  return nl >= 0 && Buffer.byteLength(text.slice(nl + 1)) >= max * 0.8 ? text.slice(nl + 1) : text;
}

/** One stream for the model: whole, or its head and tail (from the file) around a note of the cut. */
function streamView(s: StreamName, head: string, bytes: number, max: number, files?: OutputFiles): BashStream {
  if (bytes <= max) return { text: head, bytes, cutBytes: 0 };
  if (!files) {
    const shown = headAt(head, max);
    const cut = bytes - Buffer.byteLength(shown);
    return {
      text: `${shown}\n[… ${cut} more bytes not shown; the whole ${s} could not be kept …]`,
      bytes,
      cutBytes: cut,
    };
  }
  const half = Math.floor(max / 2);
  const start = headAt(head, half);
  const kept = files.size(s);
  const end = tailAt(files.tail(s, half), half);
  const cut = kept - Buffer.byteLength(start) - Buffer.byteLength(end);
  const where =
    kept < bytes
      ? `the first ${kept} of its ${bytes} bytes are in ${files.agentPath(s)}`
      : `all ${bytes} bytes are in ${files.agentPath(s)}`;
  const text = `${start}${start.endsWith('\n') ? '' : '\n'}[… ${cut} bytes cut here; ${where} …]\n${end}`;
  return { text, bytes, cutBytes: bytes - Buffer.byteLength(start) - Buffer.byteLength(end), file: files.agentPath(s) };
}

/** The command through the sandbox, the workspace's quota watched meanwhile. */
async function runWatched(input: RunBashInput, timeoutS: number, before: WorkspaceUsage, files?: OutputFiles) {
  const { limits, workspace: ws } = input;
  // Over its quota already, the workspace may still shrink: the command runs, but may not add.
  const cap = {
    bytes: Math.max(limits.workspaceMaxBytes, before.bytes),
    files: Math.max(limits.workspaceMaxFiles, before.files),
  };
  const quota = new AbortController();
  const signal = input.signal ? AbortSignal.any([input.signal, quota.signal]) : quota.signal;
  const watch = quotaWatch(ws.files, cap, input.quotaCheckMs ?? 500, () => quota.abort());
  try {
    const result = await input.sandbox.run({
      argv: ['bash', '--noprofile', '--norc', '-c', BASH_WRAPPER, 'bash', input.command],
      workspace: ws.files,
      timeoutMs: timeoutS * 1000,
      signal,
      ...(input.network && { network: true }),
      limits: {
        memoryBytes: limits.memoryBytes,
        processes: limits.processes,
        cpuSeconds: limits.cpuSeconds,
        maxOutputBytes: limits.maxOutputBytes,
        fileSizeBytes: Math.max(0, limits.workspaceMaxBytes - before.bytes),
      },
      keepBytes: limits.modelOutputBytes,
      ...(files ? { outputFiles: files.fds } : {}),
      channel: { input: await readState(ws.state), maxOutputBytes: MAX_STATE_BYTES + 1 },
    });
    const disk = result.killed === 'cancel' && watch.exceeded() && !input.signal?.aborted;
    return { result, killed: disk ? ('disk' as const) : result.killed };
  } finally {
    watch.stop();
  }
}

/** The text the model reads. */
function resultText(r: Omit<BashResult, 'text' | 'isError'>, notes: string[], limits: BashLimits): string {
  const lines = [...notes];
  lines.push(r.killed ? killedText(r.killed, limits, r.timeoutS) : `exit code: ${r.exitCode}`);
  lines.push(`duration: ${seconds(r.durationMs)}`);
  if (r.cwd) lines.push(`cwd: ${r.cwd}`);
  for (const s of ['stdout', 'stderr'] as const) {
    const text = r[s].text;
    lines.push(text ? `${s}:\n${text.endsWith('\n') ? text.slice(0, -1) : text}` : `${s}: (empty)`);
  }
  return lines.join('\n');
}

/**
 * Runs `command` with bash in the session's sandbox (see the file's head). Throws only for a fault
 * of the machinery (the sandbox could not start, the disk failed); everything about the command
 * itself, its failure included, is in the result.
 */
export async function runBash(input: RunBashInput): Promise<BashResult> {
  const { limits, workspace: ws } = input;
  const timeout = bashTimeout(input.timeoutS, limits);
  await fs.promises.mkdir(ws.files, { recursive: true });
  await fs.promises.mkdir(ws.state, { recursive: true });
  const before = input.usageBefore ?? (await workspaceUsage(ws.files));
  const overAtStart = over(before, { bytes: limits.workspaceMaxBytes, files: limits.workspaceMaxFiles });
  const notes: string[] = [];
  if (timeout.clampedFrom !== undefined)
    notes.push(
      `note: the timeout was limited to ${timeout.seconds} s (${timeout.clampedFrom} s asked; the most allowed)`,
    );
  if (overAtStart)
    notes.push(
      `note: ${quotaText(limits)}. It holds ${before.bytes} bytes in ${before.files} files; this command could not write to files, and is killed if it adds any.`,
    );
  const files = overAtStart ? undefined : OutputFiles.open(ws.files, outputName(input.callId));
  let run: Awaited<ReturnType<typeof runWatched>>;
  try {
    run = await runWatched(input, timeout.seconds, before, files);
  } catch (err) {
    files?.finish({ stdout: false, stderr: false });
    throw err;
  }
  const { result, killed } = run;
  const stateNote = killed ? undefined : await saveState(ws.state, result.channelOutput);
  if (stateNote) notes.push(stateNote);
  const max = limits.modelOutputBytes;
  const stdout = streamView('stdout', result.stdout, result.stdoutBytes, max, files);
  const stderr = streamView('stderr', result.stderr, result.stderrBytes, max, files);
  files?.finish({ stdout: !!stdout.file, stderr: !!stderr.file });
  const out: Omit<BashResult, 'text' | 'isError'> = {
    exitCode: killed ? null : result.exitCode,
    ...(killed ? { killed } : {}),
    durationMs: Math.round(result.durationMs),
    timeoutS: timeout.seconds,
    ...(killed ? {} : { cwd: cwdOf(result.channelOutput) }),
    stdout,
    stderr,
  };
  input.logger?.[killed ? 'info' : 'debug'](
    { callId: input.callId, exitCode: out.exitCode, killed, durationMs: Math.round(result.durationMs) },
    'bash command ended',
  );
  return { text: resultText(out, notes, limits), isError: !!killed, ...out };
}
