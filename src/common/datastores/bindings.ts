// What a run request's `datastores` and `queries` give the agent: the tools,
// each bound to one registered datastore of the account. The gateway runs this
// at submit (every problem is a 400 naming its path) and the run again at its
// start against the registrations of that moment (a scheduled run fires long
// after its request). Pure: no I/O.
import type { DatastoreRecord } from '../../../workflows/datastores';
import type { DatastoreToolDef, RequestedDatastore, RequestedQuery } from '../../../workflows/types';
import { checkStatement } from './sql-text';

export interface BindIssue {
  path: string;
  message: string;
  code: string;
}

/** Letters, digits, _ and -: what Chat Completions accepts in a tool name (at most 64 with its prefix). */
const TOOL_PART = /^[A-Za-z0-9_-]{1,48}$/;
const QUERY_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function bindDatastores(
  records: readonly DatastoreRecord[],
  req: { datastores?: readonly RequestedDatastore[]; queries?: readonly RequestedQuery[] },
  /** Names the run's other tools have (built-ins, transfers). */
  reserved: readonly string[] = [],
): { tools: DatastoreToolDef[]; issues: BindIssue[] } {
  const issues: BindIssue[] = [];
  const bound: { name: string; record: DatastoreRecord }[] = [];
  (req.datastores ?? []).forEach((d, i) => {
    const record = records.find((r) => r.id === d.id);
    if (!record)
      issues.push({
        path: `body.datastores[${i}].id`,
        message: `no datastore ${JSON.stringify(d.id)} in this account (GET /datastores lists them)`,
        code: 'unknown_datastore',
      });
    else if (!TOOL_PART.test(d.name))
      issues.push({
        path: `body.datastores[${i}].name`,
        message: 'a datastore name is 1-48 letters, digits, _ or - (its tools are named after it)',
        code: 'invalid_name',
      });
    else if (bound.some((b) => b.name.toLowerCase() === d.name.toLowerCase()))
      issues.push({
        path: `body.datastores[${i}].name`,
        message: `two datastores are named ${JSON.stringify(d.name)}`,
        code: 'duplicate_name',
      });
    else bound.push({ name: d.name, record });
  });
  const tools = bound.flatMap(({ name, record }) => datastoreTools(name, record));
  (req.datastores ?? []).forEach((d, i) => {
    const clash = tools.find((t) => t.datastoreId === d.id && t.datastoreName === d.name && reserved.includes(t.name));
    if (clash)
      issues.push({
        path: `body.datastores[${i}].name`,
        message: `its tool ${clash.name} would take the name of another tool of the run`,
        code: 'duplicate_name',
      });
  });
  (req.queries ?? []).forEach((q, j) => {
    const tool = queryTool(q, j, bound, issues);
    if (!tool) return;
    if (tools.some((t) => t.name === tool.name) || reserved.includes(tool.name))
      issues.push({
        path: `body.queries[${j}].name`,
        message: `the tool name ${JSON.stringify(tool.name)} is taken (another query, or a datastore's own tool)`,
        code: 'duplicate_name',
      });
    else tools.push(tool);
  });
  return { tools, issues };
}

/** The tools a datastore gives by itself: describe and (with allow_sql) query for SQL, search for documents. */
function datastoreTools(name: string, r: DatastoreRecord): DatastoreToolDef[] {
  const base = { datastoreId: r.id, datastoreName: name };
  const about = r.description ? ` (${r.description})` : '';
  if (r.type === 'documents') {
    return [
      {
        ...base,
        op: 'search',
        name: `search_${name}`,
        description: `Full-text search of the ${name} knowledge base${about}: the best matching documents with their ids, titles and a snippet (matches in [brackets]).`,
        parameters: {
          type: 'object',
          properties: {
            query: { type: 'string', description: 'Words to look for.' },
            limit: { type: 'integer', minimum: 1, maximum: 20, description: 'How many results (default 5).' },
          },
          required: ['query'],
          additionalProperties: false,
        },
      },
    ];
  }
  const dialect = r.type === 'postgres' ? 'PostgreSQL' : 'SQLite';
  const out: DatastoreToolDef[] = [
    {
      ...base,
      op: 'describe',
      name: `describe_${name}`,
      description: `The tables of the ${name} ${dialect} database${about}: their columns and types.`,
      parameters: { type: 'object', properties: {}, additionalProperties: false },
    },
  ];
  if (r.allow_sql) {
    out.push({
      ...base,
      op: 'sql',
      name: `query_${name}`,
      description: `Runs one read-only ${dialect} SELECT on the ${name} database${about} and returns its rows as JSON (cut at a row limit, which the result says). Writes are refused.`,
      parameters: {
        type: 'object',
        properties: { sql: { type: 'string', description: `One ${dialect} SELECT statement.` } },
        required: ['sql'],
        additionalProperties: false,
      },
    });
  }
  return out;
}

/** A named query's tool, or undefined with its issues pushed. */
function queryTool(
  q: RequestedQuery,
  j: number,
  bound: { name: string; record: DatastoreRecord }[],
  issues: BindIssue[],
): DatastoreToolDef | undefined {
  const at = `body.queries[${j}]`;
  if (!QUERY_NAME.test(q.name)) {
    issues.push({
      path: `${at}.name`,
      message: 'a query name is 1-64 letters, digits, _ or - (the tool is called by it)',
      code: 'invalid_name',
    });
    return undefined;
  }
  const target = queryTarget(q, bound);
  if ('issue' in target) {
    issues.push({
      path: `${at}${q.datastore === undefined ? '' : '.datastore'}`,
      message: `query ${JSON.stringify(q.name)}: ${target.issue}`,
      code: target.code,
    });
    return undefined;
  }
  const { name, record } = target;
  const checked = checkStatement(q.query, record.type === 'postgres' ? 'postgres' : 'sqlite');
  if (!checked.ok) {
    issues.push({
      path: `${at}.query`,
      message: `query ${JSON.stringify(q.name)}: ${checked.reason}`,
      code: 'invalid_query',
    });
    return undefined;
  }
  const marker = (k: number) => (record.type === 'postgres' ? `$${k}` : `the ${ordinal(k)} ?`);
  const properties = Object.fromEntries(
    Array.from({ length: checked.markers }, (_, i) => [
      `p${i + 1}`,
      { type: ['string', 'number', 'boolean', 'null'], description: `The value of ${marker(i + 1)} in the query.` },
    ]),
  );
  return {
    datastoreId: record.id,
    datastoreName: name,
    op: 'named',
    name: q.name,
    query: q.query,
    markers: checked.markers,
    description: `${q.description} (a query of the ${name} database: ${q.query})`,
    parameters: { type: 'object', properties, required: Object.keys(properties), additionalProperties: false },
  };
}

function queryTarget(
  q: RequestedQuery,
  bound: { name: string; record: DatastoreRecord }[],
): { name: string; record: DatastoreRecord } | { issue: string; code: string } {
  const sql = bound.filter((b) => b.record.type !== 'documents');
  if (q.datastore === undefined) {
    if (sql.length === 1) return sql[0];
    return {
      issue: sql.length
        ? 'name its datastore (datastore: id or name): the request has several SQL datastores'
        : 'the request has no SQL datastore to run it on (datastores)',
      code: 'ambiguous_datastore',
    };
  }
  const wanted = q.datastore.toLowerCase();
  const found = bound.find(
    (b) => b.record.id === q.datastore || b.name.toLowerCase() === wanted || b.record.name.toLowerCase() === wanted,
  );
  if (!found)
    return {
      issue: `no datastore ${JSON.stringify(q.datastore)} in the request's datastores`,
      code: 'unknown_datastore',
    };
  if (found.record.type === 'documents')
    return { issue: `${found.name} is a documents datastore: queries run on SQL datastores`, code: 'not_sql' };
  return found;
}

function ordinal(k: number): string {
  const s = ['th', 'st', 'nd', 'rd'];
  const v = k % 100;
  return k + (s[(v - 20) % 10] || s[v] || s[0]);
}
