// A task's events (the stream's typed union, src/common/relay/events.ts) folded into what the task
// page shows, in order: thinking, answers, tool calls with their input, output and approval,
// handoffs, retries, messages sent in, rewinds, the end. Pure, so it is tested without a browser;
// the page folds again on every event (a run's events are hundreds, not millions).
import type { AgentEvent } from '../../../client/types';

/** A DAG step's events carry its workflow and step; the task's own carry neither. */
export interface Tagged {
  seq: number;
  step?: string;
  superseded: boolean;
}

export interface ToolItem extends Tagged {
  kind: 'tool';
  id: string;
  tool: string;
  input: unknown;
  output?: string;
  isError?: boolean;
  approval?: { state: 'waiting' | 'approve' | 'deny'; by?: string; reason?: string; timeoutAt?: string };
  screenshots: string[];
}

export type TextItem = Tagged & { kind: 'thinking' | 'answer'; text: string };

export type TimelineItem =
  | TextItem
  | ToolItem
  | (Tagged & { kind: 'handoff'; from: string; to: string })
  | (Tagged & { kind: 'retry'; what: string; tool?: string; attempt: number; error: string; retryInMs?: number })
  | (Tagged & { kind: 'input'; text: string })
  | (Tagged & { kind: 'step-end'; name: string; status: string })
  | (Tagged & { kind: 'rewound'; toStep: number; runId: string })
  | (Tagged & { kind: 'files'; created: string[]; modified: string[]; deleted: string[] })
  | (Tagged & { kind: 'final-output'; name: string; output: unknown })
  | (Tagged & { kind: 'error'; type: string; message: string })
  | (Tagged & { kind: 'completed' });

export interface Timeline {
  items: TimelineItem[];
  cost?: string;
  progress?: number;
  /** Each DAG step's last status seen on the stream (`<workflow>/<step>` → completed|skipped|failed|running). */
  steps: Map<string, string>;
  /** The last event's seq: where a resumed stream goes on. */
  lastSeq: number;
  ended: boolean;
}

const stepOf = (e: AgentEvent) => (e.workflow_id && e.step_id ? `${e.workflow_id}/${e.step_id}` : undefined);
const STREAMED = /^agent_(thinking|response)(_start)?$/;

/** The seqs a later event voids: retracted attempts' tokens, and the ranges a rewind abandoned. */
function voided(events: AgentEvent[]): { retracted: Set<number>; superseded: Set<number> } {
  const retracted = new Set<number>();
  const superseded = new Set<number>();
  for (const e of events) {
    if (e.type === 'agent_retract') {
      const tag = stepOf(e);
      for (const x of events) {
        if (STREAMED.test(x.type) && x.seq >= e.from_seq && x.seq < e.seq && stepOf(x) === tag) retracted.add(x.seq);
      }
    } else if (e.type === 'agent_rewound' && e.superseded_seqs) {
      for (let s = e.superseded_seqs.from_seq; s <= e.superseded_seqs.to_seq; s++) superseded.add(s);
    }
  }
  return { retracted, superseded };
}

function parseToolUse(content: string): { tool: string; input: unknown } {
  try {
    const parsed = JSON.parse(content) as { tool?: string; name?: string; input?: unknown };
    return { tool: parsed.tool ?? parsed.name ?? '?', input: parsed.input };
  } catch {
    return { tool: '?', input: content };
  }
}

/** A tool response's content is `{"tool", "content"}` as JSON text (SPEC 6.2): the page shows the content. */
function toolOutput(content: string): string {
  try {
    const parsed = JSON.parse(content) as { content?: unknown };
    if (parsed && typeof parsed === 'object' && 'content' in parsed) {
      return typeof parsed.content === 'string' ? parsed.content : JSON.stringify(parsed.content, null, 2);
    }
  } catch {
    // Not the JSON of the SPEC's shape: shown as it came.
  }
  return content;
}

/** The fold's state while it goes through the events in order. */
class Fold {
  readonly t: Timeline;
  private readonly tools = new Map<string, ToolItem>();
  /** The streamed block a token extends: the last thinking or answer of the same step tag. */
  private readonly open = new Map<string, TextItem>();

  constructor(lastSeq: number) {
    this.t = { items: [], steps: new Map(), lastSeq, ended: false };
  }

  add(e: AgentEvent, base: Tagged): void {
    if (STREAMED.test(e.type)) return this.text(e, base);
    if (e.type.startsWith('agent_tool_') || e.type.startsWith('agent_approval_') || e.type === 'agent_screenshot') {
      return this.tool(e, base);
    }
    this.other(e, base);
  }

  private push(item: TimelineItem, closes = false): void {
    this.t.items.push(item);
    if (closes) this.open.clear();
  }

  private text(e: AgentEvent, base: Tagged): void {
    const kind = e.type.startsWith('agent_thinking') ? 'thinking' : 'answer';
    const key = `${kind}|${base.step ?? ''}|${base.superseded}`;
    const content = 'content' in e && typeof e.content === 'string' ? e.content : '';
    const current = this.open.get(key);
    // A recovered answer is the turn's whole text: a block of its own, not more tokens.
    if (!e.type.endsWith('_start') && current && !e.recovered) {
      current.text += content;
      return;
    }
    const item: TextItem = { ...base, kind, text: content };
    this.open.set(key, item);
    this.push(item);
  }

  private tool(e: AgentEvent, base: Tagged): void {
    const item = 'tool_call_id' in e ? this.tools.get(e.tool_call_id) : undefined;
    switch (e.type) {
      case 'agent_tool_use': {
        const made: ToolItem = {
          ...base,
          kind: 'tool',
          id: e.tool_call_id,
          ...parseToolUse(e.content),
          screenshots: [],
        };
        made.approval = item?.approval;
        this.tools.set(e.tool_call_id, made);
        return this.push(made, true);
      }
      case 'agent_tool_response':
        if (item) Object.assign(item, { output: toolOutput(e.content), isError: Boolean(e.is_error) });
        return;
      case 'agent_approval_request': {
        const approval = { state: 'waiting', timeoutAt: e.timeout_at } as const;
        if (item) item.approval = approval;
        else {
          const waiting: ToolItem = {
            ...base,
            kind: 'tool',
            id: e.tool_call_id,
            tool: e.tool,
            input: e.input,
            screenshots: [],
            approval,
          };
          this.tools.set(e.tool_call_id, waiting);
          this.push(waiting);
        }
        return;
      }
      case 'agent_approval_decision':
        if (!item) return;
        item.approval = { state: e.decision, by: e.by, reason: e.reason };
        if (e.input !== undefined) item.input = e.input;
        return;
      case 'agent_screenshot':
        item?.screenshots.push(e.path);
        return;
    }
  }

  private other(e: AgentEvent, base: Tagged): void {
    const current = !base.superseded;
    switch (e.type) {
      case 'agent_handoff':
        return this.push({ ...base, kind: 'handoff', from: e.from, to: e.to }, true);
      case 'agent_retry':
        return this.push({
          ...base,
          kind: 'retry',
          what: e.what,
          tool: e.tool,
          attempt: e.attempt,
          error: e.error.message,
          retryInMs: e.retry_in_ms,
        });
      case 'agent_input':
        return this.push({ ...base, kind: 'input', text: e.content }, true);
      case 'agent_step':
        if (!e.workflow_id || !e.step_id || !e.status) return;
        if (current) this.t.steps.set(`${e.workflow_id}/${e.step_id}`, e.status);
        return this.push({ ...base, kind: 'step-end', name: e.name ?? e.step, status: e.status });
      case 'agent_rewound':
        this.t.ended = false;
        return this.push({ ...base, kind: 'rewound', toStep: e.step, runId: e.run_id }, true);
      case 'agent_files_changed':
        return this.push({ ...base, kind: 'files', created: e.created, modified: e.modified, deleted: e.deleted });
      case 'agent_final_output':
        return this.push({ ...base, kind: 'final-output', name: e.name, output: e.output });
      case 'agent_progress':
        if (current) this.t.progress = e.progress;
        return;
      case 'agent_cost':
        if (current) this.t.cost = e.cost;
        return;
      case 'agent_error':
        if (current) this.t.ended = true;
        return this.push({ ...base, kind: 'error', type: e.error.type, message: e.error.message });
      case 'agent_completed':
        if (current) this.t.ended = true;
        return this.push({ ...base, kind: 'completed' });
    }
  }
}

/** Folds the events (any order, repeats allowed: by seq, each once) into the page's timeline. */
export function buildTimeline(input: AgentEvent[]): Timeline {
  const bySeq = new Map<number, AgentEvent>();
  for (const e of input) bySeq.set(e.seq, e);
  const events = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  const { retracted, superseded } = voided(events);
  const fold = new Fold(events.at(-1)?.seq ?? 0);
  for (const e of events) {
    if (retracted.has(e.seq)) continue;
    fold.add(e, { seq: e.seq, step: stepOf(e), superseded: Boolean(e.superseded) || superseded.has(e.seq) });
  }
  // A step whose events have begun but that has not ended is running.
  for (const e of events) {
    const s = stepOf(e);
    if (s && !fold.t.steps.has(s) && !e.superseded && !superseded.has(e.seq)) fold.t.steps.set(s, 'running');
  }
  return fold.t;
}
