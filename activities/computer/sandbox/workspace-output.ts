// A command's output files in the workspace (the bash tool keeps there the whole stdout and
// stderr of a call whose output reached the model cut). The worker writes them into a folder the
// agent controls: the folder is opened without following a link and the files through that open
// folder (/proc/self/fd/N/name), so a link the agent put in place of either cannot make the worker
// write, read or delete a file outside the workspace.
import fs from 'node:fs';
import path from 'node:path';
import { WORKSPACE_MOUNT } from '../../../workflows/tool-registry';
import { utf8Tail } from './output';

/** Folder of the workspace that keeps the whole output of calls whose output was cut. */
export const OUTPUTS_FOLDER = '.outputs';

export type StreamName = 'stdout' | 'stderr';

/** A call's two output files in the workspace's .outputs folder, created empty (or emptied). */
export class OutputFiles {
  private constructor(
    private readonly dir: string,
    private readonly dirFd: number,
    private readonly base: string,
    readonly fds: Record<StreamName, number>,
  ) {}

  static open(filesDir: string, base: string): OutputFiles | undefined {
    const dir = path.join(filesDir, OUTPUTS_FOLDER);
    const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_RDWR, O_CREAT, O_TRUNC } = fs.constants;
    try {
      fs.mkdirSync(dir, { recursive: true });
      const dirFd = fs.openSync(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      const open = (s: StreamName) =>
        fs.openSync(`/proc/self/fd/${dirFd}/${base}.${s}`, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o644);
      return new OutputFiles(dir, dirFd, base, { stdout: open('stdout'), stderr: open('stderr') });
    } catch {
      return undefined; // .outputs is not a folder (the agent made it a file or a link): no output kept
    }
  }

  agentPath(s: StreamName): string {
    return `${WORKSPACE_MOUNT}/${OUTPUTS_FOLDER}/${this.base}.${s}`;
  }

  size(s: StreamName): number {
    return fs.fstatSync(this.fds[s]).size;
  }

  /** The last `max` bytes of what the file holds (no character cut in two). */
  tail(s: StreamName, max: number): string {
    const size = this.size(s);
    const n = Math.min(size, max);
    const buf = Buffer.alloc(n);
    fs.readSync(this.fds[s], buf, 0, n, size - n);
    return utf8Tail(buf, max);
  }

  /** Closes both; removes those not kept (their stream reached the model whole), and the folder if that leaves it empty. */
  finish(keep: Record<StreamName, boolean>): void {
    for (const s of ['stdout', 'stderr'] as const) {
      fs.closeSync(this.fds[s]);
      if (!keep[s]) fs.rmSync(`/proc/self/fd/${this.dirFd}/${this.base}.${s}`, { force: true });
    }
    fs.closeSync(this.dirFd);
    if (!keep.stdout && !keep.stderr)
      try {
        fs.rmdirSync(this.dir); // only ever removes an empty folder (not a link: ENOTDIR)
      } catch {
        // earlier calls' outputs are there
      }
  }
}
