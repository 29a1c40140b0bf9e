// OpenAI-shaped error bodies, so the official client maps each status to its
// typed error (BadRequestError, RateLimitError, InternalServerError, ...).
import type { Response } from 'express';

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

const TYPES: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request.' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Request not allowed.' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist.' },
  409: { type: 'invalid_request_error', code: null, message: 'Conflict.' },
  422: { type: 'invalid_request_error', code: null, message: 'Unprocessable request.' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests.' },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request.' },
  502: { type: 'server_error', code: null, message: 'Bad gateway.' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later.' },
};

export function errorBody(status: number, over: Partial<OpenAIErrorBody['error']> = {}): OpenAIErrorBody {
  const base = TYPES[status] ?? {
    type: status >= 500 ? 'server_error' : 'invalid_request_error',
    code: null,
    message: `Request failed with status ${status}.`,
  };
  return { error: { message: base.message, type: base.type, param: null, code: base.code, ...over } };
}

export function sendError(
  res: Response,
  status: number,
  over: Partial<OpenAIErrorBody['error']> = {},
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  res.status(status).set(headers).json(errorBody(status, over));
}
