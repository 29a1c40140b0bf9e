// The streaming half of a model turn: one Chat Completion stream whose pieces
// go to the relay as they arrive. Free of Temporal's activity context, so the
// worker can run it on its token thread (src/worker/model-stream/), away from the
// main thread's workflow activations, or in process (tests, embedding).
import type OpenAI from 'openai';
import type { Usage } from '../workflows/types';
import type { AgentEventBody, EventTag } from '../src/common/relay/events';
import type { EventPublisher } from '../src/common/relay/publisher';
import type { ToolCall } from '../workflows/types';

/** What a turn has done so far; also its heartbeat details. */
export interface TurnProgress {
  content: string;
  thinking: string;
  /** Events this turn (its producer) has published. */
  published: number;
  /** The highest seq the turn has heard of (the relay numbers events). */
  lastSeq: number;
  thinkingStarted: boolean;
  responseStarted: boolean;
  /** Stream chunks received by this attempt: an estimate of its output tokens if it is cut short. */
  chunks: number;
  /** This attempt's prompt, estimated in tokens. */
  promptTokens: number;
  /** Usage of earlier attempts of this turn (providers bill interrupted streams too). */
  spent: Usage;
  /** The relay did not take some of the turn's events (relay-recovery.ts). */
  lost?: boolean;
}

export interface StreamRequest {
  taskId: string;
  session: string;
  /** The turn's producer id on the relay (publisher.ts). */
  producer: string;
  model: string;
  /** Chat Completions messages (system prompt, thread, a crashed attempt's partial answer). */
  messages: object[];
  /** Chat Completions tools offered (function tools); empty = none. */
  tools: object[];
  /** Publish every delta as it arrives (else the activity publishes complete blocks afterwards). */
  streamTokens: boolean;
  /** Publish reasoning content as agent_thinking (flash mode). */
  showThinking: boolean;
  /** Chat Completions response_format (a final output's json_schema); absent: text. */
  responseFormat?: object;
  /** A DAG step's run: its events carry the workflow and step ids. */
  tag?: EventTag;
}

export interface StreamOutcome {
  usage: Usage;
  toolCalls: ToolCall[];
  /** The progress at the stream's end. */
  progress: TurnProgress;
}

export interface StreamRunOptions {
  signal: AbortSignal;
  /** Called with a snapshot of the progress now and then (at least once a second while tokens flow). */
  onProgress?: (p: TurnProgress) => void;
}

/**
 * Runs a turn's model stream. `progress` is updated as pieces are published
 * (in place for the in-process runner; through onProgress across a thread).
 * Rejects with the model client's error (status, message) as it came, which
 * the activity classifies, or with a StreamRunnerError.
 */
export interface ModelStreamRunner {
  run(req: StreamRequest, progress: TurnProgress, opts: StreamRunOptions): Promise<StreamOutcome>;
}

/** The runner itself failed (its thread stopped), not the model: retried like a crash. */
export class StreamRunnerError extends Error {
  override readonly name = 'StreamRunnerError';
}

export interface StreamDeps {
  openai: OpenAI;
  publisher: EventPublisher;
  /** Longest wait for the next piece once the stream has begun, ms (MODEL_STREAM_IDLE_MS). */
  idleMs: number;
}

/** The provider began its answer, then sent nothing for `idleMs`: the attempt fails and Temporal retries it. */
export class ModelStreamStalled extends Error {
  override readonly name = 'ModelStreamStalled';
}

/** The stream loop itself, shared by both runners. Mutates `p`. */
export async function streamModelTurn(
  deps: StreamDeps,
  req: StreamRequest,
  p: TurnProgress,
  signal: AbortSignal,
): Promise<StreamOutcome> {
  const emit = (...bodies: AgentEventBody[]) => publishAs(deps.publisher, req, p, bodies);
  const usage: Usage = { promptTokens: 0, completionTokens: 0 };
  // The client's timeout covers the wait for the response to begin; this one each wait after.
  const idle = new IdleWatch(deps.idleMs);
  const stream = await deps.openai.chat.completions.create(
    {
      model: req.model,
      messages: req.messages as never,
      ...(req.tools.length && { tools: req.tools as never }),
      ...(req.responseFormat && { response_format: req.responseFormat as never }),
      stream: true,
      stream_options: { include_usage: true },
    },
    { signal: AbortSignal.any([signal, idle.signal]) },
  );
  const partial = new Map<number, ToolCall>();
  const turn: TurnSink = { req, p, usage, partial, emit };
  try {
    idle.start();
    for await (const chunk of stream) {
      idle.touch();
      p.chunks++;
      await takeChunk(turn, chunk);
      // The time the relay took is not the provider's silence.
      idle.touch();
    }
  } catch (err) {
    throw idle.stalled() ?? err;
  } finally {
    idle.stop();
  }
  // The client ends the iteration quietly when aborted; a cut-short turn is not a result.
  const stalled = idle.stalled();
  if (stalled) throw stalled;
  signal.throwIfAborted();
  return { usage, toolCalls: [...partial.values()], progress: p };
}

/** Where streamModelTurn gathers its turn: the progress, the usage, the tool calls by index, and the stream. */
interface TurnSink {
  req: StreamRequest;
  p: TurnProgress;
  usage: Usage;
  partial: Map<number, ToolCall>;
  emit: (...bodies: AgentEventBody[]) => Promise<unknown>;
}

/** One chunk of the provider's stream: its usage, its text (published when tokens stream), its tool call pieces. */
async function takeChunk(turn: TurnSink, chunk: OpenAI.Chat.Completions.ChatCompletionChunk): Promise<void> {
  const { req, p, usage, partial, emit } = turn;
  if (chunk.usage) {
    usage.promptTokens = chunk.usage.prompt_tokens;
    usage.completionTokens = chunk.usage.completion_tokens;
  }
  const delta = chunk.choices?.[0]?.delta as (Record<string, any> & { content?: string | null }) | undefined;
  if (!delta) return;
  const reasoning: string | undefined = delta.reasoning_content ?? delta.reasoning;
  if (reasoning) {
    p.thinking += reasoning;
    if (req.showThinking && req.streamTokens) {
      if (!p.thinkingStarted) await emit({ type: 'agent_thinking_start' });
      p.thinkingStarted = true;
      await emit({ type: 'agent_thinking', content: reasoning });
    }
  }
  if (delta.content) {
    p.content += delta.content;
    if (req.streamTokens) {
      if (!p.responseStarted) await emit({ type: 'agent_response_start' });
      p.responseStarted = true;
      await emit({ type: 'agent_response', content: delta.content });
    }
  }
  for (const tc of delta.tool_calls ?? []) {
    const cur = partial.get(tc.index) ?? { id: tc.id ?? '', name: '', arguments: '' };
    if (tc.id) cur.id = tc.id;
    if (tc.function?.name) cur.name += tc.function.name;
    if (tc.function?.arguments) cur.arguments += tc.function.arguments;
    partial.set(tc.index, cur);
  }
}

/**
 * Aborts a stream whose provider stays silent for `ms`: one timer per quiet period (not one per
 * token), which on firing looks at when the last piece came and waits out the rest if needed.
 */
class IdleWatch {
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  constructor(private readonly ms: number) {}
  get signal(): AbortSignal {
    return this.abort.signal;
  }
  start(): void {
    this.touch();
    this.wait(this.ms);
  }
  touch(): void {
    this.last = Date.now();
  }
  stop(): void {
    clearTimeout(this.timer);
  }
  /** The failure, when the watch fired. */
  stalled(): ModelStreamStalled | undefined {
    if (!this.abort.signal.aborted) return undefined;
    return new ModelStreamStalled(
      `no data from the model for ${Math.round(this.ms / 1000)} s after its answer began (MODEL_STREAM_IDLE_MS)`,
    );
  }
  private wait(ms: number): void {
    this.timer = setTimeout(() => {
      const quiet = Date.now() - this.last;
      if (quiet >= this.ms) this.abort.abort();
      else this.wait(this.ms - quiet);
    }, ms);
  }
}

/** Publishes the turn's next events under its producer, numbered on from what it published. */
export async function publishAs(
  publisher: EventPublisher,
  req: Pick<StreamRequest, 'taskId' | 'session' | 'producer' | 'tag'>,
  p: TurnProgress,
  bodies: AgentEventBody[],
  meta?: unknown,
): Promise<void> {
  const offset = p.published;
  p.published += bodies.length;
  const r = await publisher.publish(req.taskId, req.session, req.producer, offset, bodies, {
    floor: p.lastSeq,
    meta,
    tag: req.tag,
  });
  p.lastSeq = Math.max(p.lastSeq, r.lastSeq);
  if (r.lost) p.lost = true;
}

/** Runs the stream on the calling thread; the activity heartbeats `progress` itself, so no callbacks are needed. */
export function inProcessModelStream(deps: StreamDeps): ModelStreamRunner {
  return { run: (req, progress, opts) => streamModelTurn(deps, req, progress, opts.signal) };
}
