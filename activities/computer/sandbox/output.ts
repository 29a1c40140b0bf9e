// A command's stdout and stderr as the sandbox reads them: the head of each kept in memory, the
// whole of each written to a host file when asked, both counted against one budget (the output
// limit: the sandbox kills the command beyond). A slow disk slows the command rather than the
// worker's memory: reading pauses while a file write is pending.
import fs from 'node:fs';
import type { Readable } from 'node:stream';

/** The longest prefix of `buf` of at most `max` bytes that does not end inside a utf8 character, as a string. */
export function utf8Head(buf: Buffer, max: number): string {
  if (buf.length <= max) return buf.toString('utf8');
  return buf.subarray(0, utf8Boundary(buf, max)).toString('utf8');
}

/** The longest suffix of `buf` of at most `max` bytes that does not start inside a utf8 character, as a string. */
export function utf8Tail(buf: Buffer, max: number): string {
  if (buf.length <= max) return buf.toString('utf8');
  let start = buf.length - max;
  while (start < buf.length && (buf[start] & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString('utf8');
}

/** The largest cut ≤ max that falls between two utf8 characters of buf. */
function utf8Boundary(buf: Buffer, max: number): number {
  let lead = max;
  while (lead > 0 && lead > max - 4 && (buf[lead] & 0xc0) === 0x80) lead--;
  return lead;
}

/** The output limit shared by both streams. */
export class OutputBudget {
  used = 0;
  constructor(
    readonly max: number,
    private readonly onOver: () => void,
  ) {}

  /** How many of `n` new bytes fit; calls onOver (once) when some do not. */
  take(n: number): number {
    const fits = Math.max(0, Math.min(n, this.max - this.used));
    this.used += n;
    if (fits < n && this.used - n <= this.max) this.onOver();
    return fits;
  }
}

export class StreamCollector {
  total = 0;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private readonly file?: fs.WriteStream;
  /** Resolves when the stream has ended (or failed) and its file is closed. */
  readonly done: Promise<void>;

  constructor(
    private readonly stream: Readable,
    private readonly keepBytes: number,
    private readonly budget: OutputBudget,
    file?: string | number,
  ) {
    if (typeof file === 'string') this.file = fs.createWriteStream(file, { mode: 0o644 });
    else if (typeof file === 'number') this.file = fs.createWriteStream('', { fd: file, autoClose: false });
    stream.on('data', (chunk: Buffer) => this.onData(chunk));
    const ended = new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    });
    this.done = ended.then(() => this.closeFile());
  }

  private onData(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headBytes < this.keepBytes) {
      const part = chunk.subarray(0, this.keepBytes - this.headBytes);
      this.head.push(part);
      this.headBytes += part.length;
    }
    const fits = this.budget.take(chunk.length);
    if (this.file && fits > 0 && !this.file.write(chunk.subarray(0, fits))) {
      this.stream.pause();
      this.file.once('drain', () => this.stream.resume());
    }
  }

  private closeFile(): Promise<void> {
    const file = this.file;
    if (!file) return Promise.resolve();
    return new Promise((resolve) => {
      file.once('error', () => resolve());
      // A descriptor given to us stays open (autoClose false): end() only flushes.
      file.end(() => resolve());
    });
  }

  /** The kept head as text (no character cut in two). */
  text(): string {
    return utf8Head(Buffer.concat(this.head), this.keepBytes);
  }
}
