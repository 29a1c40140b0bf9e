// The project's own small MCP server for the offline demo: `npm start` runs it
// so a newcomer sees a whole tool loop (scripted model -> worker -> MCP tool)
// without any account or network. Every tool is harmless and side-effect free.
//
// Streamable HTTP at /mcp with stateful sessions, one McpServer per session
// (the way server-everything does it): a session's in-flight calls and
// progress belong to that session only, and a DELETE or a close ends it.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import express, { Request, Response } from 'express';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { localhostHostValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { createLogger, Logger } from '../../common/logger';
import { closeMcpServer, mountMcpSessions, rpcError } from './session-routes';

export interface DemoMcpServerOptions {
  /** Port to listen on; 0 picks a free one. Default 0. */
  port?: number;
  /** Address to bind. Default 127.0.0.1. */
  host?: string;
  /** Session and failure lines. Default: silent. */
  logger?: Logger;
}

export interface DemoMcpStats {
  /** Sessions open now. */
  sessions: number;
  /** Tool calls started, all tools together and per tool. */
  calls: number;
  callsByTool: Record<string, number>;
  /** Tool calls whose handler saw its request aborted (client cancel or session close) before finishing. */
  aborts: number;
}

export interface DemoMcpServer {
  /** The Streamable HTTP endpoint, e.g. http://127.0.0.1:8790/mcp. */
  url: string;
  port: number;
  stats(): DemoMcpStats;
  /** Ends every open session (aborting their calls) and the HTTP server, hung connections included. */
  close(): Promise<void>;
}

/** The tools every session offers, in the order tools/list shows them. */
export const DEMO_MCP_TOOLS = ['current_time', 'add', 'multiply', 'random_number', 'slow_count'] as const;

const text = (s: string, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: s }],
  ...(isError ? { isError: true } : {}),
});

type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

interface Counters {
  calls: number;
  callsByTool: Record<string, number>;
  aborts: number;
}

/**
 * Counts the call, and counts an abort when the request's signal fires while
 * the handler still runs: the test (and a curious operator) can then see that
 * a cancel reached the tool, not only the transport.
 */
function counted<A>(
  counters: Counters,
  name: string,
  fn: (args: A, signal: AbortSignal, extra: ToolExtra) => Promise<CallToolResult> | CallToolResult,
) {
  return async (args: A, extra: ToolExtra): Promise<CallToolResult> => {
    counters.calls++;
    counters.callsByTool[name] = (counters.callsByTool[name] ?? 0) + 1;
    const onAbort = () => counters.aborts++;
    if (extra.signal.aborted) onAbort();
    else extra.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await fn(args, extra.signal, extra);
    } finally {
      extra.signal.removeEventListener('abort', onAbort);
    }
  };
}

function localTime(now: Date, timeZone: string): string {
  // sv-SE formats as "2024-05-01 13:45:00", which reads unambiguously in any locale.
  const local = new Intl.DateTimeFormat('sv-SE', { timeZone, dateStyle: 'short', timeStyle: 'medium' }).format(now);
  const offset = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'shortOffset' })
    .formatToParts(now)
    .find((p) => p.type === 'timeZoneName')?.value;
  return `${local}${offset ? ` (${offset})` : ''}`;
}

// eslint-disable-next-line max-lines-per-function -- a table of the demo tools, one registerTool call (name, schema, handler) per tool
function buildServer(counters: Counters): McpServer {
  const server = new McpServer({ name: 'demo-mcp', version: '1.0.0' }, { capabilities: { tools: {} } });
  const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: false };

  server.registerTool(
    'current_time',
    {
      title: 'Current time',
      description:
        "The current time as ISO-8601 UTC, plus the local time in an IANA time zone (default: the server's own zone).",
      inputSchema: {
        time_zone: z
          .string()
          .min(1)
          .optional()
          .describe('IANA time zone name, e.g. "Europe/Paris" or "America/New_York"'),
      },
      annotations: { ...readOnly, idempotentHint: false },
    },
    counted(counters, 'current_time', ({ time_zone }: { time_zone?: string }) => {
      const timeZone = time_zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
      const now = new Date();
      try {
        return text(`UTC: ${now.toISOString()}\nLocal (${timeZone}): ${localTime(now, timeZone)}`);
      } catch {
        // Intl throws RangeError for a zone it does not know: the model should read why and retry.
        return text(`unknown time zone "${timeZone}": use an IANA name such as "Europe/Paris" or "UTC"`, true);
      }
    }),
  );

  const pair = { a: z.number().describe('first number'), b: z.number().describe('second number') };
  server.registerTool(
    'add',
    {
      title: 'Add',
      description: 'Adds two numbers and returns a + b.',
      inputSchema: pair,
      annotations: { ...readOnly, idempotentHint: true },
    },
    counted(counters, 'add', ({ a, b }: { a: number; b: number }) => text(String(a + b))),
  );
  server.registerTool(
    'multiply',
    {
      title: 'Multiply',
      description: 'Multiplies two numbers and returns a * b.',
      inputSchema: pair,
      annotations: { ...readOnly, idempotentHint: true },
    },
    counted(counters, 'multiply', ({ a, b }: { a: number; b: number }) => text(String(a * b))),
  );

  server.registerTool(
    'random_number',
    {
      title: 'Random number',
      description: 'A random integer between min and max, both included.',
      inputSchema: {
        min: z.number().int().describe('smallest allowed result'),
        max: z.number().int().describe('largest allowed result'),
      },
      annotations: { ...readOnly, idempotentHint: false },
    },
    counted(counters, 'random_number', ({ min, max }: { min: number; max: number }) => {
      if (min > max) return text(`min (${min}) must not be greater than max (${max})`, true);
      return text(String(min + Math.floor(Math.random() * (max - min + 1))));
    }),
  );

  server.registerTool(
    'slow_count',
    {
      title: 'Slow count',
      description:
        'Counts from 1 to `to`, one step every interval_ms, reporting each step as MCP progress. Useful to watch progress and cancellation.',
      inputSchema: {
        to: z.number().int().min(1).max(60).describe('count up to this number (1-60)'),
        interval_ms: z
          .number()
          .int()
          .min(0)
          .max(10_000)
          .optional()
          .describe('milliseconds between steps, default 1000'),
      },
      annotations: { ...readOnly, idempotentHint: true },
    },
    counted(
      counters,
      'slow_count',
      async ({ to, interval_ms }: { to: number; interval_ms?: number }, signal, extra) => {
        const progressToken = extra._meta?.progressToken;
        for (let i = 1; i <= to; i++) {
          try {
            await sleep(interval_ms ?? 1000, undefined, { signal });
          } catch {
            // Cancelled: the SDK sends no result for a cancelled request, this only ends the handler now.
            return text(`cancelled at ${i - 1} of ${to}`, true);
          }
          if (progressToken !== undefined) {
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress: i, total: to, message: `counted ${i} of ${to}` },
            });
          }
        }
        return text(`counted to ${to}`);
      },
    ),
  );
  return server;
}

export async function startDemoMcpServer(opts: DemoMcpServerOptions = {}): Promise<DemoMcpServer> {
  const logger = opts.logger ?? createLogger({ level: 'silent' });
  const host = opts.host ?? '127.0.0.1';
  const counters: Counters = { calls: 0, callsByTool: {}, aborts: 0 };
  const app = express();
  // Loopback binding: refuse foreign Host headers (DNS rebinding from a browser page).
  if (['127.0.0.1', 'localhost', '::1'].includes(host)) app.use(localhostHostValidation());
  app.use(express.json({ limit: '1mb' }));
  app.get('/health', (_req, res) => {
    res.json({ ok: true, sessions: sessions.size });
  });

  const sessions = mountMcpSessions(app, '/mcp', {
    build: () => buildServer(counters),
    onOpen: (id) => logger.debug({ session: id }, 'demo MCP session opened'),
    onClose: (id) => logger.debug({ session: id }, 'demo MCP session closed'),
  });

  app.use((err: unknown, _req: Request, res: Response, _next: express.NextFunction) => {
    logger.error({ err }, 'demo MCP server failed on a request');
    if (!res.headersSent) rpcError(res, 500, 'Internal server error');
    else res.end();
  });

  const server: http.Server = await new Promise((resolve, reject) => {
    const s = app.listen(opts.port ?? 0, host, (err?: Error) => (err ? reject(err) : resolve(s)));
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}/mcp`;
  logger.debug({ url, tools: DEMO_MCP_TOOLS }, 'demo MCP server listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    stats: () => ({
      sessions: sessions.size,
      calls: counters.calls,
      callsByTool: { ...counters.callsByTool },
      aborts: counters.aborts,
    }),
    close: () => {
      closing ??= closeMcpServer(server, sessions);
      return closing;
    },
  };
}
