// The account's tasks, newest first, live (polled every 3 s): status, session, when, how long,
// cost and model turns of the finished ones (read once from their results), filters by status,
// session and schedule (kept in the URL), and pages through the API's cursors.
import { useState } from 'preact/hooks';
import type { TaskListItem, TaskResult } from '../../../client/types';
import { api } from '../lib/api';
import { href, navigate } from '../lib/router';
import { duration, short, when } from '../lib/format';
import { useLoad } from '../lib/use-load';
import { ErrorBox } from '../components/error-box';
import { StatusBadge } from '../components/status-badge';
import { Pager, useCursors } from '../components/pager';

const STATUSES = ['queued', 'running', 'input_required', 'completed', 'failed', 'cancelled'] as const;
const PAGE = 20;

/** Cost and model turns of finished tasks: a result never changes but by a rewind, which the task page shows. */
const finished = new Map<string, { cost: string | null; steps: number }>();

async function summaryOf(id: string): Promise<{ cost: string | null; steps: number }> {
  const known = finished.get(id);
  if (known) return known;
  const r: TaskResult = await api().tasks.result(id);
  const summary = {
    cost: r.cost,
    steps: r.events.filter((e) => e.type === 'agent_step' && !('workflow_id' in e && e.workflow_id)).length,
  };
  finished.set(id, summary);
  return summary;
}

interface Filters {
  status: string;
  session: string;
  schedule: string;
}

/** One page of tasks, with the cost and turns of its finished ones. */
async function loadPage(f: Filters, cursor: string | undefined) {
  const page = await api().tasks.list({
    status: (f.status || undefined) as (typeof STATUSES)[number] | undefined,
    session: f.session || undefined,
    schedule: f.schedule || undefined,
    cursor,
    limit: PAGE,
  });
  const done = page.tasks.filter((t) => ['completed', 'failed', 'cancelled'].includes(t.status));
  const summaries = new Map(
    await Promise.all(done.map(async (t) => [t.task_id, await summaryOf(t.task_id).catch(() => undefined)] as const)),
  );
  return { ...page, summaries };
}

function FilterBar({ filters, onSet }: { filters: Filters; onSet: (name: keyof Filters, value: string) => void }) {
  return (
    <div class="filters" role="search">
      <div>
        <label for="f-status">Status</label>
        <select
          id="f-status"
          value={filters.status}
          onChange={(e) => onSet('status', (e.target as HTMLSelectElement).value)}
        >
          <option value="">any</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <FilterField id="f-session" label="Session" value={filters.session} onSet={(v) => onSet('session', v)} />
      <FilterField id="f-schedule" label="Schedule" value={filters.schedule} onSet={(v) => onSet('schedule', v)} />
    </div>
  );
}

export function TasksPage({ query }: { query: URLSearchParams }) {
  const filters: Filters = {
    status: query.get('status') ?? '',
    session: query.get('session') ?? '',
    schedule: query.get('schedule') ?? '',
  };
  const cursors = useCursors();
  const cursor = cursors.cursor;
  const list = useLoad(() => loadPage(filters, cursor), [filters.status, filters.session, filters.schedule, cursor], {
    pollMs: 3000,
  });
  const onSet = (name: keyof Filters, value: string) => {
    const next = new URLSearchParams(query);
    if (value) next.set(name, value);
    else next.delete(name);
    cursors.reset();
    navigate(`#/tasks${next.size ? `?${next}` : ''}`);
  };
  const next = list.data?.next_cursor ?? undefined;
  return (
    <>
      <div class="page-head">
        <h1>Tasks</h1>
        <a class="button" href={href('playground')}>
          New run
        </a>
      </div>
      <FilterBar filters={filters} onSet={onSet} />
      <ErrorBox error={list.error} />
      <TaskTable tasks={list.data?.tasks ?? []} summaries={list.data?.summaries ?? new Map()} loading={list.loading} />
      <Pager cursors={cursors} next={next} label="Pages of tasks" />
    </>
  );
}

function FilterField(props: { id: string; label: string; value: string; onSet: (v: string) => void }) {
  const [value, setValue] = useState(props.value);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        props.onSet(value.trim());
      }}
    >
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        value={value}
        onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        onBlur={() => props.onSet(value.trim())}
      />
    </form>
  );
}

function TaskTable(props: {
  tasks: TaskListItem[];
  summaries: Map<string, { cost: string | null; steps: number } | undefined>;
  loading: boolean;
}) {
  if (!props.tasks.length) return <p class="muted">{props.loading ? 'Loading…' : 'No tasks.'}</p>;
  return (
    <div class="table-wrap">
      <table class="list">
        <thead>
          <tr>
            <th>Task</th>
            <th>Status</th>
            <th>Session</th>
            <th>Started</th>
            <th>Duration</th>
            <th>Cost</th>
            <th>Turns</th>
            <th>Message</th>
          </tr>
        </thead>
        <tbody>
          {props.tasks.map((t) => {
            const s = props.summaries.get(t.task_id);
            return (
              <tr key={t.task_id} data-task={t.task_id}>
                <td>
                  <a href={href('tasks', t.task_id)} title={t.task_id}>
                    <code>{short(t.task_id, 22)}</code>
                  </a>
                </td>
                <td>
                  <StatusBadge status={t.status} />
                </td>
                <td>
                  <a href={href('sessions', t.session)} title={t.session}>
                    {short(t.session)}
                  </a>
                </td>
                <td>{when(t.created_at)}</td>
                <td>{duration(t.created_at, t.completed_at)}</td>
                <td>{s?.cost ?? '—'}</td>
                <td>{s ? s.steps : '—'}</td>
                <td class="preview" title={t.preview}>
                  {t.preview}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
