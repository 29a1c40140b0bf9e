// The account's own settings: its webhook signing secret (GET) and its
// rotation (POST .../rotate; the old secret keeps signing for 24 hours).
import { Router } from 'express';
import type { GatewayDeps } from '../app';
import { requireAccount } from '../middleware/auth';
import { WebhookSecrets } from '../../common/accounts/webhook-secrets';
import type { WebhookSecret } from '../../../workflows/accounts';
import { temporalCall } from '../services/temporal-errors';

export function accountRoutes(deps: GatewayDeps): Router {
  const r = Router();
  const secrets = new WebhookSecrets(deps.client, deps.config.TEMPORAL_TASK_QUEUE);
  const deadline = <T>(fn: () => Promise<T>) =>
    temporalCall(() => deps.connection.withDeadline(Date.now() + 10_000, fn));
  r.get('/account/webhook-secret', async (req, res) => {
    res.json(secretBody(await deadline(() => secrets.inForce(requireAccount(req).account))));
  });
  r.post('/account/webhook-secret/rotate', async (req, res) => {
    res.json(secretBody(await deadline(() => secrets.rotate(requireAccount(req).account))));
  });
  return r;
}

/** The newest secret, and every one deliveries are signed with now (during a rotation, the old one until it expires). */
function secretBody(all: WebhookSecret[]): {
  secret: string;
  secrets: { secret: string; created_at: string; expires_at: string | null }[];
} {
  return {
    secret: all[0].secret,
    secrets: all.map((s) => ({ secret: s.secret, created_at: s.created_at, expires_at: s.expires_at ?? null })),
  };
}
