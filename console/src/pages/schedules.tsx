// The account's schedules (the `schedules` of run requests), a page at a time, each with its
// timing, state and next run, and the buttons that pause, unpause, trigger or delete it.
import { useEffect, useState } from 'preact/hooks';
import type { ScheduleList, ScheduleView } from '../../../client/types';
import { api } from '../lib/api';
import { href } from '../lib/router';
import { when } from '../lib/format';
import { ErrorBox } from '../components/error-box';
import { Pager, useCursors } from '../components/pager';

const PAGE_SIZE = 25;

export function SchedulesPage() {
  const cursors = useCursors();
  const cursor = cursors.cursor;
  const [page, setPage] = useState<ScheduleList>();
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);

  const refresh = () => api().schedules.list({ cursor, limit: PAGE_SIZE }).then(setPage, setError);
  useEffect(() => {
    setError(undefined);
    void refresh();
  }, [cursor]);

  /** One action on a schedule, then the page again (its state and next run have changed). */
  const act = async (action: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setError(undefined);
    setNotice('');
    try {
      await action();
      setNotice(done);
    } catch (err) {
      setError(err);
    }
    await refresh();
    setBusy(false);
  };
  const actions: RowActions = {
    pause: (id) => act(() => api().schedules.pause(id, 'paused from the web console'), `Paused ${id}.`),
    unpause: (id) => act(() => api().schedules.unpause(id), `Unpaused ${id}.`),
    trigger: (id) => act(() => api().schedules.trigger(id), `Triggered ${id}: a task of it has started.`),
    remove: (id) => {
      if (confirm(`Delete schedule ${id}? It starts no more tasks; a running one goes on.`))
        void act(() => api().schedules.delete(id), `Deleted ${id}.`);
    },
  };

  return (
    <>
      <div class="page-head">
        <h1>Schedules</h1>
      </div>
      <p class="hint">
        A run request's <code>schedules</code> makes them; here they are paused, resumed, run now or deleted.
      </p>
      <p role="status">{notice}</p>
      <ErrorBox error={error} />
      {page && page.schedules.length === 0 && <p class="muted">No schedules on this page.</p>}
      {page && page.schedules.length > 0 && <ScheduleTable schedules={page.schedules} actions={actions} busy={busy} />}
      <Pager cursors={cursors} next={page?.next_cursor} label="Pages of schedules" />
    </>
  );
}

interface RowActions {
  pause(id: string): void;
  unpause(id: string): void;
  trigger(id: string): void;
  remove(id: string): void;
}

function ScheduleTable({
  schedules,
  actions,
  busy,
}: {
  schedules: ScheduleView[];
  actions: RowActions;
  busy: boolean;
}) {
  return (
    <table class="list">
      <thead>
        <tr>
          <th scope="col">Schedule</th>
          <th scope="col">When</th>
          <th scope="col">State</th>
          <th scope="col">Next run</th>
          <th scope="col">Note</th>
          <th scope="col">Message</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {schedules.map((s) => (
          <ScheduleRow key={s.schedule_id} s={s} actions={actions} busy={busy} />
        ))}
      </tbody>
    </table>
  );
}

function ScheduleRow({ s, actions, busy }: { s: ScheduleView; actions: RowActions; busy: boolean }) {
  const id = s.schedule_id;
  return (
    <tr data-schedule={id}>
      <td>
        <code>{id}</code>
        <br />
        <a href={`${href('tasks')}?schedule=${encodeURIComponent(id)}`}>Its tasks</a>
        {' · '}
        <a href={href('sessions', s.session)}>Its session</a>
      </td>
      <td>{timing(s)}</td>
      <td>
        <span class={`status status-${s.state}`}>{s.state}</span>
      </td>
      <td>{when(s.next_run_at)}</td>
      <td>{s.note ?? <span class="muted">—</span>}</td>
      <td class="preview" title={s.message_preview}>
        {s.message_preview}
      </td>
      <td>
        <div class="actions">
          {s.paused ? (
            <button type="button" class="secondary" disabled={busy} onClick={() => actions.unpause(id)}>
              Unpause
            </button>
          ) : (
            <button type="button" class="secondary" disabled={busy} onClick={() => actions.pause(id)}>
              Pause
            </button>
          )}
          <button type="button" class="secondary" disabled={busy} onClick={() => actions.trigger(id)}>
            Trigger now
          </button>
          <button type="button" class="danger" disabled={busy} onClick={() => actions.remove(id)}>
            Delete
          </button>
        </div>
      </td>
    </tr>
  );
}

/**
 * The entry's `schedule` as the request gave it: a cron string (the only kind with a time zone),
 * seconds after the request, or an ISO 8601 date-time.
 */
function timing(s: ScheduleView) {
  if (s.timezone !== null) {
    return (
      <>
        <code>{s.schedule}</code> <span class="muted">({s.timezone})</span>
      </>
    );
  }
  if (typeof s.schedule === 'number') return `once, ${s.schedule} s after ${when(s.created_at)}`;
  return `once, at ${when(s.schedule)}`;
}
