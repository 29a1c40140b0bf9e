// The session files API: a session's workspace (the files its agent's tools work in) listed,
// uploaded to, downloaded from, deleted from. An upload is the raw body, of any type, never
// parsed: these routes are mounted before the JSON body parser, and BODY_LIMIT_BYTES (the JSON
// limit) does not bound them; the workspace's quota does (services/session-files.ts).
import path from 'node:path';
import { pipeline } from 'node:stream';
import { Router, type Request } from 'express';
import type { GatewayDeps } from '../app';
import { requireAccount } from '../middleware/auth';
import { ValidationError } from '../../common/errors';
import { parse } from '../schemas/validate';
import { fileListQuerySchema, filePathProblem } from '../schemas/session-files';
import { FILE_PATH_AT } from '../services/session-files';
import { sessionIdParam } from './sessions';
import { attachmentDisposition, fileContentType } from './file-headers';

/**
 * What a refused upload still reads of the body the client goes on sending, and for how long,
 * before the connection is closed. Closed at once, a client still writing its body (Node's
 * http and fetch) failed with EPIPE or ECONNRESET instead of reading the answer: a quarter to
 * half of streamed uploads past the quota, measured on loopback; draining 8 MiB after the answer
 * let every one read its 413. The bytes drained are thrown away.
 */
const DRAIN_BYTES = 8 * 1024 * 1024;
const DRAIN_MS = 5000;

/** The file path of `/sessions/{id}/files/{path}` (Express gives its segments, each decoded once), or the 400 naming it. */
function filePathParam(raw: unknown): string {
  const name = Array.isArray(raw) ? raw.join('/') : String(raw ?? '');
  const problem = filePathProblem(name);
  if (problem) throw ValidationError.at(FILE_PATH_AT, problem.message, problem.code);
  return name;
}

/** Content-Length when the client sent one (chunked uploads have none). */
function declaredLength(req: Request): number | undefined {
  const raw = req.header('content-length');
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : undefined;
}

/** After a refusal: reads and drops what the client still sends, up to DRAIN_BYTES or DRAIN_MS, then closes. */
function drainRest(req: Request): void {
  if (req.complete || req.destroyed) return;
  let drained = 0;
  const close = () => req.socket.destroy();
  const timer = setTimeout(close, DRAIN_MS).unref();
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_BYTES) close();
  });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

export function sessionFileRoutes(deps: GatewayDeps): Router {
  const r = Router();
  r.get('/sessions/:id/files', async (req, res) => {
    const session = sessionIdParam(req.params.id);
    const { prefix } = parse(fileListQuerySchema, req.query, 'query');
    res.json({ files: await deps.files.list(requireAccount(req), session, prefix) });
  });
  r.put('/sessions/:id/files/*path', async (req, res) => {
    try {
      const session = sessionIdParam(req.params.id);
      const name = filePathParam(req.params.path);
      const { file, created } = await deps.files.write(requireAccount(req), session, name, req, declaredLength(req));
      res.status(created ? 201 : 200).json(file);
    } catch (err) {
      drainRest(req);
      throw err;
    }
  });
  r.get('/sessions/:id/files/*path', async (req, res) => {
    const session = sessionIdParam(req.params.id);
    const name = filePathParam(req.params.path);
    const { file, body } = await deps.files.read(requireAccount(req), session, name);
    res.status(200);
    res.setHeader('Content-Type', fileContentType(file.path));
    res.setHeader('Content-Length', String(file.size));
    res.setHeader('Content-Disposition', attachmentDisposition(path.posix.basename(file.path)));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Last-Modified', new Date(file.modified_at).toUTCString());
    // A client gone mid-download closes the file; there is no one left to answer.
    pipeline(body, res, () => undefined);
  });
  r.delete('/sessions/:id/files/*path', async (req, res) => {
    const session = sessionIdParam(req.params.id);
    const name = filePathParam(req.params.path);
    await deps.files.remove(requireAccount(req), session, name);
    res.status(204).end();
  });
  return r;
}
