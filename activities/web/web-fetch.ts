// The web_fetch tool (workflows/web-tools.ts): one GET through the outbound policy, the body made
// readable (page-content.ts), cut to what the model asked for with the whole of it saved to the
// workspace. What the model reads starts with where the text came from (the final URL), so an
// answer built on it can cite it. Refusals, HTTP errors and timeouts are answers; only a
// connection that failed on the way is thrown, for Temporal to try again.
import { OutboundRefusedError } from '../../src/common/outbound/policy';
import { RedirectError } from '../../src/common/outbound/fetch';
import { WEB_FETCH_DEFAULT_CHARS, WORKSPACE_MOUNT } from '../../workflows/tool-registry';
import type { WorkspaceQuota } from '../computer/editor-files';
import { formatBytes } from '../computer/editor-files';
import { ToolInputError } from '../tools/builtin';
import { type PageContent, PageContentError, type PageFormat, type PageInput, pageContent } from './page-content';
import { type FetchLike, type FetchedBody, readBody } from './read-body';
import { saveToWorkspace, savedName } from './saved-files';
import type { WebAnswer, WebTool } from './web-activities';

export interface WebFetchOptions {
  fetch: FetchLike;
  maxBytes: number;
  timeoutMs: number;
  userAgent: string;
  quota: WorkspaceQuota;
  /** Makes the page readable; default in this thread (the worker hands in its page thread: page-thread/). */
  convert?: (input: PageInput) => Promise<PageContent>;
}

const FORMATS: readonly PageFormat[] = ['markdown', 'text', 'raw'];
// A page that answered an HTTP error: the model gets its start, enough to see why.
const ERROR_PAGE_CHARS = 2000;

interface FetchArgs {
  url: string;
  format: PageFormat;
  maxChars: number;
}

function fetchArgs(args: Record<string, unknown>): FetchArgs {
  const { url, format = 'markdown', max_chars: maxChars = WEB_FETCH_DEFAULT_CHARS } = args;
  if (typeof url !== 'string' || !url.trim()) throw new ToolInputError('url must be a non-empty string');
  if (typeof format !== 'string' || !FORMATS.includes(format as PageFormat))
    throw new ToolInputError(`format must be one of ${FORMATS.join(', ')}`);
  if (typeof maxChars !== 'number' || !Number.isInteger(maxChars) || maxChars < 100)
    throw new ToolInputError('max_chars must be an integer of at least 100');
  return { url: url.trim(), format: format as PageFormat, maxChars };
}

export function webFetchTool(opts: WebFetchOptions): WebTool {
  return async (args, ws, call) => {
    const a = fetchArgs(args);
    const timeout = AbortSignal.timeout(opts.timeoutMs);
    let body: FetchedBody;
    try {
      body = await readBody(opts.fetch, a.url, {
        maxBytes: opts.maxBytes,
        userAgent: opts.userAgent,
        signal: AbortSignal.any([call.signal, timeout]),
      });
    } catch (err) {
      if (call.signal.aborted) throw err; // the task was cancelled: no answer
      return refusalOrThrow(err, a.url, timeout.aborted ? opts.timeoutMs : undefined);
    }
    let content: PageContent;
    try {
      content = await (opts.convert ?? pageContent)({ ...body, format: a.format });
    } catch (err) {
      if (err instanceof PageContentError) return { text: `${header(body)}\n\nError: ${err.message}`, isError: true };
      throw err;
    }
    return answer(body, content, a, (rel, bytes) => saveToWorkspace(ws.files, rel, bytes, opts.quota), opts.maxBytes);
  };
}

/** A refusal of the policy, a redirect not followed or a timeout as the model's error; a connection failure thrown. */
function refusalOrThrow(err: unknown, url: string, timedOutMs: number | undefined): WebAnswer {
  if (err instanceof OutboundRefusedError)
    return { text: `Error: refused, nothing was sent: ${err.message}`, isError: true };
  if (err instanceof RedirectError) return { text: `Error: ${err.message}`, isError: true };
  if (timedOutMs !== undefined)
    return {
      text: `Error: ${url} did not answer within ${timedOutMs / 1000} s; try again later or another page.`,
      isError: true,
    };
  // A connection that failed on the way (OutboundLookupError: DNS for now; a reset, a refusal): retried.
  throw err;
}

function header(body: FetchedBody, title?: string): string {
  const lines = [`URL: ${body.url}`];
  if (title) lines.push(`Title: ${title}`);
  if (body.status >= 400) lines.push(`HTTP ${body.status}${body.statusText ? ` ${body.statusText}` : ''}`);
  return lines.join('\n');
}

type Save = (rel: string, bytes: string | Uint8Array) => Promise<string>;

/** The model's text: the header, the content cut to max_chars, and notes on what was cut or saved. */
async function answer(
  body: FetchedBody,
  content: PageContent,
  a: FetchArgs,
  save: Save,
  maxBytes: number,
): Promise<WebAnswer> {
  const notes: string[] = [];
  if (body.truncated)
    notes.push(
      `The response is larger than ${formatBytes(maxBytes)}: only its first ${formatBytes(maxBytes)} were read.`,
    );
  if (content.kind === 'binary') {
    const saved = await saveOrNote(save, savedName(body.url, content.extension), body.bytes, notes);
    const what = `${content.mediaType}, ${formatBytes(body.bytes.byteLength)}`;
    const text = saved ? `Not text (${what}): saved to ${saved}.` : `Not text (${what}): not saved.`;
    return {
      text: [header(body), text, ...notes].join('\n\n'),
      isError: body.status >= 400,
      ...(saved && { files: [rel(saved)] }),
    };
  }
  const isError = body.status >= 400;
  const limit = isError ? Math.min(a.maxChars, ERROR_PAGE_CHARS) : a.maxChars;
  let text = content.text;
  let files: string[] | undefined;
  if (text.length > limit) {
    const ext = content.kind === 'html' && a.format === 'markdown' ? 'md' : content.kind === 'json' ? 'json' : 'txt';
    const saved = await saveOrNote(save, savedName(body.url, ext), text, notes);
    notes.unshift(
      `Cut at ${limit} of ${text.length} characters.` +
        (saved ? ` The whole text is in ${saved} (read on with the editor's view_range, or grep it).` : ''),
    );
    if (saved) files = [rel(saved)];
    text = text.slice(0, limit);
  }
  const title = 'title' in content ? content.title : undefined;
  return {
    text: [header(body, title), text || '(no text content)', ...notes].join('\n\n'),
    isError,
    ...(files && { files }),
  };
}

async function saveOrNote(
  save: Save,
  name: string,
  bytes: string | Uint8Array,
  notes: string[],
): Promise<string | undefined> {
  try {
    return await save(name, bytes);
  } catch (err) {
    if (!(err instanceof ToolInputError)) throw err;
    notes.push(`It could not be saved to the workspace: ${err.message}`);
    return undefined;
  }
}

/** A path as the agent sees it (/workspace/x) to the workspace-relative one events carry. */
const rel = (shown: string) => shown.slice(WORKSPACE_MOUNT.length + 1);
