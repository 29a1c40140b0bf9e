// Which of a run's complete events the relay no longer has. The run's record
// (its complete-block events, kept in its workflow's state, so in Temporal) is
// compared with what the task's stream holds for the same step tag: events
// are matched by what identifies them (a tool call's id, a step's number and
// status, a progress value...), answers by their text, rebuilt from tokens
// when they were streamed (less what an agent_retract voided). What is left
// over is published again, marked `recovered`. Pure: the activity reads and
// publishes (activities/relay.ts).
import type { AgentEvent, AgentEventBody, EventTag } from './events';

type Body = AgentEventBody & Partial<EventTag>;

/** What identifies an event among a run's events; undefined for text (matched by content) and for the run's end (published after). */
function identity(e: Body): string | undefined {
  switch (e.type) {
    case 'agent_tool_use_start':
    case 'agent_tool_use':
    case 'agent_tool_response':
      return `${e.type}|${e.tool_call_id}`;
    case 'agent_step':
      return `step|${e.step}|${e.status ?? ''}`;
    case 'agent_progress':
      return `progress|${e.progress}`;
    case 'agent_input':
      return `input|${e.content}`;
    case 'agent_handoff':
      return `handoff|${e.from}|${e.to}`;
    case 'agent_files_changed':
      return `files|${e.tool_call_id}`;
    case 'agent_screenshot':
      return `screenshot|${e.tool_call_id}|${e.path}`;
    case 'agent_started':
    case 'agent_scheduled':
      return e.type;
    default:
      return undefined;
  }
}

const tagKey = (e: Partial<EventTag> | undefined) => `${e?.workflow_id ?? ''}/${e?.step_id ?? ''}`;

/** The answers (and reasoning) the stream holds for a tag, each whole: tokens joined, retracted text left out. */
function streamedTexts(events: AgentEvent[]): { responses: string[]; thinking: string[] } {
  const voided = new Set<number>();
  for (const r of events)
    if (r.type === 'agent_retract') for (const e of events) if (e.seq >= r.from_seq && e.seq < r.seq) voided.add(e.seq);
  const responses: string[] = [];
  const thinking: string[] = [];
  const add = (texts: string[], piece: string) =>
    texts.length ? (texts[texts.length - 1] += piece) : texts.push(piece);
  for (const e of events) {
    if (voided.has(e.seq)) continue;
    // Each answer begins with its start event; its text follows, in one block or token by token.
    if (e.type === 'agent_response_start') responses.push('');
    else if (e.type === 'agent_thinking_start') thinking.push('');
    else if (e.type === 'agent_response') add(responses, e.content);
    else if (e.type === 'agent_thinking') add(thinking, e.content);
  }
  return { responses, thinking };
}

/** Takes one `value` out of `pool` if it is there. */
function takeOne(pool: Map<string, number>, value: string): boolean {
  const n = pool.get(value) ?? 0;
  if (n === 0) return false;
  pool.set(value, n - 1);
  return true;
}

function counted(values: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return m;
}

/**
 * The events of `record` (one tag's complete events, in order) that `stream` (the task's whole
 * stream) lacks, in the record's order, each as it is to be published again: an answer or reasoning
 * as its start event and its whole text.
 */
export function missingEvents(
  stream: AgentEvent[],
  record: readonly AgentEventBody[],
  tag?: EventTag,
): AgentEventBody[] {
  // An event's tag is its own (a DAG step's end names its step), else the record's.
  const keyOf = (e: Body, id: string) => `${tagKey(e.workflow_id !== undefined ? e : tag)}|${id}`;
  const ids = counted(stream.flatMap((e) => (identity(e) === undefined ? [] : [keyOf(e, identity(e)!)])));
  const texts = streamedTexts(stream.filter((e) => tagKey(e) === tagKey(tag)));
  const responses = counted(texts.responses);
  const thoughts = counted(texts.thinking);
  const out: AgentEventBody[] = [];
  for (const e of record) {
    if (e.type === 'agent_response') {
      if (e.content && !takeOne(responses, e.content)) out.push({ type: 'agent_response_start' }, e);
    } else if (e.type === 'agent_thinking') {
      if (e.content && !takeOne(thoughts, e.content)) out.push({ type: 'agent_thinking_start' }, e);
    } else {
      const id = identity(e);
      if (id !== undefined && !takeOne(ids, keyOf(e, id))) out.push(e);
    }
  }
  return out;
}
