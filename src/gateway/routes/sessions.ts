// Session messages (Agentbase's get/clear messages).
import { Router } from 'express';
import type { GatewayDeps } from '../app';
import { requireAccount } from '../auth';
import { ValidationError } from '../../errors';
import { SESSION_ID } from '../schemas';


export function sessionRoutes(deps: GatewayDeps): Router {
  const r = Router();
  const id = (raw: string) => {
    if (!SESSION_ID.test(raw)) throw new ValidationError(`malformed session id: ${raw.slice(0, 80)}`);
    return raw;
  };
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
