// Sessions: list, create (with an id of the client's choosing), fork, delete; and a
// session's messages (Agentbase's get/clear messages).
import { Router } from 'express';
import type { GatewayDeps } from '../app';
import { requireAccount } from '../middleware/auth';
import { UnprocessableRequestError, ValidationError } from '../../common/errors';
import { parse } from '../schemas/validate';
import { createSessionSchema, forkSessionSchema, sessionListQuerySchema, SESSION_ID } from '../schemas/request';

/** The session id of a path (`/sessions/{id}...`), or the 400 naming it. */
export function sessionIdParam(raw: string): string {
  if (!SESSION_ID.test(raw))
    throw ValidationError.at(
      'path.id',
      `malformed session id ${JSON.stringify(raw.slice(0, 80))}: letters, digits and _ . : -, at most 128`,
      'invalid_format',
    );
  return raw;
}

export function sessionRoutes(deps: GatewayDeps): Router {
  const r = Router();
  const { sessions } = deps;
  const id = sessionIdParam;
  r.get('/sessions', async (req, res) => {
    const q = parse(sessionListQuerySchema, req.query, 'query');
    res.json(await sessions.list(requireAccount(req), q));
  });
  r.post('/sessions', async (req, res) => {
    const body = parse(createSessionSchema, req.body, 'body');
    res.status(201).json(await sessions.create(requireAccount(req), body.session));
  });
  // A new session with this one's thread, or its first `at` messages; this one goes on unchanged.
  r.post('/sessions/:id/fork', async (req, res) => {
    const from = id(req.params.id);
    const body = parse(forkSessionSchema, req.body ?? {}, 'body');
    const account = requireAccount(req);
    const thread = await deps.tasks.messages(account, from);
    const at = body.at ?? thread.length;
    // Well-formed, but beyond this session's thread: a 422, as a cursor of another listing is.
    if (at > thread.length)
      throw UnprocessableRequestError.at(
        'body.at',
        `the session has ${thread.length} messages: at may be at most ${thread.length}`,
        'too_big',
      );
    const created = await sessions.create(account, body.session, thread.slice(0, at));
    res.status(201).json({ ...created, forked_from: from, messages: at });
  });
  r.delete('/sessions/:id', async (req, res) => {
    await sessions.delete(requireAccount(req), id(req.params.id));
    res.status(204).end();
  });
  r.get('/sessions/:id/messages', async (req, res) => {
    const session = id(req.params.id);
    res.json({ session, messages: await deps.tasks.messages(requireAccount(req), session) });
  });
  r.delete('/sessions/:id/messages', async (req, res) => {
    await deps.tasks.clearMessages(requireAccount(req), id(req.params.id));
    res.status(204).end();
  });
  return r;
}
