// The console phase: what the web console costs a person opening it. Its size (the built
// JavaScript and CSS, gzip-compressed as the target counts it: under 300 KB of JavaScript) and,
// per load in a fresh browser context (nothing cached), Debian's Chromium's first contentful paint
// of /console (the sign-in page, target: under 1 s) and the time until a signed-in tasks list is
// shown (the page, its assets, sign-in's check and the first GET /tasks).
import { chromium } from 'playwright-core';
import { buildConsole } from '../console/build';
import { Row, rowOf } from './report';
import type { Bench } from './stack';

export const CONSOLE_PAINT_LABEL = 'web console: first contentful paint of /console, nothing cached';
export const CONSOLE_READY_LABEL = 'web console: /console opened and signed in, until the tasks list shows';
/** The targets: JavaScript under 300 KB compressed, first paint under 1 s. */
const JS_TARGET_BYTES = 300 * 1000;
const PAINT_TARGET_MS = 1000;

/** The page's first contentful paint (ms from navigation start), once Chromium has recorded it; null after 5 s. */
const FIRST_PAINT = `new Promise((resolve) => {
  new PerformanceObserver((list) => {
    const e = list.getEntriesByName('first-contentful-paint')[0];
    if (e) resolve(e.startTime);
  }).observe({ type: 'paint', buffered: true });
  setTimeout(() => resolve(null), 5000);
})`;

const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;

/** The built console's size, logged (and met or not against the target). */
async function logSize(b: Bench): Promise<void> {
  const { assets } = await buildConsole();
  const sum = (ext: string, key: 'bytes' | 'gzipBytes') =>
    assets.filter((a) => a.file.endsWith(ext)).reduce((n, a) => n + a[key], 0);
  const js = sum('.js', 'gzipBytes');
  b.log(
    `console: JavaScript ${kib(js)} gzip (${kib(sum('.js', 'bytes'))} raw), CSS ${kib(sum('.css', 'gzipBytes'))} gzip; ` +
      `target under ${JS_TARGET_BYTES / 1000} KB of JavaScript compressed: ${js < JS_TARGET_BYTES ? 'met' : 'NOT met'}`,
  );
}

export async function consolePhase(b: Bench): Promise<Row[]> {
  await logSize(b);
  const browser = await chromium.launch({
    executablePath: process.env.BROWSER_EXECUTABLE ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  const paint: number[] = [];
  const ready: number[] = [];
  let errors = 0;
  try {
    // Load 0 is an unmeasured warm-up (Chromium's first renderer, the gateway's first read of the page).
    for (let i = 0; i <= b.opts.consoleLoads && b.left() > 0; i++) {
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        const t0 = performance.now();
        await page.goto(`${b.gatewayUrl}/console`, { waitUntil: 'load' });
        const fcp = await page.evaluate(FIRST_PAINT);
        await page.getByLabel('API key').fill(b.apiKey);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.locator('table.list').or(page.getByText('No tasks.')).waitFor();
        const readyMs = performance.now() - t0;
        if (typeof fcp !== 'number') errors++;
        else if (i > 0) {
          paint.push(fcp);
          ready.push(readyMs);
        }
      } finally {
        await context.close();
      }
    }
  } finally {
    await browser.close();
  }
  b.log(`console: ${paint.length} cold loads, ${errors} without a paint entry`);
  return [
    rowOf(CONSOLE_PAINT_LABEL, '1 browser', paint, { errors, targetP99: PAINT_TARGET_MS }),
    rowOf(CONSOLE_READY_LABEL, '1 browser', ready),
  ];
}
