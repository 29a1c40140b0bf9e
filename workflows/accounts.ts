// The accounts registry: API key hashes (never keys) mapped to accounts, and
// per-account limits. One long-lived workflow, so accounts live in Temporal
// with everything else; gateways cache its snapshot.
import { condition, continueAsNew, setHandler } from '@temporalio/workflow';
import { HISTORY_BUDGET, historyPastBudget } from './history-budget';
import {
  addKeyUpdate,
  removeKeyUpdate,
  rotateWebhookSecretUpdate,
  setLimitUpdate,
  snapshotQuery,
  webhookSecretsQuery,
  webhookSecretsUpdate,
} from './definitions';

export interface AccountRecord {
  account: string;
  /** Running background tasks allowed at once; absent = the service default. */
  maxRunning?: number;
  createdAt: string;
}

export interface RegistryState {
  /** sha256(key) hex -> account id */
  keys: Record<string, string>;
  accounts: Record<string, AccountRecord>;
  /** Each account's webhook signing secrets, newest first (secrets: ciphertext in history, like every payload). */
  webhookSecrets?: Record<string, WebhookSecret[]>;
}

export interface WebhookSecret {
  secret: string;
  created_at: string;
  /** Set on the one a rotation replaced: deliveries carry its signature too until then. */
  expires_at?: string;
}

/** How long a replaced webhook secret still signs deliveries. */
export const WEBHOOK_SECRET_OVERLAP_MS = 24 * 3600 * 1000;

// eslint-disable-next-line max-lines-per-function -- the registry's query and update handlers, each short, close over its one state; workflow code is held to saved histories, so it is not reshaped for length
export async function accountsRegistry(initial: RegistryState): Promise<void> {
  const state: RegistryState = {
    keys: { ...initial.keys },
    accounts: { ...initial.accounts },
    ...(initial.webhookSecrets && { webhookSecrets: { ...initial.webhookSecrets } }),
  };
  const ensure = (account: string): AccountRecord => {
    state.accounts[account] ??= { account, createdAt: new Date(Date.now()).toISOString() };
    return state.accounts[account];
  };
  setHandler(snapshotQuery, () => state);
  setHandler(
    addKeyUpdate,
    ({ keyHash, account }) => {
      state.keys[keyHash] = account;
      return ensure(account);
    },
    {
      validator: ({ keyHash, account }) => {
        if (!/^[0-9a-f]{64}$/.test(keyHash)) throw new Error('keyHash must be a sha256 hex digest');
        if (!/^[A-Za-z0-9_.-]{1,64}$/.test(account))
          throw new Error('account ids are 1-64 characters of A-Z a-z 0-9 _ . -');
        const owner = state.keys[keyHash];
        if (owner && owner !== account) throw new Error('this key belongs to another account');
      },
    },
  );
  setHandler(removeKeyUpdate, ({ keyHash }) => {
    const had = keyHash in state.keys;
    delete state.keys[keyHash];
    return had;
  });
  setHandler(
    setLimitUpdate,
    ({ account, maxRunning }) => {
      const rec = ensure(account);
      if (maxRunning === null) delete rec.maxRunning;
      else rec.maxRunning = maxRunning;
      return rec;
    },
    {
      validator: ({ maxRunning }) => {
        if (maxRunning !== null && (!Number.isInteger(maxRunning) || maxRunning < 1))
          throw new Error('maxRunning must be a positive integer or null');
      },
    },
  );
  const inForce = (account: string): WebhookSecret[] => {
    const now = Date.now();
    const all = (state.webhookSecrets ?? {})[account] ?? [];
    const kept = all.filter((s) => !s.expires_at || Date.parse(s.expires_at) > now);
    if (kept.length !== all.length) (state.webhookSecrets ??= {})[account] = kept;
    return kept;
  };
  const validSecret = ({ account, candidate }: { account: string; candidate: string }) => {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(account))
      throw new Error('account ids are 1-64 characters of A-Z a-z 0-9 _ . -');
    if (!/^whsec_[A-Za-z0-9+/]{43}=$/.test(candidate))
      throw new Error('a webhook secret is whsec_ and the base64 of 32 bytes');
  };
  setHandler(webhookSecretsQuery, (account) => {
    const now = Date.now();
    return ((state.webhookSecrets ?? {})[account] ?? []).filter((s) => !s.expires_at || Date.parse(s.expires_at) > now);
  });
  setHandler(
    webhookSecretsUpdate,
    ({ account, candidate }) => {
      const kept = inForce(account);
      if (kept.length) return kept;
      const first = [{ secret: candidate, created_at: new Date(Date.now()).toISOString() }];
      (state.webhookSecrets ??= {})[account] = first;
      return first;
    },
    { validator: validSecret },
  );
  setHandler(
    rotateWebhookSecretUpdate,
    ({ account, candidate }) => {
      const now = Date.now();
      const previous = inForce(account)
        .filter((s) => !s.expires_at)
        .map((s) => ({ ...s, expires_at: new Date(now + WEBHOOK_SECRET_OVERLAP_MS).toISOString() }));
      const next = [{ secret: candidate, created_at: new Date(now).toISOString() }, ...previous];
      (state.webhookSecrets ??= {})[account] = next;
      return next;
    },
    { validator: validSecret },
  );
  await condition(() => historyPastBudget(HISTORY_BUDGET.registryEvents));
  await continueAsNew<typeof accountsRegistry>(state);
}
