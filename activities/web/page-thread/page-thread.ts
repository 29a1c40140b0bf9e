// The worker's page thread: web_fetch's conversion of a page (page-content.ts) off the main event
// loop. Readability over a few megabytes of HTML, or pdf.js over a large PDF, takes seconds of CPU;
// on the main thread that would stall every other activity of the worker, their heartbeats and
// its workflow tasks. One thread, started on first use, converts one page at a time (the others
// wait their turn here); a page that takes longer than the time limit ends the thread (a hostile
// PDF cannot spin forever), its call gets an error the model reads, and the next page gets a
// fresh thread.
import path from 'node:path';
import { Worker as Thread } from 'node:worker_threads';
import type { Logger } from 'pino';
import { threadExecArgv } from '../../../src/common/helper-thread';
import { type PageContent, PageContentError, type PageInput } from '../page-content';

export type ToPageThread = { id: number; input: PageInput };
export type FromPageThread =
  | { type: 'ready' }
  | { id: number; content: PageContent }
  | { id: number; error: { message: string; unreadable: boolean } };

interface Job {
  id: number;
  input: PageInput;
  timeoutMs: number;
  resolve(c: PageContent): void;
  reject(e: Error): void;
}

const ENTRY = path.join(__dirname, `thread-main${path.extname(__filename)}`);

export class PageThread {
  private thread?: Thread;
  private readonly queue: Job[] = [];
  private current?: { job: Job; timer: NodeJS.Timeout };
  private lastId = 0;
  private closed = false;

  constructor(private readonly opts: { timeoutMs: number; logger?: Logger }) {}

  /**
   * The page made readable, in the thread; PageContentError when it cannot be, or took longer than
   * `timeoutMs` (default: the thread's) once its turn came.
   */
  convert(input: PageInput, timeoutMs = this.opts.timeoutMs): Promise<PageContent> {
    if (this.closed) return Promise.reject(new Error('the page thread is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: ++this.lastId, input, timeoutMs, resolve, reject });
      this.next();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const t = this.thread;
    this.thread = undefined;
    if (this.current) clearTimeout(this.current.timer);
    for (const j of [...(this.current ? [this.current.job] : []), ...this.queue.splice(0)])
      j.reject(new Error('the page thread is closed'));
    this.current = undefined;
    if (t) await t.terminate();
  }

  private next(): void {
    if (this.current || this.closed) return;
    const job = this.queue.shift();
    if (!job) return;
    const timer = setTimeout(() => this.timedOut(job), job.timeoutMs);
    this.current = { job, timer };
    this.started().postMessage({ id: job.id, input: job.input } satisfies ToPageThread);
  }

  private started(): Thread {
    if (this.thread) return this.thread;
    const t = new Thread(ENTRY, { execArgv: threadExecArgv(ENTRY) });
    t.on('message', (m: FromPageThread) => this.onMessage(m));
    t.on('error', (err) => this.opts.logger?.error({ err: err.message }, 'page thread failed'));
    t.on('exit', (code) => {
      if (this.thread !== t) return; // ended on purpose
      this.thread = undefined;
      this.finish(new Error(`the page thread exited (code ${code}) while converting the page`));
    });
    t.unref();
    this.thread = t;
    return t;
  }

  private onMessage(m: FromPageThread): void {
    if ('type' in m || m.id !== this.current?.job.id) return;
    if ('content' in m) return this.finish(undefined, m.content);
    this.finish(m.error.unreadable ? new PageContentError(m.error.message) : new Error(m.error.message));
  }

  private timedOut(job: Job): void {
    if (this.current?.job !== job) return;
    const t = this.thread;
    this.thread = undefined;
    void t?.terminate();
    this.opts.logger?.warn(
      { timeoutMs: job.timeoutMs },
      'page thread: a page took too long to convert; thread restarted',
    );
    this.finish(
      new PageContentError(
        `the page took longer than ${job.timeoutMs / 1000} s to convert and was given up; ask for format "raw" to read its source, or try another page`,
      ),
    );
  }

  private finish(err: Error | undefined, content?: PageContent): void {
    const cur = this.current;
    if (!cur) return;
    clearTimeout(cur.timer);
    this.current = undefined;
    if (err) cur.job.reject(err);
    else cur.job.resolve(content!);
    this.next();
  }
}
