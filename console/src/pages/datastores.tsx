// The account's datastores (the data a run request's `datastores` gives the agent), each linking
// to its page, and the form that registers one: a PostgreSQL URL, an uploaded SQLite file, or a
// documents knowledge base.
import { useEffect, useState } from 'preact/hooks';
import type { Datastore, DatastoreType } from '../../../client/types';
import { api } from '../lib/api';
import { href, navigate } from '../lib/router';
import { when } from '../lib/format';
import { ErrorBox } from '../components/error-box';

export const KIND_LABEL: Record<DatastoreType, string> = {
  postgres: 'PostgreSQL',
  sqlite: 'SQLite',
  documents: 'Documents',
};

export function DatastoresPage() {
  const [list, setList] = useState<Datastore[]>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    api()
      .datastores.list()
      .then((l) => setList(l.datastores), setError);
  }, []);
  return (
    <>
      <div class="page-head">
        <h1>Datastores</h1>
      </div>
      <ErrorBox error={error} />
      {list && list.length === 0 && <p class="muted">No datastores yet: register one below.</p>}
      {list && list.length > 0 && <DatastoreTable list={list} />}
      <RegisterForm />
    </>
  );
}

function DatastoreTable({ list }: { list: Datastore[] }) {
  return (
    <table class="list">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Kind</th>
          <th scope="col">Description</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {list.map((d) => (
          <tr key={d.id} data-datastore={d.id}>
            <td>
              <a href={href('datastores', d.id)}>{d.name}</a>
              <br />
              <code class="muted">{d.id}</code>
            </td>
            <td>
              {KIND_LABEL[d.type]}
              {d.type === 'documents' && <span class="muted"> ({d.documents ?? 0} documents)</span>}
            </td>
            <td class="preview" title={d.description ?? undefined}>
              {d.description ?? <span class="muted">—</span>}
            </td>
            <td>{when(d.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

type Kind = 'postgres' | 'sqlite-upload' | 'documents';

/** Registers a datastore, then opens its page (a knowledge base's next step is adding documents). */
function RegisterForm() {
  const [kind, setKind] = useState<Kind>('postgres');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await register(kind, new FormData(e.currentTarget as HTMLFormElement));
      navigate(href('datastores', created.id));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="stack" onSubmit={submit} aria-labelledby="register-head">
      <h2 id="register-head">Register a datastore</h2>
      <label for="ds-kind">Kind</label>
      <select
        id="ds-kind"
        name="kind"
        value={kind}
        onChange={(e) => setKind((e.target as HTMLSelectElement).value as Kind)}
      >
        <option value="postgres">PostgreSQL (a connection URL)</option>
        <option value="sqlite-upload">SQLite (upload a database file)</option>
        <option value="documents">Documents (a knowledge base the agent searches)</option>
      </select>
      <label for="ds-name">Name</label>
      <input id="ds-name" name="name" required pattern="[A-Za-z0-9_\-]{1,48}" title="1-48 letters, digits, _ or -" />
      <p class="hint">
        Unique in the account; the agent's tools are named after it (query_&lt;name&gt;, search_&lt;name&gt;).
      </p>
      <label for="ds-description">Description (optional)</label>
      <textarea id="ds-description" name="description" maxLength={2000} />
      <p class="hint">What the data is: the agent reads it in its tools' descriptions.</p>
      <KindFields kind={kind} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          Register
        </button>
      </div>
      <ErrorBox error={error} />
    </form>
  );
}

/** The fields of the kind chosen: where the data is, and what only the SQL kinds use. */
function KindFields({ kind }: { kind: Kind }) {
  return (
    <>
      {kind === 'postgres' && (
        <>
          <label for="ds-url">Connection URL</label>
          <input
            id="ds-url"
            name="connection_url"
            required
            autocomplete="off"
            spellcheck={false}
            size={60}
            placeholder="postgres://user:password@host:5432/db"
          />
          <p class="hint">Stored sealed; the service never shows it again.</p>
        </>
      )}
      {kind === 'sqlite-upload' && (
        <>
          <label for="ds-file">SQLite database file</label>
          <input id="ds-file" name="file" type="file" required accept=".db,.sqlite,.sqlite3,application/vnd.sqlite3" />
        </>
      )}
      {kind !== 'documents' && <SqlFields />}
    </>
  );
}

/** What only the SQL kinds use: the agent's own SELECT, and the limits of a query. */
function SqlFields() {
  return (
    <>
      <label class="inline" for="ds-allow-sql">
        <input id="ds-allow-sql" name="allow_sql" type="checkbox" />
        Let the agent run its own read-only SELECT (query_&lt;name&gt;)
      </label>
      <label for="ds-timeout">Query time limit, ms (optional)</label>
      <input id="ds-timeout" name="query_timeout_ms" type="number" min={100} max={300000} step={1} />
      <label for="ds-max-rows">Rows a query gives at most (optional)</label>
      <input id="ds-max-rows" name="max_rows" type="number" min={1} max={10000} step={1} />
    </>
  );
}

/** The register call of the kind, with the form's fields; empty optional fields are left out. */
async function register(kind: Kind, form: FormData): Promise<Datastore> {
  const text = (k: string) => String(form.get(k) ?? '').trim() || undefined;
  const num = (k: string) => (text(k) === undefined ? undefined : Number(text(k)));
  const common = { name: text('name') ?? '', description: text('description') };
  if (kind === 'documents') return api().datastores.register({ type: 'documents', ...common });
  const sql = {
    ...common,
    allow_sql: form.get('allow_sql') === 'on',
    query_timeout_ms: num('query_timeout_ms'),
    max_rows: num('max_rows'),
  };
  if (kind === 'postgres') {
    return api().datastores.register({ type: 'postgres', connection_url: text('connection_url') ?? '', ...sql });
  }
  const file = form.get('file') as File;
  return api().datastores.upload(new Uint8Array(await file.arrayBuffer()), sql);
}
