// An account's datastores (registered data sources): one long-lived workflow
// per account, `datastores:<account>`, so registrations live in Temporal, survive
// restarts and are the account's alone. Connection details arrive sealed
// (src/common/codec/sealed-secret.ts): the history holds only their ciphertext. The
// gateway checks a source before it registers it; the worker reads the records
// by query when the agent calls a datastore tool.
import { ApplicationFailure, allHandlersFinished, condition, continueAsNew, setHandler } from '@temporalio/workflow';
import { HISTORY_BUDGET, historyPastBudget } from './history-budget';
import { datastoresQuery, NAME_TAKEN, registerDatastoreUpdate, removeDatastoreUpdate, TOO_MANY } from './definitions';

export type DatastoreKind = 'postgres' | 'sqlite' | 'documents';

export interface DatastoreRecord {
  /** `ds_` and 32 hex. */
  id: string;
  /** Unique in the account (case-insensitive); the tools' names derive from it unless a request renames it. */
  name: string;
  type: DatastoreKind;
  description?: string;
  /** SQL types: the agent may run its own read-only SELECT (`query_<name>`), not only named queries. */
  allow_sql: boolean;
  created_at: string;
  /** postgres: `{connection_url}`; sqlite: `{path}` (a file under the root, or the upload's copy). Sealed. Absent for documents. */
  connection?: string;
  /** sqlite: the file is the service's copy of an upload (removed with the registration). */
  uploaded?: boolean;
  /** Per-datastore limits; absent = the service's (DATASTORE_QUERY_TIMEOUT_MS, DATASTORE_MAX_ROWS). */
  query_timeout_ms?: number;
  max_rows?: number;
}

export interface DatastoresState {
  account: string;
  records: DatastoreRecord[];
}

/** Registrations an account may hold. */
export const MAX_DATASTORES = 100;

export async function accountDatastores(initial: DatastoresState): Promise<void> {
  const state: DatastoresState = { account: initial.account, records: [...initial.records] };
  setHandler(datastoresQuery, () => state.records);
  setHandler(
    registerDatastoreUpdate,
    (record) => {
      state.records = [...state.records.filter((r) => r.id !== record.id), record];
      return record;
    },
    { validator: (record) => checkRegistration(state, record) },
  );
  setHandler(removeDatastoreUpdate, ({ id }) => {
    const found = state.records.find((r) => r.id === id) ?? null;
    state.records = state.records.filter((r) => r.id !== id);
    return found;
  });
  await condition(() => historyPastBudget(HISTORY_BUDGET.registryEvents));
  await condition(allHandlersFinished);
  await continueAsNew<typeof accountDatastores>(state);
}

/** Refusals happen in the validator, so a refused registration leaves nothing in history. */
function checkRegistration(state: DatastoresState, record: DatastoreRecord): void {
  if (!/^ds_[0-9a-f]{32}$/.test(record.id)) throw new Error('datastore ids are ds_ and 32 hex digits');
  if (record.type !== 'documents' && !record.connection?.startsWith('sealed:'))
    throw new Error('connection details must arrive sealed');
  const again = state.records.find((r) => r.id === record.id);
  if (again) return; // the same registration sent twice (a retried request)
  const lower = record.name.toLowerCase();
  if (state.records.some((r) => r.name.toLowerCase() === lower)) {
    throw ApplicationFailure.create({
      type: NAME_TAKEN,
      message: `this account already has a datastore named ${JSON.stringify(record.name)}`,
      nonRetryable: true,
    });
  }
  if (state.records.length >= MAX_DATASTORES) {
    throw ApplicationFailure.create({
      type: TOO_MANY,
      message: `an account holds at most ${MAX_DATASTORES} datastores; delete one first`,
      nonRetryable: true,
    });
  }
}
