// The agent's headless browser as this worker runs it (docs/web.md, "The browser"): one Chromium,
// launched on the first browser call, a context per session, every request through the outbound
// policy. Built at start when the deployment offers the browser's tools; the Chromium binary is
// checked then, so a host without it stops the worker with the fix named instead of failing every
// call later.
import fs from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../common/config';
import type { OutboundPolicy } from '../common/outbound/policy';
import { usesBrowser } from '../../workflows/tool-registry';
import { BrowserService } from '../../activities/browser/browser-service';
import { defaultChromium } from '../../activities/browser/browser-launch';

type BrowserConfig = Pick<
  Config,
  | 'BUILTIN_TOOLS'
  | 'BROWSER_EXECUTABLE'
  | 'BROWSER_MAX_CONTEXTS'
  | 'BROWSER_IDLE_CLOSE_S'
  | 'BROWSER_NAVIGATION_TIMEOUT_S'
>;

/** The worker's browser, or undefined when the deployment offers none of its tools. */
export function browserService(
  config: BrowserConfig,
  deps: { policy: OutboundPolicy; logger: Logger },
): BrowserService | undefined {
  if (!usesBrowser(config.BUILTIN_TOOLS)) return undefined;
  const executablePath = config.BROWSER_EXECUTABLE ?? defaultChromium();
  try {
    fs.accessSync(executablePath, fs.constants.X_OK);
  } catch {
    throw new Error(
      `the browser tools need Chromium, and ${executablePath} is not an executable: install it (apt-get install chromium), set BROWSER_EXECUTABLE, or leave the browser out of BUILTIN_TOOLS`,
    );
  }
  deps.logger.info(
    { executablePath, maxContexts: config.BROWSER_MAX_CONTEXTS },
    'browser ready (Chromium starts on the first browser call)',
  );
  return new BrowserService({
    executablePath,
    policy: deps.policy,
    logger: deps.logger,
    maxContexts: config.BROWSER_MAX_CONTEXTS,
    idleCloseMs: config.BROWSER_IDLE_CLOSE_S * 1000,
    navigationTimeoutMs: config.BROWSER_NAVIGATION_TIMEOUT_S * 1000,
  });
}
