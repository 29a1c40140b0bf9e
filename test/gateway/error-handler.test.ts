// The one mapping of errors to HTTP: the body, and the headers that tell a
// client whether and when to send the same request again (x-should-retry,
// which generated clients such as Agentbase's SDKs obey, and Retry-After).
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino from 'pino';
import {
  ConflictError,
  DependencyUnavailableError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceError,
  UnauthorizedError,
  ValidationError,
} from '../../src/common/errors';
import { errorHandler } from '../../src/gateway/middleware/error-handler';
import { createExpressServer } from '../../src/common/http/express-server';

const cases: [string, () => unknown, number, string | null, string | null][] = [
  ['a 400', () => ValidationError.at('body.mode', 'not a mode', 'invalid_value'), 400, 'false', null],
  ['a 401', () => new UnauthorizedError('unknown API key'), 401, 'false', null],
  ['a 404', () => new NotFoundError('task not found'), 404, 'false', null],
  ['a 405', () => new MethodNotAllowedError('no', ['GET']), 405, 'false', null],
  [
    'a 409 only another request can fix (a finished task)',
    () => new ConflictError('the task is already completed'),
    409,
    'false',
    null,
  ],
  [
    'a 409 that passes by itself (a result not ready)',
    () => new ConflictError('not ready', { status: 'running' }, true),
    409,
    'true',
    null,
  ],
  ['a 413', () => new PayloadTooLargeError('too big'), 413, 'false', null],
  ['a 503', () => new DependencyUnavailableError('redis', 'down', 7), 503, 'true', '7'],
  ['an unexpected error of a read (the client decides: it is a 500)', () => new Error('boom'), 500, null, null],
];

let url: string;
let close: () => Promise<void>;

beforeAll(async () => {
  const app = express();
  cases.forEach(([, make], i) => app.get(`/${i}`, () => Promise.reject(make())));
  const boom = () => Promise.reject(new Error('boom'));
  app.post('/', boom);
  app.post('/tasks/task_1/messages', boom);
  app.use(errorHandler(pino({ level: 'silent' })));
  const server = createExpressServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => new Promise<void>((resolve) => server.close(() => resolve()));
});
afterAll(() => close());

test.each(cases.map((c, i) => [c[0], i, c] as const))(
  '%s: status, x-should-retry and Retry-After',
  async (_name, i, [, make, status, shouldRetry, retryAfter]) => {
    const r = await fetch(`${url}/${i}`);
    expect([r.status, r.headers.get('x-should-retry'), r.headers.get('retry-after')]).toEqual([
      status,
      shouldRetry,
      retryAfter,
    ]);
    const body = (await r.json()) as { error: { type: string } };
    const err = make();
    expect(body.error.type).toBe(err instanceof ServiceError ? err.type : 'internal');
  },
);

// A 500'd request that changes something may have taken effect: sent again, it could do it twice.
test.each([
  ['POST / without an Idempotency-Key: not again', '/', {}, 'false'],
  [
    'POST / with an Idempotency-Key: the client decides (the key finds a run that started)',
    '/',
    { 'Idempotency-Key': 'k1' },
    null,
  ],
  ['another POST: not again, with or without a key', '/tasks/task_1/messages', { 'Idempotency-Key': 'k1' }, 'false'],
])('an unexpected error of %s', async (_name, path, headers, shouldRetry) => {
  const r = await fetch(`${url}${path}`, { method: 'POST', headers });
  expect([r.status, r.headers.get('x-should-retry')]).toEqual([500, shouldRetry]);
});
