// The browser tools, by the names and arguments of the Playwright MCP server (the model's side:
// workflows/browser-tools.ts). Each returns the text the model reads; a ToolError thrown here is
// the model's problem (a bad ref, a refused URL) and becomes an error result in
// BrowserService.call. Every action answers the page's fresh snapshot, as that server does,
// so that the model always holds refs that are valid.
import { errors, type Page, type Response } from 'playwright-core';
import { OutboundLookupError, OutboundRefusedError, type OutboundPolicy } from '../../src/common/outbound/policy';
import type { ProxyDecision } from '../../src/common/outbound/proxy';
import { WorkspacePathError } from '../../src/common/workspaces/paths';
import { safeFileName, saveInWorkspace } from './browser-files';
import { delay, pageReport, refLocator, seconds, ToolError, watchNavigation } from './browser-page';
import type { BrowserSession } from './browser-session';

/** browser_wait_for's longest `time`, seconds (MAX_BROWSER_WAIT_SECONDS of workflows/browser-tools.ts). */
const MAX_WAIT_SECONDS = 60;

export interface BrowserCallResult {
  text: string;
  isError?: boolean;
  /** Workspace-relative paths written (screenshots, downloads). */
  files?: string[];
  /** The screenshots among them, and the page they show. */
  screenshots?: { path: string; url: string }[];
}

/** What one call runs with. */
export interface CallEnv {
  session: BrowserSession;
  policy: OutboundPolicy;
  timeoutMs: number;
  signal: AbortSignal;
  workspaceFiles: string;
  /** Closes the session's context (browser_close). */
  closeSession(): Promise<void>;
}

type Args = Record<string, unknown>;
type Tool = (args: Args, env: CallEnv) => Promise<BrowserCallResult>;

// ---- Arguments: checked here, since the model may send anything ----

function optString(args: Args, name: string): string | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new ToolError(`The argument ${name} must be a string.`);
  return v;
}

function needString(args: Args, name: string): string {
  const v = optString(args, name);
  if (v === undefined || v === '') throw new ToolError(`The argument ${name} is required (a non-empty string).`);
  return v;
}

function optBool(args: Args, name: string): boolean {
  const v = args[name];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new ToolError(`The argument ${name} must be true or false.`);
  return v;
}

/** The element's ref (`ref`, or `target` as newer versions of the Playwright MCP server name it). */
function needRef(args: Args): string {
  const ref = optString(args, 'ref') ?? optString(args, 'target');
  if (!ref)
    throw new ToolError('The argument ref is required: the ref of the element from the latest browser_snapshot.');
  return ref;
}

// ---- What a result says besides the page ----

function refusalLines(refusals: ProxyDecision[]): string {
  if (!refusals.length) return '';
  const lines = refusals.slice(-5).map((d) => `- ${d.target}: ${d.reason ?? d.result}`);
  return `\n\nRequests of the page that were not let through (the outbound policy refuses this service's own network; the page may show an error for them):\n${lines.join('\n')}`;
}

async function downloadLines(env: CallEnv, files: string[]): Promise<string> {
  const outcomes = await env.session.takeDownloads(env.timeoutMs);
  const lines = outcomes.map((o) => {
    if ('error' in o) return `- ${o.name}: the download failed (${o.error})`;
    files.push(o.saved.rel);
    return `- downloaded ${o.saved.shown} (${o.saved.bytes} bytes)`;
  });
  return lines.length ? `\n\nDownloads:\n${lines.join('\n')}` : '';
}

/** The result of an action: `what` happened, then the page as it is now, refusals and downloads. */
async function report(env: CallEnv, what: string): Promise<BrowserCallResult> {
  const page = await env.session.currentPage();
  const files: string[] = [];
  const downloads = await downloadLines(env, files);
  const text = `${what}\n\n${await pageReport(page, env.timeoutMs)}${refusalLines(env.session.takeRefusals())}${downloads}`;
  return files.length ? { text, files } : { text };
}

/** The open page, or a ToolError when the session has none yet. */
function openPage(env: CallEnv): Page {
  const page = env.session.page;
  if (!page || page.isClosed())
    throw new ToolError('No page is open in this browser. Open one with browser_navigate first.');
  return page;
}

// ---- Navigation ----

/** The refusal of `url`'s own host:port among `refusals` (a navigation the policy refused). */
function refusalOf(url: string, refusals: ProxyDecision[]): ProxyDecision | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  const targets = new Set([u.host, `${u.hostname}:${port}`]);
  return refusals.find((d) => d.result === 'refused' && targets.has(d.target));
}

/** The URL to open, checked against the policy first so that a refusal is told plainly. */
async function checkedUrl(input: string, policy: OutboundPolicy): Promise<URL> {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new ToolError(`"${input.slice(0, 200)}" is not an absolute URL. Give one such as https://example.com/page.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolError(
      `Only http and https URLs can be opened; ${url.protocol} URLs are refused (the host's files, data: and javascript: URLs and the browser's own pages are out of reach).`,
    );
  try {
    await policy.checkUrl(url);
  } catch (err) {
    if (err instanceof OutboundRefusedError)
      throw new ToolError(`The navigation was refused by the outbound policy: ${err.message}.`);
    if (err instanceof OutboundLookupError)
      throw new ToolError(`${err.message}. Try again in a moment, or check the host name.`);
    throw err;
  }
  return url;
}

/** The ToolError for a navigation that threw, or for one whose document came from the proxy's refusal. */
function navigationFailure(target: string, env: CallEnv, err?: unknown): ToolError | undefined {
  // A refused CONNECT (https) fails the navigation with no page: the latest refused tunnel is the one.
  const tunnel = err && /ERR_TUNNEL_CONNECTION_FAILED/.test((err as Error).message);
  const refused =
    refusalOf(target, env.session.refusals) ??
    (tunnel
      ? [...env.session.refusals].reverse().find((d) => d.kind === 'connect' && d.result === 'refused')
      : undefined);
  if (refused)
    return new ToolError(
      `The browser did not open ${target}: the outbound policy refused ${refused.target} (${refused.reason}). Pages of this service's own network cannot be reached; the page now shows an error.`,
    );
  if (!err) return undefined;
  if (err instanceof errors.TimeoutError)
    return new ToolError(
      `${target} did not load within ${seconds(env.timeoutMs)}. The site may be slow or down: try again, or another page.`,
    );
  return new ToolError(`The browser could not open ${target}: ${(err as Error).message.split('\n')[0]}.`);
}

/**
 * page.goto, once more when the first was cut short by the error page of the navigation before
 * it (Chromium commits that page a moment after the failed navigation has returned).
 */
async function goto(page: Page, href: string, signal: AbortSignal): Promise<Response | null> {
  try {
    return await page.goto(href, { waitUntil: 'domcontentloaded', signal });
  } catch (err) {
    if (signal.aborted || !/interrupted by another navigation to "chrome-error:/.test((err as Error).message))
      throw err;
    return await page.goto(href, { waitUntil: 'domcontentloaded', signal });
  }
}

async function navigate(args: Args, env: CallEnv): Promise<BrowserCallResult> {
  const url = await checkedUrl(needString(args, 'url'), env.policy);
  const page = await env.session.currentPage();
  env.session.takeRefusals(); // those of the page being left are no longer news
  let response: Response | null;
  try {
    response = await goto(page, url.href, env.signal);
  } catch (err) {
    if (env.signal.aborted) throw err;
    // A file served as an attachment (or a PDF, which headless Chromium does not show) is downloaded.
    if (/Download is starting/.test((err as Error).message)) {
      // The page's download event comes a moment after goto gave up on the page.
      if (!env.session.downloadsPending())
        await page.waitForEvent('download', { timeout: 2000 }).catch(() => undefined);
      return report(env, `${url.href} is a file, not a page: the browser downloaded it.`);
    }
    throw navigationFailure(url.href, env, err) ?? err;
  }
  // A redirect may lead elsewhere: the document the page shows is what counts. The proxy answers
  // a refused plain-http request with a 403 of its own, shown as the page.
  const refused = response?.status() === 403 ? navigationFailure(response.url(), env) : undefined;
  if (refused) throw refused;
  // Images and late scripts, briefly: what the page shows a moment after it was parsed.
  await page.waitForLoadState('load', { timeout: Math.min(3000, env.timeoutMs) }).catch(() => undefined);
  const status = response ? ` (HTTP ${response.status()})` : '';
  return report(env, `Opened ${page.url()}${status}.`);
}

async function navigateBack(_args: Args, env: CallEnv): Promise<BrowserCallResult> {
  const page = openPage(env);
  let response: Response | null;
  try {
    response = await page.goBack({ waitUntil: 'domcontentloaded', signal: env.signal });
  } catch (err) {
    if (env.signal.aborted) throw err;
    throw navigationFailure('the previous page', env, err) ?? err;
  }
  if (!response && page.url() === 'about:blank')
    throw new ToolError("There is no previous page in this tab's history.");
  return report(env, `Went back to ${page.url()}.`);
}

// ---- Acting on elements ----

/** Runs `act` on the page, waits for a navigation it set off, and answers the page. */
async function action(env: CallEnv, what: string, act: (page: Page) => Promise<unknown>): Promise<BrowserCallResult> {
  const page = openPage(env);
  const nav = watchNavigation(page);
  try {
    await act(page);
  } finally {
    await nav.settle(env.timeoutMs);
  }
  return report(env, what);
}

/** The element `ref` names, or a ToolError when the latest snapshot has no such ref. */
async function element(page: Page, args: Args) {
  const ref = needRef(args);
  const loc = refLocator(page, ref);
  if ((await loc.count()) === 0)
    throw new ToolError(
      `No element has the ref ${ref} in the page's latest snapshot (the page may have changed). Take a new browser_snapshot and use a ref from it.`,
    );
  return { ref, loc, name: optString(args, 'element') || ref };
}

const click: Tool = async (args, env) => {
  const button = optString(args, 'button') ?? 'left';
  if (!['left', 'right', 'middle'].includes(button)) throw new ToolError('button must be left, right or middle.');
  const double = optBool(args, 'doubleClick');
  const { loc, name } = await element(openPage(env), args);
  const opts = { button: button as 'left' | 'right' | 'middle', signal: env.signal };
  return action(env, `${double ? 'Double-clicked' : 'Clicked'} ${name}.`, () =>
    double ? loc.dblclick(opts) : loc.click(opts),
  );
};

const type: Tool = async (args, env) => {
  const text = optString(args, 'text');
  if (text === undefined) throw new ToolError('The argument text is required (the text to type).');
  const { loc, name } = await element(openPage(env), args);
  const submit = optBool(args, 'submit');
  return action(env, `Typed into ${name}${submit ? ' and pressed Enter' : ''}.`, async () => {
    if (optBool(args, 'slowly')) {
      await loc.fill('', { signal: env.signal });
      await loc.pressSequentially(text, { signal: env.signal });
    } else await loc.fill(text, { signal: env.signal });
    if (submit) await loc.press('Enter', { signal: env.signal });
  });
};

const pressKey: Tool = async (args, env) => {
  const key = needString(args, 'key');
  return action(env, `Pressed ${key}.`, (page) => page.keyboard.press(key));
};

const selectOption: Tool = async (args, env) => {
  const values = args.values;
  if (!Array.isArray(values) || !values.length || !values.every((v) => typeof v === 'string'))
    throw new ToolError('The argument values is required: a list of the options to choose (values or labels).');
  const { loc, name } = await element(openPage(env), args);
  return action(env, `Chose ${values.map((v) => JSON.stringify(v)).join(', ')} in ${name}.`, () =>
    loc.selectOption(values as string[], { signal: env.signal }),
  );
};

const hover: Tool = async (args, env) => {
  const { loc, name } = await element(openPage(env), args);
  return action(env, `Hovered over ${name}.`, () => loc.hover({ signal: env.signal }));
};

// ---- Waiting, looking, closing ----

const waitFor: Tool = async (args, env) => {
  const time = args.time;
  if (time !== undefined && (typeof time !== 'number' || !(time >= 0)))
    throw new ToolError('time must be a number of seconds (0 or more).');
  const text = optString(args, 'text');
  const gone = optString(args, 'textGone');
  if (time === undefined && !text && !gone)
    throw new ToolError('Give time (seconds), text (to appear) or textGone (to disappear).');
  const page = openPage(env);
  if (typeof time === 'number') await delay(Math.min(time, MAX_WAIT_SECONDS) * 1000);
  const wait = async (t: string, state: 'visible' | 'hidden', verb: string) => {
    try {
      await page.getByText(t).first().waitFor({ state, signal: env.signal });
    } catch (err) {
      if (err instanceof errors.TimeoutError)
        throw new ToolError(`"${t}" did not ${verb} within ${seconds(env.timeoutMs)}.`);
      throw err;
    }
  };
  if (text) await wait(text, 'visible', 'appear');
  if (gone) await wait(gone, 'hidden', 'disappear');
  const waited = [
    typeof time === 'number' && `${Math.min(time, MAX_WAIT_SECONDS)} s`,
    text && `"${text}" to appear`,
    gone && `"${gone}" to disappear`,
  ];
  return report(env, `Waited for ${waited.filter(Boolean).join(', then ')}.`);
};

const snapshot: Tool = async (_args, env) => {
  openPage(env);
  return report(env, 'The page as it is now:');
};

/** The screenshot's file name: the model's, made safe, with an extension of its type. */
function screenshotName(filename: string | undefined, type: 'png' | 'jpeg'): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const name = (filename && safeFileName(filename)) || `page-${stamp}`;
  const ext = type === 'png' ? /\.png$/i : /\.jpe?g$/i;
  return ext.test(name) ? name : `${name}.${type}`;
}

const takeScreenshot: Tool = async (args, env) => {
  const page = openPage(env);
  const filename = optString(args, 'filename');
  const asked = optString(args, 'type');
  const type = asked === 'jpeg' || (!asked && /\.jpe?g$/i.test(filename ?? '')) ? 'jpeg' : 'png';
  const fullPage = optBool(args, 'fullPage');
  const hasRef = optString(args, 'ref') ?? optString(args, 'target');
  if (hasRef && fullPage) throw new ToolError('fullPage and ref do not go together: give one of them.');
  const el = hasRef ? await element(page, args) : undefined;
  const image = el ? await el.loc.screenshot({ type }) : await page.screenshot({ type, fullPage });
  let saved;
  try {
    saved = await saveInWorkspace(env.workspaceFiles, 'screenshots', screenshotName(filename, type), image);
  } catch (err) {
    if (err instanceof WorkspacePathError || (err as NodeJS.ErrnoException).code)
      throw new ToolError(`The screenshot could not be saved in the workspace: ${(err as Error).message}.`);
    throw err;
  }
  const what = el ? el.name : fullPage ? 'the whole page' : 'the visible part of the page';
  return {
    text: `Saved a screenshot of ${what} (${page.url()}) to ${saved.shown} (${saved.bytes} bytes).`,
    files: [saved.rel],
    screenshots: [{ path: saved.rel, url: page.url() }],
  };
};

const close: Tool = async (_args, env) => {
  await env.closeSession();
  return { text: 'Closed the browser: its pages, cookies and storage are gone. browser_navigate opens a fresh one.' };
};

const TOOLS: Readonly<Record<string, Tool>> = {
  browser_navigate: navigate,
  browser_navigate_back: navigateBack,
  browser_snapshot: snapshot,
  browser_click: click,
  browser_type: type,
  browser_press_key: pressKey,
  browser_select_option: selectOption,
  browser_hover: hover,
  browser_wait_for: waitFor,
  browser_take_screenshot: takeScreenshot,
  browser_close: close,
};

export const BROWSER_TOOL_NAMES: readonly string[] = Object.keys(TOOLS);

/** Runs `tool`; a ToolError or an error of Playwright's comes back as an error result. */
export async function runBrowserTool(tool: string, args: Args, env: CallEnv): Promise<BrowserCallResult> {
  const run = Object.hasOwn(TOOLS, tool) ? TOOLS[tool] : undefined;
  if (!run)
    return { text: `There is no browser tool ${tool}; there are ${BROWSER_TOOL_NAMES.join(', ')}.`, isError: true };
  try {
    return await run(args ?? {}, env);
  } catch (err) {
    if (env.signal.aborted) throw err;
    if (err instanceof ToolError) return { text: err.message, isError: true };
    if (err instanceof errors.TimeoutError)
      return { text: `${tool} did not finish within ${seconds(env.timeoutMs)}: ${firstLine(err)}`, isError: true };
    throw err;
  }
}

function firstLine(err: Error): string {
  return err.message.split('\n')[0];
}
