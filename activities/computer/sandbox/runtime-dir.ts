// The worker's private folder for its sandboxes (0700, under the host's temporary folder, never
// visible in a sandbox): the sandbox's own /etc files, and the named pipes a command writes its
// stdout and stderr into. Pipes, not the socket pairs node gives a child: a socket as stdout
// makes `echo > /dev/stdout`, `tee /dev/stderr` and python's open('/dev/stdout') fail (ENXIO),
// which scripts do all the time. Node cannot make a pipe itself, so mkfifo makes them, eight at a
// time, and a pair returns to the pool after a command whose streams ended cleanly.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { generatedEtc } from './host-layout';

const execFileP = promisify(execFile);

/** One end of a named pipe for the command (blocking, as programs expect) and ours to read (non-blocking). */
export interface OpenFifo {
  path: string;
  writeFd: number;
  reader: net.Socket;
}

export class RuntimeDir {
  readonly etcFiles: string[];
  private free: string[] = [];
  private made = 0;

  private constructor(
    readonly dir: string,
    readonly etcDir: string,
    uid: number,
    gid: number,
  ) {
    const files = generatedEtc(uid, gid);
    this.etcFiles = Object.keys(files);
    fs.mkdirSync(etcDir, { mode: 0o755 });
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(etcDir, name), text, { mode: 0o644 });
  }

  /** A new folder under `parent` (default: the host's temporary folder), named after this process. */
  static create(uid: number, gid: number, parent = os.tmpdir()): RuntimeDir {
    RuntimeDir.sweep(parent);
    const dir = fs.mkdtempSync(path.join(parent, `agent-sandbox-${process.pid}-`));
    fs.chmodSync(dir, 0o700);
    return new RuntimeDir(dir, path.join(dir, 'etc'), uid, gid);
  }

  /** Removes the folders of workers of this user that no longer run (a worker killed leaves its own). */
  private static sweep(parent: string): void {
    for (const name of fs.readdirSync(parent)) {
      const pid = Number(/^agent-sandbox-(\d+)-/.exec(name)?.[1]);
      if (!pid || pid === process.pid || alive(pid)) continue;
      const p = path.join(parent, name);
      if (fs.lstatSync(p, { throwIfNoEntry: false })?.uid === process.getuid?.())
        fs.rmSync(p, { recursive: true, force: true });
    }
  }

  /** Whether the folder is still there (a cleaner of the temporary folder may have removed it). */
  intact(): boolean {
    return fs.existsSync(this.etcDir);
  }

  /** A named pipe opened for one command. */
  async openFifo(): Promise<OpenFifo> {
    if (!this.free.length) await this.makeFifos(8);
    const p = this.free.pop() as string;
    // Our end first and non-blocking: opening the write end then returns at once (a reader exists).
    const readFd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    let writeFd: number;
    try {
      writeFd = fs.openSync(p, fs.constants.O_WRONLY);
    } catch (err) {
      fs.closeSync(readFd);
      throw err;
    }
    return { path: p, writeFd, reader: new net.Socket({ fd: readFd, readable: true, writable: false }) };
  }

  /** Back to the pool when its stream ended (no writer left, nothing unread), else thrown away. */
  releaseFifo(fifo: OpenFifo, clean: boolean): void {
    fifo.reader.destroy();
    if (clean) this.free.push(fifo.path);
    else fs.rmSync(fifo.path, { force: true });
  }

  private async makeFifos(n: number): Promise<void> {
    const names = Array.from({ length: n }, () => path.join(this.dir, `fifo-${++this.made}`));
    await execFileP('mkfifo', ['-m', '600', ...names]);
    this.free.push(...names);
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Whether a process of this pid runs (one of another user's too). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
