// The accounts registry: API key hashes (never keys) mapped to accounts, and
// per-account limits. One long-lived workflow, so accounts live in Temporal
// with everything else; gateways cache its snapshot.
import { condition, continueAsNew, defineQuery, defineUpdate, setHandler, workflowInfo } from '@temporalio/workflow';

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
}

export const ACCOUNTS_WORKFLOW_ID = 'accounts-registry';

export const snapshotQuery = defineQuery<RegistryState>('snapshot');
export const addKeyUpdate = defineUpdate<AccountRecord, [{ keyHash: string; account: string }]>('addKey');
export const removeKeyUpdate = defineUpdate<boolean, [{ keyHash: string }]>('removeKey');
export const setLimitUpdate = defineUpdate<AccountRecord, [{ account: string; maxRunning: number | null }]>('setLimit');

export async function accountsRegistry(initial: RegistryState): Promise<void> {
  const state: RegistryState = { keys: { ...initial.keys }, accounts: { ...initial.accounts } };
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
        if (!/^[A-Za-z0-9_.-]{1,64}$/.test(account)) throw new Error('account ids are 1-64 characters of A-Z a-z 0-9 _ . -');
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
        if (maxRunning !== null && (!Number.isInteger(maxRunning) || maxRunning < 1)) throw new Error('maxRunning must be a positive integer or null');
      },
    },
  );
  await condition(() => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 1000);
  await continueAsNew<typeof accountsRegistry>(state);
}
