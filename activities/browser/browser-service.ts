// The worker's headless browser: one Chromium per worker process, launched on the first call,
// and one context per agent session (its cookies and storage its own), each behind a proxy that
// applies the outbound policy (browser-session.ts; how Chromium is kept from going around it:
// browser-launch.ts). Contexts are closed when unused for idleCloseMs, and the least recently
// used when more than maxContexts are open; the browser itself closes when no context is left.
// If Chromium dies, the next call launches it again, and each session that had a context then is
// told once, by an error result, that its pages and cookies were lost.
import type { Logger } from 'pino';
import type { Browser } from 'playwright-core';
import type { OutboundPolicy } from '../../src/common/outbound/policy';
import { runBrowserTool, type BrowserCallResult } from './browser-calls';
import { defaultChromium, launchChromium, startRefusingProxy, type RefusingProxy } from './browser-launch';
import { BrowserSession } from './browser-session';

export type { BrowserCallResult } from './browser-calls';

export interface BrowserOptions {
  /** Default Debian's /usr/lib/chromium/chromium (the binary behind /usr/bin/chromium, see defaultChromium), else /usr/bin/chromium. */
  executablePath?: string;
  /** Every request of the browser goes through it. */
  policy: OutboundPolicy;
  logger?: Logger;
  /** Session contexts open at once; beyond, the least recently used is closed. */
  maxContexts: number;
  /** A session's context closes after this long unused, ms. */
  idleCloseMs: number;
  /** Each navigation's and action's timeout, ms. */
  navigationTimeoutMs: number;
  /**
   * Chromium's sandbox of its renderers (default: on unless the worker runs as root, where
   * Chromium refuses it). Off, a renderer that a page exploits runs as the worker's user.
   */
  chromiumSandbox?: boolean;
}

/** Why a session's context was closed while the session lives on: told with its next result. */
const NOTES = {
  idle: (ms: number) =>
    `Note: this session's browser had been unused for ${Math.round(ms / 1000)} s and was closed; its earlier pages and cookies are gone.`,
  lru: () =>
    "Note: this session's browser was closed to make room for other sessions; its earlier pages and cookies are gone.",
};
const RESTARTED =
  'The browser stopped unexpectedly and has been restarted: the pages, cookies and logins of this session were lost. Open the page again with browser_navigate and carry on from there.';

const MAX_REMEMBERED = 10_000;

export class BrowserService {
  private browser?: Browser;
  private launching?: Promise<Browser>;
  private refusing?: RefusingProxy;
  /** Launches so far: a session whose context is of an older one was lost in a restart. */
  private generation = 0;
  /** Open sessions, least recently used first. */
  private readonly sessions = new Map<string, BrowserSession>();
  /** Sessions closed without asking, and what their next result should say. */
  private readonly lost = new Map<string, string>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private active = 0;
  private closed = false;
  private browserIdle?: NodeJS.Timeout;

  constructor(private readonly opts: BrowserOptions) {}

  get stats(): { contexts: number; browserRunning: boolean } {
    return { contexts: this.sessions.size, browserRunning: !!this.browser?.isConnected() };
  }

  /**
   * Runs a browser tool in `session`'s context. A tool's failure (a bad ref, a timeout, a refused
   * navigation) is a result with isError; a thrown error is the machinery's (Chromium would not
   * start). When `signal` aborts, the session's page is closed and the call rejects at once with
   * the signal's reason (an AbortError DOMException unless the caller gave another).
   */
  async call(
    session: string,
    tool: string,
    args: Record<string, unknown>,
    opts: { signal: AbortSignal; workspaceFiles: string },
  ): Promise<BrowserCallResult> {
    if (this.closed) throw new Error('the browser service is closed');
    opts.signal.throwIfAborted();
    this.active++;
    try {
      return await this.serialised(session, opts.signal, () => this.callNow(session, tool, args, opts));
    } finally {
      this.active--;
    }
  }

  /** Runs `fn` after the session's earlier calls (one page, one action at a time). */
  private async serialised<T>(session: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    const before = this.queues.get(session) ?? Promise.resolve();
    const mine = before
      .catch(() => undefined)
      .then(() => (signal.aborted ? signal.throwIfAborted() : undefined))
      .then(fn);
    const tail = mine.catch(() => undefined);
    this.queues.set(session, tail);
    try {
      return await abortable(mine, signal);
    } finally {
      if (this.queues.get(session) === tail) this.queues.delete(session);
    }
  }

  private async callNow(
    id: string,
    tool: string,
    args: Record<string, unknown>,
    opts: { signal: AbortSignal; workspaceFiles: string },
  ): Promise<BrowserCallResult> {
    const { session, note } = await this.sessionFor(id);
    if (note === RESTARTED) {
      this.touch(session);
      return { text: RESTARTED, isError: true };
    }
    clearTimeout(session.idleTimer);
    session.busy++;
    session.workspaceFiles = opts.workspaceFiles;
    const env = {
      session,
      policy: this.opts.policy,
      timeoutMs: this.opts.navigationTimeoutMs,
      signal: opts.signal,
      workspaceFiles: opts.workspaceFiles,
      closeSession: () => this.closeSession(id),
    };
    try {
      const running = runBrowserTool(tool, args, env);
      const result = await abortable(running, opts.signal, () => session.dropPage());
      return note ? { ...result, text: `${note}\n\n${result.text}` } : result;
    } catch (err) {
      if (opts.signal.aborted) throw opts.signal.reason;
      return this.failed(session, tool, err);
    } finally {
      session.busy--;
      this.touch(session);
    }
  }

  /** An error of a tool that was no ToolError: the browser died under it, or Playwright refused the action. */
  private failed(session: BrowserSession, tool: string, err: unknown): BrowserCallResult {
    if (session.generation !== this.generation || !this.browser?.isConnected()) {
      // Told now, so the next call starts afresh without telling it again.
      if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
      void session.close();
      return { text: RESTARTED.replace('has been restarted', 'will be restarted on the next call'), isError: true };
    }
    this.opts.logger?.warn({ session: session.id, tool, err }, 'browser tool failed');
    return { text: `${tool} failed: ${(err as Error).message.split('\n')[0]}`, isError: true };
  }

  /** The session's open context (made if needed), and what its result must tell first. */
  private async sessionFor(id: string): Promise<{ session: BrowserSession; note?: string }> {
    const open = this.sessions.get(id);
    const browser = await this.ensureBrowser();
    if (open && open.generation === this.generation) {
      // Most recently used last: the map's order is the eviction order.
      this.sessions.delete(id);
      this.sessions.set(id, open);
      return { session: open };
    }
    if (open) {
      // Its context died with the browser it belonged to.
      this.sessions.delete(id);
      await open.close();
      this.lost.set(id, RESTARTED);
    }
    await this.makeRoom();
    const session = await BrowserSession.open(browser, this.generation, id, {
      policy: this.opts.policy,
      logger: this.opts.logger,
      navigationTimeoutMs: this.opts.navigationTimeoutMs,
    });
    this.sessions.set(id, session);
    const note = this.lost.get(id);
    this.lost.delete(id);
    return { session, note };
  }

  /** Closes the least recently used idle sessions until one more fits. */
  private async makeRoom(): Promise<void> {
    for (const [id, s] of this.sessions) {
      if (this.sessions.size < this.opts.maxContexts) return;
      if (s.busy) continue;
      this.sessions.delete(id);
      this.remember(id, NOTES.lru());
      this.opts.logger?.info({ session: id }, 'browser context closed to make room');
      await s.close();
    }
  }

  private remember(id: string, note: string): void {
    this.lost.set(id, note);
    if (this.lost.size > MAX_REMEMBERED) this.lost.delete(this.lost.keys().next().value!);
  }

  /** (Re)arms the session's idle timer. */
  private touch(session: BrowserSession): void {
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => void this.closeIdle(session), this.opts.idleCloseMs);
    session.idleTimer.unref();
  }

  private async closeIdle(session: BrowserSession): Promise<void> {
    if (session.busy || this.sessions.get(session.id) !== session) return;
    this.sessions.delete(session.id);
    this.remember(session.id, NOTES.idle(this.opts.idleCloseMs));
    await session.close();
    this.armBrowserIdle();
  }

  /** Once no session has a context, the browser closes after idleCloseMs unless one opens again. */
  private armBrowserIdle(): void {
    if (this.sessions.size || !this.browser) return;
    clearTimeout(this.browserIdle);
    this.browserIdle = setTimeout(() => void this.closeBrowserIfUnused(), this.opts.idleCloseMs);
    this.browserIdle.unref();
  }

  /** The running browser, launched if there is none (one launch at a time). */
  private async ensureBrowser(): Promise<Browser> {
    if (this.browser?.isConnected()) return this.browser;
    this.launching ??= this.launch().finally(() => (this.launching = undefined));
    return this.launching;
  }

  private async launch(): Promise<Browser> {
    const started = Date.now();
    this.refusing ??= await startRefusingProxy((target) =>
      this.opts.logger?.debug({ target }, 'browser traffic outside a session refused'),
    );
    const browser = await launchChromium({
      executablePath: this.opts.executablePath ?? defaultChromium(),
      proxyUrl: this.refusing.url,
      sandbox: this.opts.chromiumSandbox ?? process.getuid?.() !== 0,
      timeoutMs: Math.max(30_000, this.opts.navigationTimeoutMs),
    });
    this.generation++;
    this.browser = browser;
    browser.on('disconnected', () => {
      if (this.browser !== browser) return;
      this.browser = undefined;
      if (!this.closed) this.opts.logger?.warn({ sessions: this.sessions.size }, 'the browser stopped unexpectedly');
    });
    this.opts.logger?.info({ ms: Date.now() - started, version: browser.version() }, 'browser launched');
    return browser;
  }

  /** Closes the browser when no session has a context and no call is running (memory back). */
  private async closeBrowserIfUnused(): Promise<void> {
    if (this.sessions.size || this.active || this.launching || !this.browser) return;
    const browser = this.browser;
    this.browser = undefined;
    await browser.close().catch(() => undefined);
  }

  /** Closes `session`'s context (its pages, cookies, storage); its next call starts afresh. */
  async closeSession(session: string): Promise<void> {
    const s = this.sessions.get(session);
    this.lost.delete(session);
    if (!s) return;
    this.sessions.delete(session);
    await s.close();
    this.armBrowserIdle();
  }

  /** Closes every context and the browser; calls after this throw. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.browserIdle);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.close()));
    await this.launching?.catch(() => undefined);
    const browser = this.browser;
    this.browser = undefined;
    await browser?.close().catch(() => undefined);
    await this.refusing?.close();
    this.refusing = undefined;
  }
}

/** `p`, or the signal's reason as soon as it aborts (after `onAbort`, which is not awaited). */
function abortable<T>(p: Promise<T>, signal: AbortSignal, onAbort?: () => Promise<void>): Promise<T> {
  if (signal.aborted) {
    void onAbort?.();
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const stop = () => {
      void onAbort?.();
      reject(signal.reason);
    };
    signal.addEventListener('abort', stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}
