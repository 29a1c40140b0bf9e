// One datastore: what the service shows of it (never its connection details), deleting it, and,
// for a documents knowledge base, its documents: listed a page at a time, added as text, removed.
import { useEffect, useState } from 'preact/hooks';
import type { Datastore, DocumentList } from '../../../client/types';
import { api } from '../lib/api';
import { href, navigate } from '../lib/router';
import { when } from '../lib/format';
import { ErrorBox } from '../components/error-box';
import { Pager, useCursors } from '../components/pager';
import { KIND_LABEL } from './datastores';

const PAGE_SIZE = 50;

export function DatastorePage({ id }: { id: string }) {
  const [ds, setDs] = useState<Datastore>();
  const [error, setError] = useState<unknown>();
  const load = () => api().datastores.get(id).then(setDs, setError);
  useEffect(() => {
    setDs(undefined);
    setError(undefined);
    void load();
  }, [id]);

  const remove = async () => {
    const what = ds?.type === 'documents' ? 'and its documents' : '(the database itself is not touched)';
    if (!confirm(`Delete datastore ${ds?.name ?? id} ${what}?`)) return;
    try {
      await api().datastores.delete(id);
      navigate(href('datastores'));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <div class="page-head">
        <h1>Datastore {ds ? ds.name : <code>{id}</code>}</h1>
        <a href={href('datastores')}>All datastores</a>
        <button type="button" class="danger" onClick={remove}>
          Delete datastore
        </button>
      </div>
      <ErrorBox error={error} />
      {ds && <Details ds={ds} />}
      {/* The count in the details changes with each document added or removed. */}
      {ds?.type === 'documents' && <Documents key={id} id={id} onChange={load} />}
    </>
  );
}

function Details({ ds }: { ds: Datastore }) {
  const sql = ds.type !== 'documents';
  const fields: [string, string][] = [
    ['Id', ds.id],
    ['Kind', KIND_LABEL[ds.type] + (ds.uploaded ? ' (uploaded)' : '')],
    ['Created', when(ds.created_at)],
    ...(sql
      ? ([
          ['Agent’s own SQL', ds.allow_sql ? 'allowed' : 'not allowed'],
          ['Query time limit', `${ds.query_timeout_ms} ms`],
          ['Rows at most', String(ds.max_rows)],
        ] as [string, string][])
      : [['Documents', String(ds.documents ?? 0)] as [string, string]]),
  ];
  return (
    <>
      <div class="summary">
        {fields.map(([k, v]) => (
          <div key={k}>
            <span>{k}</span>
            {v}
          </div>
        ))}
      </div>
      <p>{ds.description ?? <span class="muted">No description.</span>}</p>
    </>
  );
}

function Documents({ id, onChange }: { id: string; onChange: () => void }) {
  const cursors = useCursors();
  const cursor = cursors.cursor;
  const [page, setPage] = useState<DocumentList>();
  const [error, setError] = useState<unknown>();
  const refresh = () => api().datastores.listDocuments(id, { cursor, limit: PAGE_SIZE }).then(setPage, setError);
  useEffect(() => void refresh(), [cursor]);

  const changed = async () => {
    await refresh();
    onChange();
  };
  const remove = async (doc: string) => {
    if (!confirm(`Remove document ${doc}? The agent no longer finds it.`)) return;
    setError(undefined);
    try {
      await api().datastores.removeDocument(id, doc);
    } catch (err) {
      setError(err);
    }
    await changed();
  };
  const next = page?.next_cursor;
  return (
    <section aria-labelledby="docs-head">
      <h2 id="docs-head">Documents</h2>
      <ErrorBox error={error} />
      {page && page.documents.length === 0 && <p class="muted">No documents on this page.</p>}
      {page && page.documents.length > 0 && <DocumentTable page={page} onRemove={remove} />}
      <Pager cursors={cursors} next={next} label="Pages of documents" />
      <AddText id={id} onAdded={changed} />
    </section>
  );
}

function DocumentTable({ page, onRemove }: { page: DocumentList; onRemove: (doc: string) => void }) {
  return (
    <table class="list">
      <thead>
        <tr>
          <th scope="col">Id</th>
          <th scope="col">Title</th>
          <th scope="col">Format</th>
          <th scope="col">Characters</th>
          <th scope="col">Added</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {page.documents.map((d) => (
          <tr key={d.id} data-document={d.id}>
            <td>
              <code>{d.id}</code>
            </td>
            <td>{d.title || <span class="muted">—</span>}</td>
            <td>{d.format}</td>
            <td>{d.chars}</td>
            <td>{when(d.created_at)}</td>
            <td>
              <button type="button" class="danger" aria-label={`Remove ${d.id}`} onClick={() => onRemove(d.id)}>
                Remove
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One document sent as text (addText: the form-data route, so a long text is no JSON string). */
function AddText({ id, onAdded }: { id: string; onAdded: () => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    const text = (k: string) => String(f.get(k) ?? '').trim() || undefined;
    setBusy(true);
    setError(undefined);
    try {
      const options = { title: text('title'), id: text('doc_id'), markdown: f.get('markdown') === 'on' };
      await api().datastores.addText(id, String(f.get('content') ?? ''), options);
      form.reset();
      await onAdded();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="stack" onSubmit={submit} aria-labelledby="add-doc-head">
      <h2 id="add-doc-head">Add a document</h2>
      <label for="doc-title">Title (optional)</label>
      <input id="doc-title" name="title" maxLength={500} />
      <label for="doc-id">Document id (optional)</label>
      <input id="doc-id" name="doc_id" pattern="[A-Za-z0-9_.:\-]{1,128}" title="1-128 letters, digits, _ . : or -" />
      <p class="hint">Empty: one is made. A document of that id is replaced.</p>
      <label for="doc-content">Text</label>
      <textarea id="doc-content" name="content" required rows={8} />
      <label class="inline" for="doc-markdown">
        <input id="doc-markdown" name="markdown" type="checkbox" />
        The text is markdown
      </label>
      <div class="actions">
        <button type="submit" disabled={busy}>
          Add document
        </button>
      </div>
      <ErrorBox error={error} />
    </form>
  );
}
