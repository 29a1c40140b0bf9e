// One task: its status (polled while it runs), its events as they stream (lib/use-task-stream.ts)
// folded into a timeline, its declarative workflows drawn as graphs whose steps change live, the
// calls that wait for approval, and the actions (cancel, a message in, rewind).
import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import type { TaskView } from '../../../client/types';
import { api } from '../lib/api';
import { buildTimeline, type Timeline } from '../lib/timeline';
import { duration, when } from '../lib/format';
import { href } from '../lib/router';
import { useLoad } from '../lib/use-load';
import { useTaskStream, type StreamState } from '../lib/use-task-stream';
import { ErrorBox } from '../components/error-box';
import { StatusBadge } from '../components/status-badge';
import { TimelineView } from '../components/timeline-view';
import { DagGraph } from '../components/dag-graph';
import { ApprovalsPanel } from '../components/approvals-panel';
import { TaskActions } from '../components/task-actions';

/** The Web UI's page of a workflow, when the gateway was told where the Web UI is (TEMPORAL_UI_URL). */
function temporalUiLink(taskId: string): string | undefined {
  const base = document.querySelector<HTMLMetaElement>('meta[name="temporal-ui"]')?.content;
  return base ? `${base}${encodeURIComponent(taskId)}` : undefined;
}

export function TaskPage({ id }: { id: string }) {
  // A rewind follows the stream again from its start: the abandoned branch is read back superseded.
  const [generation, setGeneration] = useState(0);
  const [rewound, setRewound] = useState('');
  const onRewound = (note: string) => {
    setRewound(note);
    setGeneration((g) => g + 1);
  };
  return <TaskBody key={`${id}-${generation}`} id={id} rewound={rewound} onRewound={onRewound} />;
}

function Field({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div>
      <span>{label}</span>
      {children}
    </div>
  );
}

function Summary({ v, timeline, turns }: { v: TaskView; timeline: Timeline; turns: number }) {
  return (
    <div class="summary">
      <Field label="Session">
        <a href={href('sessions', v.session)}>{v.session}</a>
      </Field>
      <Field label="Created">{when(v.created_at)}</Field>
      <Field label="Duration">{duration(v.started_at ?? v.created_at, v.completed_at)}</Field>
      <Field label="Cost">
        <span data-cost>{timeline.cost ?? '—'}</span>
      </Field>
      <Field label="Model turns">{turns}</Field>
      <Field label="Current step">{v.current_step ?? '—'}</Field>
      <Field label="Progress">
        <progress max={1} value={timeline.progress ?? v.progress} aria-label="Progress" />
      </Field>
      {v.attempt && (
        <Field label="Retrying">
          attempt {v.attempt}: {v.last_error?.message}
        </Field>
      )}
    </div>
  );
}

const STREAM_LABEL: Record<StreamState, string> = {
  connecting: 'connecting…',
  live: 'live',
  reconnecting: 'reconnecting…',
  ended: 'ended',
  refused: 'not available',
};

function Head({ id, v }: { id: string; v?: TaskView }) {
  const ui = temporalUiLink(id);
  return (
    <div class="page-head">
      <h1>
        Task <code>{id}</code>
      </h1>
      {v && <StatusBadge status={v.status} />}
      {ui && (
        <a href={ui} target="_blank" rel="noopener noreferrer">
          Open in the Temporal Web UI
        </a>
      )}
    </div>
  );
}

function TaskBody({ id, rewound, onRewound }: { id: string; rewound: string; onRewound: (note: string) => void }) {
  const stream = useTaskStream(id);
  const timeline = useMemo(() => buildTimeline(stream.events), [stream.events]);
  const view = useLoad(() => api().tasks.get(id), [id, timeline.ended], { pollMs: timeline.ended ? undefined : 2000 });
  const v = view.data;
  const turns = stream.events.filter((e) => e.type === 'agent_step' && !e.workflow_id && !e.superseded).length;
  return (
    <>
      <Head id={id} v={v} />
      <ErrorBox error={view.error} />
      {rewound && <p role="status">{rewound}</p>}
      {v && <Summary v={v} timeline={timeline} turns={turns} />}
      {v?.error && <p class="error">{`${v.error.type}: ${v.error.message}`}</p>}
      <div class="layout-task">
        <div>
          {v?.workflows?.map((w) => (
            <DagGraph key={w.id} workflow={w} live={timeline.steps} />
          ))}
          <h2>
            Events{' '}
            <span class="stream-state" role="status" data-stream={stream.state}>
              {STREAM_LABEL[stream.state]}
              {stream.reconnects > 0 && ` (${stream.reconnects} reconnection${stream.reconnects > 1 ? 's' : ''})`}
            </span>
          </h2>
          <TimelineView items={timeline.items} session={v?.session ?? ''} />
        </div>
        <aside class="panel">
          {v && <ApprovalsPanel view={v} onDecided={() => void view.reload()} />}
          {v && <TaskActions view={v} turns={turns} onChanged={() => void view.reload()} onRewound={onRewound} />}
        </aside>
      </div>
    </>
  );
}
