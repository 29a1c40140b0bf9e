// Agentbase's message endpoints, for its SDKs unchanged: POST /get-messages and
// POST /clear-messages, the session in ?session=. The same reads and clears as
// GET and DELETE /sessions/{id}/messages, answered as Agentbase answers.
import { Router, type Request } from 'express';
import type { GatewayDeps } from '../app';
import { requireAccount } from '../middleware/auth';
import { parse } from '../schemas/validate';
import { agentbaseEmptyBodySchema, agentbaseMessages, agentbaseSessionQuerySchema } from '../schemas/agentbase';

function sessionOf(req: Request): string {
  parse(agentbaseEmptyBodySchema, req.body, 'body');
  return parse(agentbaseSessionQuerySchema, req.query, 'query').session;
}

export function agentbaseRoutes(deps: GatewayDeps): Router {
  const r = Router();
  r.post('/get-messages', async (req, res) => {
    const session = sessionOf(req);
    res.json(agentbaseMessages(await deps.tasks.messages(requireAccount(req), session)));
  });
  r.post('/clear-messages', async (req, res) => {
    const session = sessionOf(req);
    await deps.tasks.clearMessages(requireAccount(req), session);
    res.json({ success: true, message: `the messages of session ${session} were cleared` });
  });
  return r;
}
