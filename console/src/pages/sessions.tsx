// The account's sessions, a page at a time (most recently opened first, as GET /sessions gives
// them), each linking to its thread and workspace; and a form that creates an empty one.
import { useEffect, useState } from 'preact/hooks';
import type { SessionList } from '../../../client/types';
import { api } from '../lib/api';
import { href, navigate } from '../lib/router';
import { when } from '../lib/format';
import { ErrorBox } from '../components/error-box';
import { Pager, useCursors } from '../components/pager';

const PAGE_SIZE = 25;

export function SessionsPage() {
  const cursors = useCursors();
  const cursor = cursors.cursor;
  const [page, setPage] = useState<SessionList>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    let live = true;
    setError(undefined);
    api()
      .sessions.list({ cursor, limit: PAGE_SIZE })
      .then((p) => live && setPage(p))
      .catch((err) => live && setError(err));
    return () => {
      live = false;
    };
  }, [cursor]);

  const next = page?.next_cursor;
  return (
    <>
      <div class="page-head">
        <h1>Sessions</h1>
      </div>
      <CreateSession />
      <ErrorBox error={error} />
      {page && <SessionTable page={page} />}
      <Pager cursors={cursors} next={next} label="Pages of sessions" />
    </>
  );
}

function SessionTable({ page }: { page: SessionList }) {
  if (page.sessions.length === 0) return <p class="muted">No sessions on this page.</p>;
  return (
    <table class="list">
      <thead>
        <tr>
          <th scope="col">Session</th>
          <th scope="col">Created</th>
          <th scope="col">Workflow</th>
        </tr>
      </thead>
      <tbody>
        {page.sessions.map((s) => (
          <tr key={s.session} data-session={s.session}>
            <td>
              <a href={href('sessions', s.session)}>
                <code>{s.session}</code>
              </a>
            </td>
            <td>{when(s.created_at)}</td>
            {/* A closed session reopens on its next run: closed is not gone. */}
            <td class="muted">{s.open ? 'open' : 'closed (idle)'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** An empty session, with an id of one's choosing if given; then its page. */
function CreateSession() {
  const [id, setId] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await api().sessions.create(id.trim() ? { session: id.trim() } : {});
      navigate(href('sessions', created.session));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <form class="filters" onSubmit={submit} aria-label="New session">
        <div>
          <label for="new-session-id">New session id (optional)</label>
          <input
            id="new-session-id"
            name="session"
            value={id}
            placeholder="sess_… made for you"
            pattern="[A-Za-z0-9_.:\-]{1,128}"
            title="Letters, digits and _ . : -, at most 128"
            onInput={(e) => setId((e.target as HTMLInputElement).value)}
          />
        </div>
        <button type="submit" disabled={busy}>
          Create session
        </button>
      </form>
      <ErrorBox error={error} />
    </>
  );
}
