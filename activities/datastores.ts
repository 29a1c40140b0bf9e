// Datastores as the agent's tools (SPEC 2.1): binding a run's datastores and
// named queries at its start, and one tool call. A query's own failure (a
// write refused, a timeout, a syntax error) is a result the model reads; a
// source that cannot be reached is retried by Temporal; one that refuses the
// connection outright (credentials, a missing file) is DatastoreUnavailable.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityDeps } from './index';
import type { EventTag } from '../src/common/relay/events';
import type { DatastoreToolDef, RequestedDatastore, RequestedQuery, ToolCall } from '../workflows/types';
import type { DatastoreRecord } from '../workflows/datastores';
import type { DatastoreAccess } from '../src/common/datastores/access';
import { bindDatastores } from '../src/common/datastores/bindings';
import { checkStatement } from '../src/common/datastores/sql-text';
import { DatastoreConnectionError, DatastoreQueryError, type QueryResult } from '../src/common/datastores/types';
import { heartbeating, parseArguments, publishToolResult } from './tools/tool-activities';
import { ToolInputError } from './tools/builtin';

export interface BindDatastoreToolsInput {
  account: string;
  datastores: RequestedDatastore[];
  queries: RequestedQuery[];
  /** Names taken by the run's other tools. */
  reserved: string[];
}

export interface CallDatastoreInput {
  taskId: string;
  session: string;
  account: string;
  producer: string;
  floor: number;
  def: DatastoreToolDef;
  call: ToolCall;
  maxChars: number;
  tag?: EventTag;
}

export interface CallDatastoreOutput {
  content: string;
  isError: boolean;
  lastSeq: number;
  relayLost?: true;
  /** The bare query, ms (absent for describe and search); and the whole call: what the Web UI and the bench compare. */
  queryMs?: number;
  callMs: number;
}

const DEFAULT_HITS = 5;

export function createDatastoreActivities(deps: ActivityDeps) {
  const access = (): DatastoreAccess => {
    if (!deps.datastores) throw new Error('this worker was started without datastore access');
    return deps.datastores;
  };
  return {
    async bindDatastoreTools(input: BindDatastoreToolsInput): Promise<DatastoreToolDef[]> {
      const records = await access().records(input.account, true);
      const { tools, issues } = bindDatastores(records, input, input.reserved);
      if (issues.length) {
        throw ApplicationFailure.create({
          type: 'datastore_unavailable',
          nonRetryable: true,
          message: `the run's datastores no longer bind: ${issues.map((i) => i.message).join('; ')}`,
        });
      }
      return tools;
    },

    async callDatastore(input: CallDatastoreInput): Promise<CallDatastoreOutput> {
      const started = performance.now();
      const ctx = Context.current();
      let outcome: { text: string; isError: boolean; queryMs?: number };
      try {
        outcome = await heartbeating(() => runTool(access(), input, ctx.cancellationSignal));
      } catch (err) {
        // Cancellation reaches the activity with a heartbeat's answer; the database has been told to stop.
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('datastore call cancelled');
        outcome = { text: `Error: ${failureText(err)}`, isError: true };
      }
      const published = await publishToolResult(deps, input, outcome.text, outcome.isError);
      return {
        ...published,
        isError: outcome.isError,
        ...(outcome.queryMs !== undefined && { queryMs: outcome.queryMs }),
        callMs: Math.round((performance.now() - started) * 100) / 100,
      };
    },
  };
}

/** The tool's result text; throws what is not the model's to read (connection failures, bugs). */
async function runTool(
  access: DatastoreAccess,
  input: CallDatastoreInput,
  signal: AbortSignal,
): Promise<{ text: string; isError: boolean; queryMs?: number }> {
  const { def } = input;
  const record = await access.record(input.account, def.datastoreId);
  if (!record) return { text: `Error: the datastore ${def.datastoreName} is no longer registered`, isError: true };
  const args = parseArguments(input.call.arguments);
  if (def.op === 'search') return { text: search(access, record, args), isError: false };
  const source = await access.sql(record);
  if (def.op === 'describe') return { text: JSON.stringify({ tables: await source.describe() }), isError: false };
  const [sql, params] = def.op === 'named' ? [def.query!, namedParams(def, args)] : [ownSql(args, source.dialect), []];
  const result = await source.query(sql, params, access.limits(record), signal);
  return { text: resultText(result), isError: false, queryMs: result.elapsedMs };
}

function search(access: DatastoreAccess, record: DatastoreRecord, args: Record<string, unknown>): string {
  const { query, limit } = args;
  if (typeof query !== 'string' || !query.trim())
    throw new ToolInputError('search needs {"query": "words to look for"}');
  const n = limit === undefined ? DEFAULT_HITS : Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > 20) throw new ToolInputError('limit is a whole number from 1 to 20');
  return JSON.stringify({ results: access.documents(record).search(query, n) });
}

/** The model's own statement (query_<name>): one read, no markers. */
function ownSql(args: Record<string, unknown>, dialect: 'postgres' | 'sqlite'): string {
  if (typeof args.sql !== 'string' || !args.sql.trim())
    throw new ToolInputError('this tool needs {"sql": "SELECT ..."}');
  const checked = checkStatement(args.sql, dialect);
  if (!checked.ok) throw new DatastoreQueryError(checked.reason, 'refused');
  if (checked.markers)
    throw new DatastoreQueryError('this tool binds no parameters: write the values into the statement', 'invalid');
  return args.sql;
}

function namedParams(def: DatastoreToolDef, args: Record<string, unknown>): unknown[] {
  const params: unknown[] = [];
  for (let k = 1; k <= (def.markers ?? 0); k++) {
    const v = args[`p${k}`];
    if (v === undefined) throw new ToolInputError(`missing argument p${k}`);
    if (v !== null && !['string', 'number', 'boolean'].includes(typeof v))
      throw new ToolInputError(`p${k} must be a string, number, boolean or null`);
    params.push(v);
  }
  const extra = Object.keys(args).filter((k) => !/^p\d+$/.test(k) || Number(k.slice(1)) > (def.markers ?? 0));
  if (extra.length) throw new ToolInputError(`unknown argument${extra.length > 1 ? 's' : ''}: ${extra.join(', ')}`);
  return params;
}

function resultText(r: QueryResult): string {
  return JSON.stringify({
    columns: r.columns,
    rows: r.rows,
    row_count: r.rows.length,
    truncated: r.truncated,
    ...(r.truncated && {
      note: `only the first ${r.rows.length} rows are shown: narrow the query (WHERE, LIMIT) or aggregate`,
    }),
  });
}

/** What the model reads of a failure; a connection failure is thrown for Temporal to retry (or not). */
function failureText(err: unknown): string {
  if (err instanceof DatastoreQueryError || err instanceof ToolInputError) return err.message;
  if (err instanceof DatastoreConnectionError) {
    if (err.retryable) throw ApplicationFailure.retryable(err.message, 'DatastoreConnection');
    throw ApplicationFailure.nonRetryable(err.message, 'DatastoreUnavailable');
  }
  throw err;
}
