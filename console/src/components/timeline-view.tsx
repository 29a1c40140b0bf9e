// A task's timeline (lib/timeline.ts) as cards: thinking folded away, the answer as markdown,
// each tool call with its input, output and approval, handoffs, retries with their errors,
// messages sent in, rewinds (the abandoned branch greyed), the end.
import type { TimelineItem, ToolItem } from '../lib/timeline';
import { json } from '../lib/format';
import { Markdown } from './markdown';
import { Screenshot } from './screenshot';

function Tag({ item }: { item: TimelineItem }) {
  return (
    <>
      {item.step && <span class="tag">step {item.step}</span>}
      {item.superseded && <span class="tag">superseded by a rewind</span>}
      <span class="tag">#{item.seq}</span>
    </>
  );
}

function ToolCard({ item, session }: { item: ToolItem; session: string }) {
  const waiting = item.approval?.state === 'waiting';
  const cls = ['card', 'tool', item.isError && 'tool-error', waiting && 'waiting', item.superseded && 'superseded'];
  return (
    <section class={cls.filter(Boolean).join(' ')} data-tool-call={item.id} aria-label={`Tool call ${item.tool}`}>
      <h3>
        Tool <code>{item.tool}</code>
        {item.isError && <span class="status status-failed">error</span>}
        {item.approval && (
          <span class={`status ${item.approval.state === 'deny' ? 'status-failed' : 'status-input_required'}`}>
            {item.approval.state === 'waiting'
              ? 'waiting for approval'
              : `${item.approval.state === 'approve' ? 'approved' : 'denied'}${item.approval.by === 'timeout' ? ' (timeout)' : ''}`}
          </span>
        )}
        <Tag item={item} />
      </h3>
      <div class="muted">Input</div>
      <pre class="tool-input">{json(item.input)}</pre>
      {item.approval?.reason && <p class="muted">Reason: {item.approval.reason}</p>}
      {item.output !== undefined ? (
        <>
          <div class="muted">Output</div>
          <pre class="tool-output">{item.output}</pre>
        </>
      ) : (
        !waiting && <p class="muted">running…</p>
      )}
      {item.screenshots.map((p) => (
        <Screenshot key={p} session={session} path={p} />
      ))}
    </section>
  );
}

/** Thinking (folded away), an answer, a message sent in, a final output: a card with a body. */
function BodyCard({ item, session }: { item: TimelineItem; session: string }) {
  const sup = item.superseded ? ' superseded' : '';
  switch (item.kind) {
    case 'thinking':
      return (
        <details class={`card thinking${sup}`}>
          <summary>
            Thinking <Tag item={item} />
          </summary>
          <p class="prewrap">{item.text}</p>
        </details>
      );
    case 'answer':
      return (
        <section class={`card answer${sup}`} aria-label="Answer">
          <h3>
            Answer <Tag item={item} />
          </h3>
          <Markdown text={item.text} />
        </section>
      );
    case 'input':
      return (
        <section class={`card${sup}`} aria-label="Message sent in">
          <h3>
            Message sent in <Tag item={item} />
          </h3>
          <p class="prewrap">{item.text}</p>
        </section>
      );
    case 'final-output':
      return (
        <section class={`card${sup}`} aria-label="Final output">
          <h3>
            Final output <code>{item.name}</code> <Tag item={item} />
          </h3>
          <pre>{json(item.output)}</pre>
        </section>
      );
    case 'tool':
      return <ToolCard item={item} session={session} />;
    default:
      return <Notice item={item} />;
  }
}

/** What a one-line notice says of an item. */
function noticeText(item: TimelineItem) {
  switch (item.kind) {
    case 'handoff':
      return `Handoff from ${item.from} to ${item.to}`;
    case 'retry':
      return `Retrying the ${item.what}${item.tool ? ` (${item.tool})` : ''}: attempt ${item.attempt} failed: ${item.error}${
        item.retryInMs !== undefined ? ` (next in ${(item.retryInMs / 1000).toFixed(1)} s)` : ''
      }`;
    case 'step-end':
      return `Step ${item.name} ${item.status}`;
    case 'rewound':
      return `Rewound to turn ${item.toStep}: the events above from that turn on are superseded (run ${item.runId})`;
    case 'files':
      return `Files: ${[
        item.created.length && `created ${item.created.join(', ')}`,
        item.modified.length && `modified ${item.modified.join(', ')}`,
        item.deleted.length && `deleted ${item.deleted.join(', ')}`,
      ]
        .filter(Boolean)
        .join('; ')}`;
    case 'error':
      return `Ended with an error: ${item.type}: ${item.message}`;
    case 'completed':
      return 'Completed';
    default:
      return '';
  }
}

/** Handoffs, retries, step ends, rewinds, files, the end: one line each. */
function Notice({ item }: { item: TimelineItem }) {
  const cls = [
    'card',
    'notice',
    `notice-${item.kind}`,
    item.kind === 'error' && 'tool-error',
    item.superseded && 'superseded',
  ];
  const ends = (item.kind === 'error' || item.kind === 'completed') && !item.superseded;
  return (
    <p class={cls.filter(Boolean).join(' ')} role={ends ? 'status' : undefined}>
      {noticeText(item)} <Tag item={item} />
    </p>
  );
}

export function TimelineView({ items, session }: { items: TimelineItem[]; session: string }) {
  if (!items.length) return <p class="muted">No events yet.</p>;
  return (
    <div class="timeline">
      {items.map((item) => (
        <BodyCard key={`${item.kind}-${item.seq}`} item={item} session={session} />
      ))}
    </div>
  );
}
