// The scripted OpenAI-compatible model server: what tests and the offline demo
// talk to instead of a real model. Replies are chosen by directives in the last
// user message or the x-scripted-model header (see SCRIPTS.md).
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express, { NextFunction, Request, Response } from 'express';
import pino, { Logger } from 'pino';
import { ChatRequest, describeIssue, parseChatRequest } from './request';
import { Directive, findDirective, intParam } from './directives';
import { buildReply, readScript, Script } from './script';
import { Interruption, Outcome, sendCompletion, streamCompletion } from './respond';
import { sendError } from './errors';
import { createExpressServer } from '../../common/http/express-server';

export interface ScriptedModelOptions {
  /** Port to listen on; 0 picks a free one. Default 0. */
  port?: number;
  /** Address to bind. Default 127.0.0.1. */
  host?: string;
  /** Receives one debug line per request and warnings about odd requests. Default: a silent pino logger. */
  logger?: Logger;
  /** Ids listed by GET /v1/models; requests may name any model. Default scripted-flash, scripted-base, scripted-max. */
  models?: string[];
  /** How many recent chat requests received() keeps. Default 100. */
  keepRequests?: number;
  /**
   * Called synchronously right after each streamed token delta is handed to the
   * socket, so a benchmark in the same process can timestamp token emission.
   * Default: none.
   */
  onTokenWritten?: (delta: Record<string, unknown>) => void;
}

export interface ScriptedModelStats {
  /** Every HTTP request, any route. */
  requests: number;
  /** POST /v1/chat/completions, valid or not. */
  chatCompletions: number;
  /** Chat requests with stream: true. */
  streamed: number;
  /** Responses delivered to the end. */
  completed: number;
  /** Requests rejected with 400 for a malformed body. */
  badRequests: number;
  /** Errors returned because a [[fail]] directive said so. */
  injectedFailures: number;
  /** Replies that were tool calls. */
  toolCallReplies: number;
  /** Requests that ended with a partial assistant message. */
  continuations: number;
  hangs: number;
  drops: number;
  /** Responses cut short because the client went away. */
  clientAborts: number;
  /** Chat requests in progress right now (hung ones included). */
  active: number;
}

export interface ReceivedRequest {
  at: number;
  /** The x-scripted-model header, when sent. */
  header?: string;
  body: ChatRequest;
}

export interface ScriptedModel {
  /** Base URL for the OpenAI client, ending in /v1. */
  url: string;
  port: number;
  stats(): ScriptedModelStats;
  /** The most recent chat requests, oldest first, as validated. */
  received(): ReceivedRequest[];
  /** Zeroes the stats, forgets received requests and the fail/drop/hang counters. */
  reset(): void;
  /** Stops listening and cuts every open connection, hung ones included. */
  close(): Promise<void>;
}

export const DEFAULT_MODELS = ['scripted-flash', 'scripted-base', 'scripted-max'];
const MODEL_CREATED = 1_700_000_000;
const DEFAULT_RETRY_AFTER_MS = 1000;

function emptyStats(): ScriptedModelStats {
  return {
    requests: 0,
    chatCompletions: 0,
    streamed: 0,
    completed: 0,
    badRequests: 0,
    injectedFailures: 0,
    toolCallReplies: 0,
    continuations: 0,
    hangs: 0,
    drops: 0,
    clientAborts: 0,
    active: 0,
  };
}

/** What the handlers share, and what reset() clears. */
class ServerState {
  stats = emptyStats();
  received: ReceivedRequest[] = [];
  // Per-key use counts of fail/drop/hang, so "the first N requests" holds across retries.
  counters = new Map<string, number>();

  constructor(private readonly keep: number) {}

  /** True while the directive still has uses left; counts this use. */
  consume(d: Directive, script: Script, dfltTimes: number): boolean {
    const key = `${d.name}:${d.params.key ?? script.rawUserText}`;
    const used = this.counters.get(key) ?? 0;
    if (used >= intParam(d, 'times', dfltTimes)) return false;
    this.counters.set(key, used + 1);
    return true;
  }

  /** Keeps the request among the most recent `keep`. */
  record(r: ReceivedRequest): void {
    this.received.push(r);
    if (this.received.length > this.keep) this.received = this.received.slice(this.received.length - this.keep);
  }

  reset(): void {
    this.stats = { ...emptyStats(), active: this.stats.active };
    this.received = [];
    this.counters = new Map();
  }
}

function sendFailure(res: Response, d: Directive): void {
  let status = intParam(d, 'status', 500);
  if (status < 400 || status > 599) status = 500;
  const headers: Record<string, string> = {};
  if (status === 429 || d.params.after !== undefined) {
    const ms = intParam(d, 'after', DEFAULT_RETRY_AFTER_MS);
    headers['retry-after-ms'] = String(ms);
    headers['retry-after'] = String(Math.ceil(ms / 1000));
  }
  const over: Record<string, string> = {};
  for (const k of ['message', 'type', 'code', 'param'] as const) if (d.params[k] !== undefined) over[k] = d.params[k];
  sendError(res, status, over, headers);
}

export async function startScriptedModel(opts: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const logger = opts.logger ?? pino({ level: 'silent' });
  const host = opts.host ?? '127.0.0.1';
  const state = new ServerState(opts.keepRequests ?? 100);

  const app = express();
  app.disable('x-powered-by');
  // ETags only make sense for cacheable GETs; completions must never be revalidated.
  app.set('etag', false);
  app.use((_req, _res, next) => {
    state.stats.requests++;
    next();
  });
  modelRoutes(app, opts.models ?? DEFAULT_MODELS);
  // Any content type is read as JSON: a client that forgets the header should
  // get the same answer, and a non-JSON body fails parsing with a clean 400.
  app.post(
    '/v1/chat/completions',
    express.json({ limit: '32mb', type: () => true }),
    chatCompletions(state, logger, opts.onTokenWritten),
  );
  app.use((req: Request, res: Response) => {
    sendError(res, 404, { message: `Invalid URL (${req.method} ${req.path})`, code: null });
  });
  app.use(errorHandler(state, logger));

  const server = createExpressServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}/v1`;
  logger.info({ url }, 'scripted model listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    stats: () => ({ ...state.stats }),
    received: () => [...state.received],
    reset: () => state.reset(),
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Hung and keep-alive connections would otherwise hold close() open forever.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** GET /health and the models list. */
function modelRoutes(app: express.Express, models: string[]): void {
  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/v1/models', (_req, res) => {
    res.json({
      object: 'list',
      data: models.map((id) => ({ id, object: 'model', created: MODEL_CREATED, owned_by: 'scripted' })),
    });
  });
  app.get('/v1/models/:id', (req, res) => {
    res.json({ id: req.params.id, object: 'model', created: MODEL_CREATED, owned_by: 'scripted' });
  });
}

/** POST /v1/chat/completions: validates and records the request, then answers it as its script says. */
function chatCompletions(
  state: ServerState,
  logger: Logger,
  onTokenWritten: ScriptedModelOptions['onTokenWritten'],
): (req: Request, res: Response) => Promise<void> {
  return async (req: Request, res: Response) => {
    state.stats.chatCompletions++;
    const parsed = parseChatRequest(req.body ?? {});
    if (!parsed.success) {
      state.stats.badRequests++;
      const { message, param } = describeIssue(parsed.error);
      sendError(res, 400, { message, param });
      return;
    }
    const body = parsed.data;
    const header = req.get('x-scripted-model');
    state.record({ at: Date.now(), header, body });

    const id = `chatcmpl-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    res.set('x-request-id', id);
    if (body.stream) state.stats.streamed++;
    state.stats.active++;
    const script = readScript(body, header);
    // [[json times=N key=K]]: the first N structured replies for the key do not fit their schema (across requests, like fail).
    const json = findDirective(script.directives, 'json');
    if (
      json?.params.times !== undefined &&
      body.response_format?.type === 'json_schema' &&
      state.consume(json, script, 0)
    )
      script.invalidNow = true;
    const log = logger.child({
      id,
      model: body.model,
      stream: !!body.stream,
      directives: script.directives.map((d) => d.name),
    });
    try {
      await answer(state, res, body, script, { id, signal: abort.signal, log, onTokenWritten });
    } finally {
      state.stats.active--;
    }
  };
}

/** The scripted answer to a valid chat request: a failure it asks for, or its reply (whole, cut short or hung). */
async function answer(
  state: ServerState,
  res: Response,
  body: ChatRequest,
  script: Script,
  a: { id: string; signal: AbortSignal; log: Logger; onTokenWritten: ScriptedModelOptions['onTokenWritten'] },
): Promise<void> {
  const { log } = a;
  const fail = findDirective(script.directives, 'fail');
  if (fail && state.consume(fail, script, 1)) {
    state.stats.injectedFailures++;
    sendFailure(res, fail);
    log.debug({ status: res.statusCode }, 'scripted failure');
    return;
  }
  const reply = buildReply(body, script);
  if (reply.toolCalls.length > 0) state.stats.toolCallReplies++;
  if (reply.continuation) state.stats.continuations++;
  if (reply.continuation === 'prefix-mismatch')
    log.warn('partial assistant message is not a prefix of the scripted reply; sending the whole reply');

  const interruption = interruptionOf(state, script);
  const slow = findDirective(script.directives, 'slow');
  const ctx = {
    id: a.id,
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    pacing: { firstMs: intParam(slow, 'first', 0), delayMs: slow ? intParam(slow, 'delay', 50) : 0 },
    signal: a.signal,
    interruption,
    onTokenWritten: a.onTokenWritten,
  };
  if (interruption?.kind === 'hang') state.stats.hangs++;
  const outcome: Outcome = body.stream
    ? await streamCompletion(res, body, reply, ctx)
    : await sendCompletion(res, body, reply, ctx);
  if (outcome === 'completed') state.stats.completed++;
  else if (outcome === 'dropped') state.stats.drops++;
  else if (outcome === 'client-aborted') state.stats.clientAborts++;
  log.debug({ outcome, finish: reply.finishReason, continuation: reply.continuation }, 'chat completion');
}

/** [[hang]] or [[drop]], while it has uses left: the reply stops (after `after` tokens, if given). */
function interruptionOf(state: ServerState, script: Script): Interruption | undefined {
  const hang = findDirective(script.directives, 'hang');
  const drop = findDirective(script.directives, 'drop');
  const afterOf = (d: Directive) => (d.params.after === undefined ? undefined : intParam(d, 'after', 0));
  if (hang && state.consume(hang, script, Infinity)) return { kind: 'hang', after: afterOf(hang) };
  if (drop && state.consume(drop, script, 1)) return { kind: 'drop', after: afterOf(drop) };
  return undefined;
}

/** Express's error handler: a body that is not JSON or too large is a 400-class answer, anything else a 500. */
function errorHandler(state: ServerState, logger: Logger) {
  // Express's error-handler signature needs all four parameters.
  return (err: any, _req: Request, res: Response, _next: NextFunction) => {
    if (err?.type === 'entity.parse.failed') {
      state.stats.badRequests++;
      sendError(res, 400, { message: `We could not parse the JSON body of your request: ${err.message}` });
    } else if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500) {
      state.stats.badRequests++;
      sendError(res, err.status, { message: String(err.message ?? 'Bad request') });
    } else {
      logger.error({ err }, 'scripted model failed on a request');
      sendError(res, 500);
    }
  };
}
