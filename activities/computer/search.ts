// The `glob` and `grep` tools (workflows/tool-registry.ts): ripgrep over the session's workspace,
// run on the host (not in the sandbox: rg only reads, and a search must not wait for a sandbox).
// What keeps it inside the workspace: the folder searched is pinned (no race with a command that
// swaps it for a link) and rg's working directory is that open folder, by the worker's descriptor
// (a file grepped is passed the same way); rg never follows a link below it (no -L), so a link to /etc shows nothing of
// /etc; the user's pattern comes after `--` and globs travel as `--glob=<pattern>`, one argument,
// so neither can become a flag; --no-config, so no RIPGREP_CONFIG_PATH adds any.
// What the agent sees: every file, hidden ones (--hidden) and those its own .gitignore names
// (--no-ignore) included, as the glob tool's description promises: the workspace is the agent's
// own computer, and a file it cannot find but bash can list would only confuse it. Results come
// sorted by path (--sort path: rg sorts each folder's entries, so a folder's files come together)
// and cut at MAX_PATHS / MAX_MATCHES lines or MAX_CHARS characters, saying how many more there were.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { WORKSPACE_MOUNT } from '../../workflows/tool-registry';
import type { SessionWorkspace } from '../../src/common/workspaces/layout';
import { ToolInputError } from '../tools/builtin';
import { constants as C } from 'node:fs';
import { forChild, openNoFollow } from '../../src/common/workspaces/pinned';
import { pinToolPath, shown, statOrMissing } from './editor-files';

/** Most paths a glob answers. */
export const MAX_PATHS = 1_000;
/** Most matching lines a grep answers. */
export const MAX_MATCHES = 500;
/** Most characters of either answer (the rest is counted, not shown). */
export const MAX_CHARS = 30_000;
/** A matching line longer than this many characters is shown cut (minified files). */
export const MAX_LINE_CHARS = 500;
/** rg is killed after this long (a search of a huge workspace; what it found by then is answered). */
export const SEARCH_TIMEOUT_MS = 30_000;

export interface SearchOptions {
  /** Default SEARCH_TIMEOUT_MS. */
  timeoutMs?: number;
  /** The task's cancellation: rg is killed. */
  signal?: AbortSignal;
}

export interface SearchResult {
  /** What the model reads. */
  text: string;
}

/** The glob tool: workspace files whose path (relative to `path`) matches `pattern`. */
export async function runGlob(
  args: Record<string, unknown>,
  ws: SessionWorkspace,
  options: SearchOptions = {},
): Promise<SearchResult> {
  const given = known(args, ['pattern', 'path']);
  const where = await folderOf(ws, given.path, 'folder');
  let out: Collected;
  let pattern: string;
  try {
    pattern = relativePattern(requiredString(given, 'pattern'), where.rel);
    if (!where.exists) return { text: `No files match \`${pattern}\` in ${shown(where.rel)}.\n` };
    const argv = ['--files', '--null', ...COMMON, `--glob=${pattern}`];
    out = await ripgrep(argv, where.cwd, '\0', MAX_PATHS, (p) => join(where.rel, p), options);
  } finally {
    await where.close();
  }
  if (out.error !== undefined) throw new ToolInputError(`The pattern was refused: ${out.error}`);
  if (!out.items.length && !out.timedOut) return { text: `No files match \`${pattern}\` in ${shown(where.rel)}.\n` };
  const head = `${count(out, 'file')} ${out.items.length + out.more === 1 ? 'matches' : 'match'} \`${pattern}\` in ${shown(where.rel)} (paths relative to ${WORKSPACE_MOUNT}):\n`;
  return { text: head + body(out, 'narrow the pattern or the path') };
}

/** The grep tool: lines of workspace files (under `path`, or that file) matching the regex `pattern`. */
export async function runGrep(
  args: Record<string, unknown>,
  ws: SessionWorkspace,
  options: SearchOptions = {},
): Promise<SearchResult> {
  const given = known(args, ['pattern', 'path', 'glob', 'ignore_case']);
  const pattern = requiredString(given, 'pattern');
  if (given.ignore_case !== undefined && typeof given.ignore_case !== 'boolean')
    throw new ToolInputError('The parameter `ignore_case` must be true or false.');
  const where = await folderOf(ws, given.path, 'file or folder');
  const argv = [...COMMON, '--line-number', '--no-heading', '--with-filename', '--color=never'];
  argv.push(`--max-columns=${MAX_LINE_CHARS}`, '--max-columns-preview');
  argv.push(given.ignore_case ? '--ignore-case' : '--case-sensitive');
  if (given.glob !== undefined) {
    if (typeof given.glob !== 'string' || !given.glob)
      throw new ToolInputError('The parameter `glob` must be a glob such as *.ts.');
    argv.push(`--glob=${relativePattern(given.glob, where.rel)}`);
  }
  argv.push('--', pattern, ...(where.file ? [where.file] : []));
  const none = `No matches for \`${pattern}\` in ${shown(where.fileRel ?? where.rel)}.\n`;
  // One file's lines come prefixed with the /proc path rg read it by: shown as the file's own.
  const shape = (line: string) =>
    where.file && line.startsWith(`${where.file}:`)
      ? `${where.fileRel}${line.slice(where.file.length)}`
      : join(where.rel, line);
  let out: Collected;
  try {
    if (!where.exists) return { text: none };
    out = await ripgrep(argv, where.cwd, '\n', MAX_MATCHES, shape, options);
  } finally {
    await where.close();
  }
  if (out.error !== undefined) throw new ToolInputError(`The search was refused: ${out.error}`);
  if (!out.items.length && !out.timedOut) return { text: none };
  const head = `${count(out, 'match', 'matches')} for \`${pattern}\` in ${shown(where.fileRel ?? where.rel)} (path:line:text, paths relative to ${WORKSPACE_MOUNT}):\n`;
  return { text: head + body(out, 'narrow the pattern, the path or the glob') };
}

/** Flags of both tools; the sort makes the cut a prefix of the sorted whole. */
const COMMON = ['--no-config', '--hidden', '--no-ignore', '--sort=path'];

/** The arguments without nulls (strict schemas send null for one not given); unknown names refused. */
function known(args: Record<string, unknown>, names: string[]): Record<string, unknown> {
  const unknown = Object.keys(args).filter((k) => !names.includes(k));
  if (unknown.length) throw new ToolInputError(`Unknown parameter(s): ${unknown.join(', ')}.`);
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null && v !== undefined));
}

function requiredString(args: Record<string, unknown>, name: string): string {
  const v = args[name];
  if (typeof v !== 'string' || !v)
    throw new ToolInputError(`The parameter \`${name}\` (a non-empty string) is required.`);
  return v;
}

/**
 * A glob written as the agent sees paths (`/workspace/src/**`) made relative to the folder
 * searched, which is what rg matches it against; anything else is left as it is.
 */
function relativePattern(pattern: string, rel: string): string {
  const base = rel ? `${WORKSPACE_MOUNT}/${rel}/` : `${WORKSPACE_MOUNT}/`;
  if (pattern.startsWith(base)) return pattern.slice(base.length);
  if (pattern.startsWith(`${WORKSPACE_MOUNT}/`))
    throw new ToolInputError(
      `The pattern ${pattern} is not under the folder searched (${shown(rel)}): make it relative to it.`,
    );
  return pattern;
}

interface Where {
  /** The folder searched, workspace-relative. */
  rel: string;
  /** rg's working directory: the folder, open in the worker, by its /proc path (no name to swap). */
  cwd: string;
  exists: boolean;
  /** A grep of one file: the file, open in the worker, by its /proc path, and its workspace path. */
  file?: string;
  fileRel?: string;
  /** Closes what the worker holds open for the search. */
  close(): Promise<void>;
}

/**
 * The folder (or file) to search, pinned and then opened itself without following a link
 * (src/common/workspaces/pinned.ts): rg gets it by the worker's descriptor, so a command swapping
 * it for a link to /etc meanwhile leads rg nowhere.
 */
async function folderOf(ws: SessionWorkspace, name: unknown, kind: 'folder' | 'file or folder'): Promise<Where> {
  if (name !== undefined && typeof name !== 'string')
    throw new ToolInputError('The parameter `path` must be a string.');
  const p = await pinToolPath(ws.files, name ?? '');
  try {
    const st = await statOrMissing(p);
    const { rel } = p;
    // A new session's workspace folder may not exist yet: it holds nothing.
    if (!st && !rel) return { rel, cwd: '', exists: false, close: p.close };
    if (!st) throw new ToolInputError(`The path ${shown(rel)} does not exist.`);
    if (!st.isDirectory() && (kind === 'folder' || !st.isFile()))
      throw new ToolInputError(`The path ${shown(rel)} is not a ${kind === 'folder' ? 'folder' : 'file'}.`);
    const flags = st.isDirectory() ? C.O_RDONLY | C.O_DIRECTORY : C.O_RDONLY | C.O_NONBLOCK;
    const opened = await openNoFollow(p.abs, flags).catch((err: NodeJS.ErrnoException) => {
      throw new ToolInputError(`The path ${shown(rel)} changed while it was searched (${err.code}): search again.`);
    });
    const close = async () => {
      await opened.close();
      await p.close();
    };
    const held = forChild(`/proc/self/fd/${opened.fd}`);
    if (st.isDirectory()) return { rel, cwd: held, exists: true, close };
    const parent = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
    return { rel: parent, cwd: forChild(path.dirname(p.abs)), exists: true, file: held, fileRel: rel, close };
  } catch (err) {
    await p.close();
    throw err;
  }
}

const join = (rel: string, item: string) => (rel ? `${rel}/${item}` : item);

interface Collected {
  items: string[];
  /** Items found beyond the cut (the count of all of them: rg is read to its end). */
  more: number;
  timedOut: boolean;
  /** rg's own message when it refused the search and found nothing (a bad regex or glob). */
  error?: string;
  /** rg's message about files it could not read, beside results. */
  warning?: string;
}

function count(out: Collected, one: string, many = `${one}s`): string {
  const n = out.items.length + out.more;
  return `${out.timedOut ? 'At least ' : ''}${n} ${n === 1 ? one : many}`;
}

function body(out: Collected, narrow: string): string {
  let text = out.items.length ? `${out.items.join('\n')}\n` : '';
  if (out.more) text += `[${out.more} more not shown: ${narrow}.]\n`;
  if (out.timedOut)
    text += `[The search was stopped after its time limit: the results above are what it found by then; ${narrow}.]\n`;
  if (out.warning) text += `[Some files could not be searched: ${out.warning}]\n`;
  return text;
}

/**
 * Runs rg in `cwd` and collects what it prints, `sep`-separated, shaped by `shape`: the first
 * `maxItems` within MAX_CHARS kept, the rest counted. Killed at the time limit or the signal.
 */
function ripgrep(
  argv: string[],
  cwd: string,
  sep: string,
  maxItems: number,
  shape: (item: string) => string,
  options: SearchOptions,
): Promise<Collected> {
  options.signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const rg = spawn('rg', argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Collected = { items: [], more: 0, timedOut: false };
    let chars = 0;
    let partial = '';
    let stderr = '';
    const take = (item: string) => {
      const shaped = shape(item);
      if (!out.more && out.items.length < maxItems && chars + shaped.length + 1 <= MAX_CHARS) {
        out.items.push(shaped);
        chars += shaped.length + 1;
      } else out.more++;
    };
    rg.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (partial + chunk).split(sep);
      partial = parts.pop() ?? '';
      for (const part of parts) take(part);
    });
    rg.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 4000) stderr += chunk;
    });
    const kill = () => rg.kill('SIGKILL');
    const timer = setTimeout(() => {
      out.timedOut = true;
      kill();
    }, options.timeoutMs ?? SEARCH_TIMEOUT_MS);
    options.signal?.addEventListener('abort', kill, { once: true });
    rg.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`ripgrep (rg) could not be started on the worker: ${err.message}`));
    });
    rg.on('close', (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', kill);
      if (options.signal?.aborted) return reject(options.signal.reason);
      // A last item without its separator was cut by the kill: it is counted, not shown half.
      if (partial && out.timedOut) out.more++;
      else if (partial) take(partial);
      const message = stderr.trim().slice(0, 2000);
      if (code === 2 && !out.items.length && !out.timedOut) out.error = message || 'rg failed';
      else if (code === 2 && message) out.warning = message.split('\n')[0];
      resolve(out);
    });
  });
}
