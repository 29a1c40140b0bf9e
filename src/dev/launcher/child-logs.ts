// Where `npm start` sends its processes' output: one file per process under
// the data folder (the lines as written, JSON for the service's own processes),
// and the terminal, each line rendered and prefixed by its process.
import fs from 'node:fs';
import path from 'node:path';
import { LogFormat, renderLine } from '../../common/log-lines';

/** A log file past this size at start, or while written, is moved to `<name>.log.1` (one old file kept). */
const ROTATE_BYTES = 20 * 1024 * 1024;

export interface ChildLogsOptions {
  /** Folder of the files; absent: no files. */
  dir?: string;
  /** Shows a rendered line; absent: nothing is shown. */
  show?: (line: string) => void;
  format?: LogFormat;
  color?: boolean;
  /** Processes whose lines go to their file only (Redis: its start-up chatter is not the service's news). */
  fileOnly?: string[];
}

interface LogFile {
  stream: fs.WriteStream;
  bytes: number;
}

export class ChildLogs {
  private readonly files = new Map<string, LogFile>();

  constructor(private readonly opts: ChildLogsOptions) {
    if (opts.dir) fs.mkdirSync(opts.dir, { recursive: true });
  }

  /** The file a process's lines go to, if files are kept. */
  fileOf(proc: string): string | undefined {
    return this.opts.dir ? path.join(this.opts.dir, `${proc}.log`) : undefined;
  }

  line(proc: string, line: string): void {
    if (this.opts.dir) this.write(proc, `${line}\n`);
    if (this.opts.fileOnly?.includes(proc)) return;
    this.opts.show?.(renderLine(line, proc, this.opts.format ?? 'pretty', this.opts.color));
  }

  async close(): Promise<void> {
    const open = [...this.files.values()];
    this.files.clear();
    await Promise.all(open.map((f) => new Promise((resolve) => f.stream.end(resolve))));
  }

  private write(proc: string, text: string): void {
    let f = this.files.get(proc);
    if (f && f.bytes > ROTATE_BYTES) {
      f.stream.end();
      f = undefined;
    }
    if (!f) {
      f = this.open(this.fileOf(proc)!);
      this.files.set(proc, f);
    }
    f.bytes += Buffer.byteLength(text);
    f.stream.write(text);
  }

  private open(file: string): LogFile {
    let bytes = 0;
    try {
      bytes = fs.statSync(file).size;
    } catch {
      // a new file
    }
    if (bytes > ROTATE_BYTES) {
      fs.renameSync(file, `${file}.1`);
      bytes = 0;
    }
    return { stream: fs.createWriteStream(file, { flags: 'a' }), bytes };
  }
}
