// A run request's callback, checked at submit and turned into what the run
// takes. Its shape (background: true, no reserved header) is the request
// schema's (schemas.ts); here, the URL goes through the outbound policy (a 422
// naming it), as it does again at every delivery (DNS may answer differently
// by then).
import type { CallbackConfig } from '../../../workflows/types';
import type { Config } from '../../common/config';
import { UnprocessableRequestError } from '../../common/errors';
import { fieldPath } from '../../common/field-path';
import type { OutboundPolicy } from '../../common/outbound/policy';
import { refusal } from './tool-servers';
import type { RunRequest } from '../../common/contracts/run-request';

export async function callbackOf(
  req: Pick<RunRequest, 'callback' | 'webhook' | 'background'>,
  policy: OutboundPolicy,
  config: Pick<Config, 'CALLBACK_RETRY_DELAYS' | 'CALLBACK_TIMEOUT_MS' | 'RUN_WATCH_MS'>,
): Promise<CallbackConfig | undefined> {
  // `webhook` is an alias (SPEC 6.4's example); errors name the field the request used.
  const field = req.callback ? 'callback' : 'webhook';
  const cb = req.callback ?? req.webhook;
  if (!cb) return undefined;
  const refused = await refusal(policy, cb.url);
  if (refused !== undefined)
    throw UnprocessableRequestError.at(fieldPath('body', field, 'url'), refused, 'outbound_refused');
  return {
    url: cb.url,
    headers: cb.headers ?? {},
    ...(cb.events && { events: cb.events }),
    retryDelaysMs: config.CALLBACK_RETRY_DELAYS,
    timeoutMs: config.CALLBACK_TIMEOUT_MS,
    watchMs: config.RUN_WATCH_MS,
  };
}
