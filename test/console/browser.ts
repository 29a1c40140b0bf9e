// What the console's browser tests share: Debian's Chromium through playwright-core (never a
// download), a fresh context per test, sign-in, a run from the playground, and the screenshots of
// the main pages (a temp folder; docs/console/ with UPDATE_SCREENSHOTS=1, which the README shows).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { KEY_A } from '../e2e/helpers';
import { buildConsole } from '../../console/build';

const SHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? path.resolve(__dirname, '../../docs/console')
    : fs.mkdtempSync(path.join(os.tmpdir(), 'console-shots-'));

export interface ConsoleBrowser {
  page(): Page;
  url(hash?: string): string;
  signIn(key?: string): Promise<void>;
  runFromPlayground(message: string, json?: Record<string, unknown>): Promise<string>;
  shot(name: string): Promise<unknown>;
}

/** One browser per test file, a context per test; `gatewayUrl` is read when a test runs (a restart keeps it). */
export function useBrowser(gatewayUrl: () => string, context: BrowserContextOptions = {}): ConsoleBrowser {
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    await buildConsole();
    browser = await chromium.launch({
      executablePath: process.env.BROWSER_EXECUTABLE ?? '/usr/bin/chromium',
      args: ['--no-sandbox'],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    const ctx = await browser.newContext({
      viewport: { width: 1280, height: 860 },
      colorScheme: 'light',
      acceptDownloads: true,
      ...context,
    });
    page = await ctx.newPage();
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
  });
  afterEach(async () => {
    await page?.context().close();
  });
  const url = (hash = '') => `${gatewayUrl()}/console${hash}`;
  return {
    page: () => page,
    url,
    shot: (name) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) }),
    async signIn(key = KEY_A) {
      await page.goto(url());
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Tasks' }).waitFor();
    },
    /** Runs a message from the playground; resolves on the task page it opens, with the task's id. */
    async runFromPlayground(message, json = {}) {
      await page.goto(url('#/playground'));
      await page.getByLabel('Message').fill(message);
      for (const [field, value] of Object.entries(json)) {
        await page.locator(`#pg-${field}`).fill(JSON.stringify(value));
      }
      await page.getByRole('button', { name: 'Run' }).click();
      await page.waitForURL(/#\/tasks\/task_/);
      return decodeURIComponent(page.url().split('#/tasks/')[1]);
    },
  };
}
