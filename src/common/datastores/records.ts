// An account's datastore registrations, read from its registry workflow by
// query: none when the account never registered one (no workflow yet). The
// gateway and the worker read them the same way.
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { DatastoreRecord } from '../../../workflows/datastores';
import type { QueryLimits } from './types';
import { datastoresQuery, datastoresWorkflowId } from '../../../workflows/definitions';

export async function readDatastoreRecords(client: Client, account: string): Promise<DatastoreRecord[]> {
  try {
    return await client.workflow.getHandle(datastoresWorkflowId(account)).query(datastoresQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return [];
    throw err;
  }
}

/** A registration's query limits: its own, else the service's (DATASTORE_QUERY_TIMEOUT_MS, DATASTORE_MAX_ROWS). */
export function queryLimits(record: DatastoreRecord, service: QueryLimits): QueryLimits {
  return { timeoutMs: record.query_timeout_ms ?? service.timeoutMs, maxRows: record.max_rows ?? service.maxRows };
}
