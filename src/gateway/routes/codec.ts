// The remote codec endpoint (Temporal's codec server protocol): POST
// /codec/decode and /codec/encode take `{"payloads": [Payload as proto3 JSON]}`
// and answer the same shape, run through the service's payload codec, so the
// Temporal Web UI and `temporal --codec-endpoint` show (and send) readable
// payloads while Temporal itself holds only ciphertext.
//
// Operators only: CODEC_AUTH_TOKEN, not an account's API key (whoever holds it
// reads every account's data). Unset, the endpoint is off (404). The token
// comes as `Authorization: Bearer <token>` (the CLI's --codec-auth, scripts)
// or as the path segment before encode/decode, /codec/<token>/decode: the Web
// UI sends no header of its own (it passes only the access token of its own
// login), and the protocol has clients keep any path before the last segment.
// It is not in the OpenAPI document: Temporal's tools define this protocol.
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import type { Config } from '../../common/config';
import { NotFoundError, UnauthorizedError, UnsupportedMediaTypeError, ValidationError } from '../../common/errors';
import { PayloadDecryptionError } from '../../common/codec/aes-gcm-codec';
import { parse } from '../schemas/validate';

/**
 * Request body limit of the endpoint, fixed rather than BODY_LIMIT_BYTES: a UI
 * decode carries one event's payloads, up to Temporal's 2 MiB blob limit and
 * a third more as base64 (a query result can reach the 4 MiB gRPC limit).
 */
const CODEC_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** What browsers may send besides the CORS-safelisted headers (X-Namespace: the UI and CLI name the namespace). */
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Namespace';

// Proto3 JSON bytes: standard or URL-safe base64, padded or not.
const base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'must be base64');
// Other Payload fields (none that this service writes) are ignored.
const payloadJson = z.object({ metadata: z.record(z.string(), base64).nullish(), data: base64.nullish() });
// Proto3 JSON leaves out an empty list: the temporal CLI sends `{}` for no payloads.
const bodySchema = z.object({ payloads: z.array(payloadJson).default([]) });
type PayloadJson = z.infer<typeof payloadJson>;

const bytes = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
const b64 = (b: Uint8Array | null | undefined) => (b ? Buffer.from(b).toString('base64') : '');

function fromJson(p: PayloadJson): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, bytes(v)])),
    data: bytes(p.data ?? ''),
  };
}

function toJson(p: Payload): { metadata: Record<string, string>; data: string } {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])),
    data: b64(p.data),
  };
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export interface CodecEndpointOptions {
  config: Pick<Config, 'CODEC_AUTH_TOKEN' | 'CODEC_CORS_ORIGINS'>;
  codec: PayloadCodec;
}

/** CORS headers for a browser origin of CODEC_CORS_ORIGINS (the Temporal Web UI); a preflight learns what it may send. */
function cors(req: Request, res: Response, allowedOrigins: Set<string>): void {
  const origin = req.header('origin');
  res.vary('Origin');
  if (!origin || !allowedOrigins.has(origin)) return;
  res.setHeader('Access-Control-Allow-Origin', origin);
  if (req.method === 'OPTIONS') {
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    res.setHeader('Access-Control-Max-Age', '600');
  }
}

/** The endpoint, to mount at /codec ahead of the API-key authentication. */
export function codecEndpoint({ config, codec }: CodecEndpointOptions): RequestHandler {
  const token = config.CODEC_AUTH_TOKEN;
  // Digests have one length, so the comparison takes the same time whatever was sent.
  const expected = token ? digest(token) : undefined;
  const allowedOrigins = new Set(config.CODEC_CORS_ORIGINS ?? []);
  const json = express.json({ limit: CODEC_BODY_LIMIT_BYTES, strict: true });

  const authorized = (pathToken: string | undefined, header: string | undefined) => {
    const sent = pathToken ?? /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
    return sent !== undefined && expected !== undefined && timingSafeEqual(digest(sent), expected);
  };

  const handle = async (req: Request, res: Response, op: 'encode' | 'decode') => {
    const body = parse(bodySchema, req.body, 'body');
    let out: Payload[];
    try {
      const payloads = body.payloads.map(fromJson);
      out = op === 'decode' ? await codec.decode(payloads) : await codec.encode(payloads);
    } catch (err) {
      // The protocol answers a payload the codec refuses with 400.
      if (err instanceof PayloadDecryptionError)
        throw ValidationError.at('body.payloads', err.message, 'undecryptable');
      throw err;
    }
    res.json({ payloads: out.map(toJson) });
  };

  return (req: Request, res: Response, next: NextFunction) => {
    // /encode, /decode, or /<token>/encode|decode (the last segment names the operation).
    const m = /^\/(?:([^/]+)\/)?(encode|decode)\/?$/.exec(req.path);
    // The path is not echoed: it may hold a token.
    if (!m) return next(new NotFoundError('no such codec route; use POST /codec/decode or /codec/encode'));
    const [, pathToken, op] = m as unknown as [string, string | undefined, 'encode' | 'decode'];
    // From here on the token is gone from the URL: nothing later (logs, error
    // handling) can print it.
    if (pathToken !== undefined) req.url = `/${op}`;
    cors(req, res, allowedOrigins);
    if (!expected) return next(new NotFoundError('the codec endpoint is off: the gateway has no CODEC_AUTH_TOKEN'));
    // A preflight carries no credentials: it only learns what the browser may send.
    if (req.method === 'OPTIONS') return void res.status(204).end();
    if (req.method !== 'POST') return next(new NotFoundError(`no codec route ${req.method} /codec/${op}; use POST`));
    if (!authorized(pathToken, req.header('authorization'))) {
      return next(
        new UnauthorizedError(
          'the codec endpoint needs the operator token: "Authorization: Bearer <CODEC_AUTH_TOKEN>" or /codec/<CODEC_AUTH_TOKEN>/' +
            op,
        ),
      );
    }
    if (!req.is('application/json'))
      return next(
        new UnsupportedMediaTypeError(
          `Content-Type must be application/json (got ${req.header('content-type') ?? 'none'})`,
        ),
      );
    json(req, res, (err?: unknown) => {
      if (err) return next(err);
      handle(req, res, op).catch(next);
    });
  };
}
