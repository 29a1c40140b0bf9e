// How `agent run` and `agent tail` show a task's events: the answer on stdout
// as it comes (token by token or block by block), tool calls, steps, handoffs
// and messages as short lines on stderr, a spinner saying what the agent is
// doing while nothing else moves; or, with --json, each event as one JSON line.
// The exit code follows the terminal event: 0 completed, 1 error.
import type { AgentEvent, ScheduledSummary } from '../types';
import { when } from './format';
import type { Output, Style } from './output';
import { Spinner } from './spinner';

const INPUT_MAX = 80;
const RESULT_MAX = 100;

/** One line of at most `max` characters: newlines folded, the rest cut with an ellipsis. */
export function short(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat;
}

/** The `{"tool", ...}` JSON text of a tool event, tolerating anything else. */
function toolContent(content: string): { tool: string; value: unknown } {
  try {
    const parsed = JSON.parse(content) as { tool?: unknown; input?: unknown; content?: unknown };
    return { tool: String(parsed.tool ?? '?'), value: 'input' in parsed ? parsed.input : parsed.content };
  } catch {
    return { tool: '?', value: content };
  }
}

/** The text of a `[scheduled]` note: a schedule the run made and when it runs next. */
export function scheduledText(s: ScheduledSummary): string {
  return `${s.schedule_id} next ${s.next_run_at ? `${when(s.next_run_at)} UTC` : '- (none left)'}`;
}

const asText = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));

export class EventView {
  /** 0 after agent_completed, 1 after agent_error, undefined while neither came. */
  exitCode: number | undefined;
  private readonly spinner: Spinner;
  /** The answer's line on stdout is open (a newline is owed before the next stderr line). */
  private answerOpen = false;
  private thinkingOpen = false;
  private steps = 0;

  constructor(
    private readonly out: Output,
    private readonly json: boolean,
  ) {
    this.spinner = new Spinner(out);
    if (!json) this.spinner.start('waiting for the agent');
  }

  // eslint-disable-next-line max-lines-per-function -- one case per event type: the switch is the table of how each event is shown
  handle(ev: AgentEvent): void {
    if (this.json) {
      this.out.line(JSON.stringify(ev));
      this.terminal(ev);
      return;
    }
    switch (ev.type) {
      case 'agent_started':
        this.status('the agent started');
        break;
      case 'agent_scheduled':
        for (const s of ev.schedules) this.note('magenta', '[scheduled]', scheduledText(s));
        break;
      case 'agent_thinking_start':
        this.status('thinking');
        break;
      case 'agent_thinking':
        this.closeAnswer();
        this.out.err(this.out.paint('dim', ev.content, true));
        this.thinkingOpen = !ev.content.endsWith('\n');
        break;
      case 'agent_response_start':
        this.status('answering');
        break;
      case 'agent_response':
        this.closeThinking();
        this.out.out(ev.content);
        this.answerOpen = ev.content !== '' && !ev.content.endsWith('\n');
        break;
      case 'agent_tool_use_start':
        this.status('calling a tool');
        break;
      case 'agent_tool_use': {
        const { tool, value } = toolContent(ev.content);
        this.note('cyan', '[tool]', `${tool} ${short(asText(value), INPUT_MAX)}`);
        this.status(`running ${tool}`);
        break;
      }
      case 'agent_tool_response': {
        const { tool, value } = toolContent(ev.content);
        if (ev.is_error) this.note('red', '[tool]', `${tool} failed: ${short(asText(value), RESULT_MAX)}`);
        else this.note('cyan', '[tool]', `${tool} -> ${short(asText(value), RESULT_MAX)}`);
        this.status('waiting for the model');
        break;
      }
      case 'agent_step':
        this.steps++;
        this.note(
          'dim',
          `[step ${ev.step}]`,
          ev.usage ? `${ev.usage.prompt_tokens} prompt + ${ev.usage.completion_tokens} completion tokens` : '',
        );
        this.status(`step ${ev.step} done`);
        break;
      case 'agent_handoff':
        this.note('magenta', '[handoff]', `${ev.from} -> ${ev.to}`);
        break;
      case 'agent_files_changed': {
        const parts = [
          ...ev.created.map((p) => `+${p}`),
          ...ev.modified.map((p) => `~${p}`),
          ...ev.deleted.map((p) => `-${p}`),
        ];
        this.note('cyan', '[files]', short(parts.join(' '), RESULT_MAX));
        break;
      }
      case 'agent_screenshot':
        this.note('cyan', '[screenshot]', `${ev.path}${ev.url ? ` (${ev.url})` : ''}`);
        break;
      case 'agent_input':
        this.note('yellow', '[input]', short(ev.content, RESULT_MAX));
        break;
      case 'agent_progress':
        this.status(`progress ${Math.round(ev.progress * 100)}%`);
        break;
      case 'agent_retry': {
        const what = ev.what === 'tool' ? `tool ${ev.tool ?? ''}`.trim() : 'model';
        const wait =
          ev.retry_in_ms !== undefined ? `; retrying in ${(ev.retry_in_ms / 1000).toFixed(1)}s` : '; retrying';
        this.note(
          'yellow',
          '[retry]',
          `${what} attempt ${ev.attempt} failed: ${ev.error.type}: ${short(ev.error.message, RESULT_MAX)}${wait}`,
        );
        this.status(`retrying the ${what}`);
        break;
      }
      case 'agent_retract':
        // What was printed cannot be taken back: say plainly that it is void and the answer starts again.
        this.closeAnswer();
        this.closeThinking();
        this.note(
          'yellow',
          '[retry]',
          `the answer above was cut short (attempt ${ev.attempt - 1}) and is void; the model answers again`,
        );
        this.status('answering again');
        break;
      case 'agent_final_output':
        // Whole, not shortened: it is what the run was asked to produce.
        this.closeAnswer();
        this.note('green', '[final output]', `${ev.name}: ${JSON.stringify(ev.output)}`);
        break;
      case 'agent_cost':
        this.note('dim', '[cost]', `$${ev.cost}`);
        break;
      case 'agent_completed':
        break;
      case 'agent_error':
        this.note('red', 'error:', `${ev.error.type}: ${ev.error.message}`);
        break;
      default: {
        // An event type newer than this CLI: show it plainly rather than drop it.
        const { type, session: _s, task_id: _t, seq: _q, ...rest } = ev as AgentEvent & Record<string, unknown>;
        this.note('dim', `[${String(type)}]`, short(JSON.stringify(rest), RESULT_MAX));
      }
    }
    this.terminal(ev);
  }

  /** A reconnection after a dropped connection, shown so a stall has an explanation. */
  reconnecting(attempt: number, lastEventId: number): void {
    if (this.json) return;
    this.note('yellow', '[reconnecting]', `connection lost after event ${lastEventId}; resuming (attempt ${attempt})`);
    this.status('reconnecting');
  }

  /** Stops the spinner and closes open lines; call once the stream is over. */
  end(): void {
    this.spinner.stop();
    this.closeAnswer();
    this.closeThinking();
  }

  private terminal(ev: AgentEvent): void {
    if (ev.superseded) return; // the end of a branch a rewind abandoned: the task goes on
    if (ev.type === 'agent_completed') this.exitCode = 0;
    else if (ev.type === 'agent_error') this.exitCode = 1;
    if (this.exitCode !== undefined) this.end();
  }

  private status(label: string): void {
    this.spinner.label = this.steps ? `${label} (step ${this.steps + 1})` : label;
  }

  private note(style: Style, tag: string, text: string): void {
    this.closeAnswer();
    this.closeThinking();
    this.out.errLine(`${this.out.paint(style, tag, true)}${text ? ` ${text}` : ''}`);
  }

  private closeAnswer(): void {
    if (this.answerOpen) this.out.line();
    this.answerOpen = false;
  }

  private closeThinking(): void {
    if (this.thinkingOpen) this.out.errLine('');
    this.thinkingOpen = false;
  }
}
