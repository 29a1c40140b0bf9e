// Where the CLI writes: the answer and listings on stdout, everything about
// the run (tool calls, steps, errors, the spinner) on stderr, so that
// `agent run "..." > answer.txt` keeps only the answer. Colors are plain ANSI,
// used only on a terminal and only without NO_COLOR. Tracks whether the
// terminal's cursor is at the start of a line, so the spinner never draws over
// half a line of answer.

export type Style = 'dim' | 'bold' | 'red' | 'green' | 'yellow' | 'cyan' | 'magenta';

const CODES: Record<Style, [number, number]> = {
  dim: [2, 22],
  bold: [1, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  magenta: [35, 39],
};

export interface Stream {
  write(s: string | Uint8Array): unknown;
  isTTY?: boolean;
  columns?: number;
}

export class Output {
  readonly stdoutColor: boolean;
  readonly stderrColor: boolean;
  /** The terminal's cursor is at column 0 (both streams may share one terminal). */
  private atLineStart = true;
  /** Called before anything is written, so the spinner can take its line back. */
  beforeWrite: () => void = () => undefined;

  constructor(
    readonly stdout: Stream = process.stdout,
    readonly stderr: Stream = process.stderr,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const colorOk = env.NO_COLOR === undefined || env.NO_COLOR === '';
    this.stdoutColor = !!stdout.isTTY && colorOk;
    this.stderrColor = !!stderr.isTTY && colorOk;
  }

  /** Writes to stdout as is (an answer's tokens arrive mid-line). */
  out(text: string): void {
    this.write(this.stdout, text);
  }

  /** Writes bytes to stdout as they are (a downloaded file). */
  bytes(data: Uint8Array): void {
    if (!data.length) return;
    this.beforeWrite();
    this.stdout.write(data);
    if (this.stdout.isTTY) this.atLineStart = data[data.length - 1] === 0x0a;
  }

  line(text = ''): void {
    this.out(`${text}\n`);
  }

  err(text: string): void {
    this.write(this.stderr, text);
  }

  errLine(text: string): void {
    this.err(`${text}\n`);
  }

  /** Styles text for stdout (or stderr with `onStderr`), only where colors are on. */
  paint(style: Style, text: string, onStderr = false): string {
    if (!(onStderr ? this.stderrColor : this.stdoutColor)) return text;
    const [on, off] = CODES[style];
    return `\x1b[${on}m${text}\x1b[${off}m`;
  }

  get cursorAtLineStart(): boolean {
    return this.atLineStart;
  }

  /** Width of the terminal for tables; unbounded when stdout is not one (a pipe or file keeps whole lines). */
  get columns(): number {
    if (!this.stdout.isTTY) return Infinity;
    return this.stdout.columns || 80;
  }

  private write(stream: Stream, text: string): void {
    if (!text) return;
    this.beforeWrite();
    stream.write(text);
    if (stream.isTTY) this.atLineStart = text.endsWith('\n');
  }
}
