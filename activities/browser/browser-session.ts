// One agent session's browser: a context of the worker's Chromium (its own cookies, storage,
// cache) behind a policy proxy of its own. A proxy per session, rather than one for the whole
// browser, lets a refusal be told to the session whose page asked for it: a navigation the policy
// refused becomes that call's error, a refused request of a page's script a note in its result.
import type { Logger } from 'pino';
import type { Browser, BrowserContext, Download, Page } from 'playwright-core';
import type { OutboundPolicy } from '../../src/common/outbound/policy';
import { startTcpPolicyProxy, type ProxyDecision, type TcpPolicyProxy } from '../../src/common/outbound/proxy';
import { freeName, safeFileName, saveInWorkspace, type SavedFile } from './browser-files';
import { PROXY_BYPASS } from './browser-launch';
import { delay } from './browser-page';

/** Largest download copied into the workspace, bytes. */
export const MAX_DOWNLOAD_BYTES = 100 * 1024 * 1024;
/** Refusals kept between two calls (a page may retry a blocked request in a loop). */
const MAX_REFUSALS = 20;

export interface SessionDeps {
  policy: OutboundPolicy;
  logger?: Logger;
  navigationTimeoutMs: number;
}

/** A download of the session's page: where it went, or why it did not. */
export type DownloadOutcome = { saved: SavedFile } | { name: string; error: string };

export class BrowserSession {
  /** The tab the tools act on: the last one opened (a link with target=_blank moves there). */
  page?: Page;
  idleTimer?: NodeJS.Timeout;
  /** Calls running (a session is never closed under one to make room). */
  busy = 0;
  /** The workspace of the latest call: where the downloads it sets off are put. */
  workspaceFiles = '';
  /** Requests the session's proxy refused since the last result reported them. */
  readonly refusals: ProxyDecision[] = [];
  private downloads: Promise<DownloadOutcome>[] = [];

  private constructor(
    readonly id: string,
    readonly context: BrowserContext,
    private readonly proxy: TcpPolicyProxy,
    /** Which launch of the browser the context belongs to (a restart makes it stale). */
    readonly generation: number,
    private readonly deps: SessionDeps,
  ) {}

  static async open(browser: Browser, generation: number, id: string, deps: SessionDeps): Promise<BrowserSession> {
    // The proxy exists before the session it reports to.
    const sink: { session?: BrowserSession } = {};
    const proxy = await startTcpPolicyProxy(deps.policy, {
      connectTimeoutMs: deps.navigationTimeoutMs,
      onDecision: (d) => sink.session?.onDecision(d),
    });
    let context: BrowserContext;
    try {
      context = await browser.newContext({
        proxy: { server: proxy.url, bypass: PROXY_BYPASS },
        acceptDownloads: true,
        viewport: { width: 1280, height: 800 },
        serviceWorkers: 'allow',
      });
    } catch (err) {
      await proxy.close();
      throw err;
    }
    context.setDefaultTimeout(deps.navigationTimeoutMs);
    context.setDefaultNavigationTimeout(deps.navigationTimeoutMs);
    const session = new BrowserSession(id, context, proxy, generation, deps);
    sink.session = session;
    context.on('page', (p) => session.adopt(p));
    return session;
  }

  private onDecision(d: ProxyDecision): void {
    if (d.result === 'allowed') return;
    this.refusals.push(d);
    if (this.refusals.length > MAX_REFUSALS) this.refusals.shift();
    this.deps.logger?.info(
      { session: this.id, target: d.target, result: d.result, reason: d.reason },
      'browser request not let through',
    );
  }

  private adopt(page: Page): void {
    this.page = page;
    page.on('download', (d) => this.downloads.push(this.saveDownload(d)));
    // Back to another open tab when the current one closes (a popup that closes itself).
    page.on('close', () => {
      if (this.page === page)
        this.page = this.context
          .pages()
          .filter((p) => !p.isClosed())
          .pop();
    });
  }

  /** The current tab, opened if there is none. */
  async currentPage(): Promise<Page> {
    if (this.page && !this.page.isClosed()) return this.page;
    this.page = await this.context.newPage();
    return this.page;
  }

  /** The refusals since they were last taken (and forgets them). */
  takeRefusals(): ProxyDecision[] {
    return this.refusals.splice(0);
  }

  /** How many downloads were set off since they were last taken. */
  downloadsPending(): number {
    return this.downloads.length;
  }

  /** The downloads set off since they were last taken, each waited for (at most `timeoutMs` in all). */
  async takeDownloads(timeoutMs: number): Promise<DownloadOutcome[]> {
    const pending = this.downloads.splice(0);
    if (!pending.length) return [];
    const late = { name: 'a download', error: `it did not finish within ${timeoutMs / 1000} s` };
    return Promise.all(pending.map((p) => Promise.race([p, delay(timeoutMs).then(() => late)])));
  }

  private async saveDownload(d: Download): Promise<DownloadOutcome> {
    const name = safeFileName(d.suggestedFilename()) || 'download';
    const workspace = this.workspaceFiles;
    try {
      const failure = await d.failure();
      if (failure) return { name, error: failure };
      const free = await freeName(workspace, 'downloads', name);
      const saved = await saveInWorkspace(workspace, 'downloads', free, await d.createReadStream(), MAX_DOWNLOAD_BYTES);
      return { saved };
    } catch (err) {
      return { name, error: (err as Error).message };
    } finally {
      // Chromium kept its own copy in Playwright's temporary folder: the workspace has the one that counts.
      await d.delete().catch(() => undefined);
    }
  }

  /** Closes the current tab (a cancelled call leaves it in no known state); the context stays. */
  async dropPage(): Promise<void> {
    const page = this.page;
    this.page = undefined;
    await page?.close({ runBeforeUnload: false }).catch(() => undefined);
  }

  /** Closes the context (its pages, cookies, storage) and the session's proxy. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    await this.context.close().catch(() => undefined);
    await this.proxy.close();
  }
}
