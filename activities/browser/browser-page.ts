// What the model reads of a page, and how an action waits for what it set off. The snapshot is
// Playwright's accessibility snapshot in its "ai" mode: a YAML tree of roles, names and text in
// which each element one can act on carries [ref=eN]; page.getByRef resolves such a ref against
// the latest snapshot of its frame, which is why every action answers a fresh one.
import type { Locator, Page, Request } from 'playwright-core';

/** Longest snapshot put into a result, characters: a huge page must not flood the model's context. */
export const MAX_SNAPSHOT_CHARS = 40_000;

/** A tool's error the model reads (a full sentence saying what to do); never a failure of the machinery. */
export class ToolError extends Error {
  override readonly name = 'ToolError';
}

const REF = /^(?:f\d+)?e\d+$/;

/** The element of the latest snapshot that `ref` names, or a ToolError for a ref of another shape. */
export function refLocator(page: Page, ref: string): Locator {
  if (!REF.test(ref))
    throw new ToolError(
      `"${ref.slice(0, 40)}" is not a ref: refs look like e12 (or f1e3 inside a frame). Take a browser_snapshot and use the ref of the element from it.`,
    );
  return page.getByRef(ref);
}

/** The page's snapshot, cut at MAX_SNAPSHOT_CHARS. */
export async function snapshotText(page: Page, timeoutMs: number): Promise<string> {
  const snap = await page.ariaSnapshot({ mode: 'ai', timeout: timeoutMs });
  if (snap.length <= MAX_SNAPSHOT_CHARS) return snap;
  const cut = snap.slice(0, snap.lastIndexOf('\n', MAX_SNAPSHOT_CHARS));
  return `${cut}\n# (the snapshot was cut here: it has ${snap.length} characters, the first ${cut.length} are shown)`;
}

/** The page's address, title and snapshot, as every action answers them. */
export async function pageReport(page: Page, timeoutMs: number): Promise<string> {
  const title = await page.title().catch(() => '');
  const snap = await snapshotText(page, timeoutMs);
  return `Page URL: ${page.url()}\nPage title: ${title || '(none)'}\n\nPage snapshot:\n\`\`\`yaml\n${snap}\n\`\`\``;
}

/**
 * Watches the main frame for a navigation that an action sets off (a click on a link, Enter in a
 * form), so that the action answers the page it led to rather than the one it left. The wait
 * ends when the new document is loaded (DOMContentLoaded), when the navigation failed or turned
 * into a download, or at the timeout.
 */
export function watchNavigation(page: Page): { settle(timeoutMs: number): Promise<void> } {
  let pending: Request | undefined;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const isMain = (r: Request) => r.isNavigationRequest() && r.frame() === page.mainFrame();
  const onRequest = (r: Request) => {
    if (isMain(r)) pending = r;
  };
  const onEnd = (r: Request) => {
    if (r === pending) done();
  };
  const onCommit = (frame: unknown) => {
    if (frame === page.mainFrame()) done();
  };
  page.on('request', onRequest);
  page.on('requestfailed', onEnd);
  page.on('framenavigated', onCommit);
  return {
    async settle(timeoutMs) {
      try {
        // A script may start the navigation a moment after the event that asks for it.
        await delay(100);
        if (!pending) return;
        // A download answers the request without any commit: the request finishing ends the wait too.
        const response = pending.response().then(() => delay(500));
        await Promise.race([finished, response, delay(timeoutMs)]);
        await page.waitForLoadState('domcontentloaded', { timeout: timeoutMs }).catch(() => undefined);
      } finally {
        page.off('request', onRequest);
        page.off('requestfailed', onEnd);
        page.off('framenavigated', onCommit);
      }
    },
  };
}

/** Resolves after `ms`; the timer does not keep the worker alive. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** How long ago `ms` was, in words. */
export function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
