// The gateway's HTTP server: the Express app on createExpressServer, reading
// header sections up to HEADER_LIMIT_BYTES, and answering what Node refuses
// before any route sees it (headers too large, a malformed request) with the
// API's JSON error instead of Node's bare status line.
import http, { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { HeadersTooLargeError, ServiceError, ValidationError } from '../common/errors';
import { createExpressServer } from '../common/http/express-server';
import { errorAnswer } from './middleware/error-handler';

/**
 * The largest header section read, the URL included: Node's default, stated here so that the
 * 431 and the document can say it. The longest request the document allows (a 4,096-character
 * cursor beside a 128-character session id, percent-encoded, and the longest headers) is
 * under 8 KiB; files and long texts travel in bodies.
 */
export const HEADER_LIMIT_BYTES = 16 * 1024;

export function gatewayServer(app: Express): http.Server {
  const server = createExpressServer(app, { maxHeaderSize: HEADER_LIMIT_BYTES });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A client that went away, or a socket already answered, gets nothing more.
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    socket.end(rawAnswer(clientErrorOf(err)));
  });
  return server;
}

function clientErrorOf(err: NodeJS.ErrnoException): ServiceError {
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    return new HeadersTooLargeError(
      `the request's headers, its URL included, exceed ${HEADER_LIMIT_BYTES / 1024} KiB`,
      { limit: HEADER_LIMIT_BYTES },
    );
  }
  return ValidationError.at('header', `not a well-formed HTTP request (${err.code ?? err.message})`, 'malformed_http');
}

/** The error as a whole HTTP/1.1 response, written on the socket itself (no request object exists). */
function rawAnswer(known: ServiceError): string {
  const { status, headers, body } = errorAnswer(known);
  const text = JSON.stringify(body);
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(text)}`,
    'Connection: close',
  ];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return `${lines.join('\r\n')}\r\n\r\n${text}`;
}
