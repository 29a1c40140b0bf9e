// A one-line progress indicator on stderr while the CLI waits (for the model,
// a tool, a reconnection): a turning bar, what is going on and the time spent.
// Drawn only when stderr is a terminal and the cursor is at the start of a
// line; erased before anything else is written, then drawn again at the next
// tick.
import type { Output } from './output';

const FRAMES = ['|', '/', '-', '\\'];
const TICK_MS = 100;

export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private shown = false;
  private frame = 0;
  private readonly startedAt = Date.now();
  label = 'waiting';

  constructor(private readonly out: Output) {
    out.beforeWrite = () => this.erase();
  }

  get enabled(): boolean {
    return !!this.out.stderr.isTTY;
  }

  start(label?: string): void {
    if (label) this.label = label;
    if (!this.enabled || this.timer) return;
    this.timer = setInterval(() => this.draw(), TICK_MS);
    this.timer.unref();
    this.draw();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.erase();
  }

  private draw(): void {
    if (!this.out.cursorAtLineStart) return;
    const seconds = ((Date.now() - this.startedAt) / 1000).toFixed(1);
    const text = `${FRAMES[this.frame++ % FRAMES.length]} ${this.label} ${seconds}s`;
    // Written straight to the stream: the Output's line tracking must not count the spinner.
    this.out.stderr.write(`\r\x1b[K${this.out.paint('dim', text, true)}`);
    this.shown = true;
  }

  private erase(): void {
    if (!this.shown) return;
    this.out.stderr.write('\r\x1b[K');
    this.shown = false;
  }
}
