// A run request's callback, checked at submit (400 naming the path of each
// problem) and turned into what the run takes. The URL goes through the
// outbound policy here and again at every delivery (DNS may answer
// differently by then).
import type { CallbackConfig } from '../../workflows/types';
import type { Config } from '../config';
import { RequestIssue, ValidationError } from '../errors';
import { fieldPath } from '../field-path';
import type { OutboundPolicy } from '../outbound/policy';
import { refusal } from './tool-servers';
import { reservedHeaderNames } from '../callbacks/signature';
import type { RunRequest } from './schemas';

export async function callbackOf(req: Pick<RunRequest, 'callback' | 'webhook' | 'background'>, policy: OutboundPolicy, config: Pick<Config, 'CALLBACK_RETRY_DELAYS' | 'CALLBACK_TIMEOUT_MS' | 'RUN_WATCH_MS'>): Promise<CallbackConfig | undefined> {
  // `webhook` is an alias (SPEC 6.4's example); errors name the field the request used.
  const field = req.callback ? 'callback' : 'webhook';
  const cb = req.callback ?? req.webhook;
  if (!cb) return undefined;
  const issues: RequestIssue[] = [];
  if (!req.background) issues.push({ path: fieldPath('body', field), message: 'a callback needs background: true (a synchronous run answers in its response)', code: 'needs_background' });
  for (const name of reservedHeaderNames(cb.headers ?? {})) {
    issues.push({ path: fieldPath('body', field, 'headers', name), message: `"${name}" is set by the delivery itself (hop-by-hop, body or signature header)`, code: 'reserved_header' });
  }
  // Every delivery checks again (DNS may answer differently by then).
  const refused = await refusal(policy, cb.url);
  if (refused !== undefined) issues.push({ path: fieldPath('body', field, 'url'), message: refused, code: 'outbound_refused' });
  if (issues.length) throw ValidationError.of(issues);
  return { url: cb.url, headers: cb.headers ?? {}, ...(cb.events && { events: cb.events }), retryDelaysMs: config.CALLBACK_RETRY_DELAYS, timeoutMs: config.CALLBACK_TIMEOUT_MS, watchMs: config.RUN_WATCH_MS };
}
