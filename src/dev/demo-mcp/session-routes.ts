// Streamable HTTP MCP sessions on an Express app, one MCP server per session
// (as server-everything does it): POST without a session id must be an
// initialize and opens a session; a known id is routed to its transport; an
// unknown one is 404, so a client knows to open a new session. Used by the
// demo server and by the tests' own MCP servers.
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { Express, Request, Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

export interface McpSessionOptions {
  /** A new MCP server for a new session. */
  build(): { connect(transport: Transport): Promise<void> };
  /** Called with each session's transport before its server connects (tests instrument it). */
  onTransport?(transport: StreamableHTTPServerTransport): void;
  onOpen?(sessionId: string): void;
  onClose?(sessionId: string): void;
}

/** A JSON-RPC error answer outside any request (no id). */
export const rpcError = (res: Response, status: number, message: string) => {
  res.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
};

/** Mounts POST, GET and DELETE of `path`; returns the open sessions. */
export function mountMcpSessions(
  app: Express,
  path: string,
  opts: McpSessionOptions,
): Map<string, StreamableHTTPServerTransport> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  app.post(path, async (req: Request, res: Response) => {
    const sid = req.header('mcp-session-id');
    let transport = sid ? sessions.get(sid) : undefined;
    if (sid && !transport) return rpcError(res, 404, 'Session not found');
    if (!transport) {
      if (!isInitializeRequest(req.body))
        return rpcError(res, 400, 'Bad Request: no session id and not an initialize request');
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        // Stored once the id exists, before the initialize answer leaves: the client's next request finds it.
        onsessioninitialized: (id) => {
          sessions.set(id, t);
          opts.onOpen?.(id);
        },
      });
      opts.onTransport?.(t);
      t.onclose = () => {
        if (t.sessionId && sessions.delete(t.sessionId)) opts.onClose?.(t.sessionId);
      };
      await opts.build().connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res, req.body);
  });
  // GET (the server-to-client stream) and DELETE (end of session) need a known session.
  const existing = async (req: Request, res: Response) => {
    const sid = req.header('mcp-session-id');
    const transport = sid ? sessions.get(sid) : undefined;
    if (!transport) return rpcError(res, sid ? 404 : 400, sid ? 'Session not found' : 'Bad Request: no session id');
    await transport.handleRequest(req, res);
  };
  app.get(path, existing);
  app.delete(path, existing);
  return sessions;
}

/** Ends every session (their running handlers see their signal abort), then the HTTP server. */
export async function closeMcpServer(
  server: http.Server,
  sessions: Map<string, StreamableHTTPServerTransport>,
): Promise<void> {
  await Promise.allSettled([...sessions.values()].map((t) => t.close()));
  sessions.clear();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    // Keep-alive and open SSE connections would otherwise hold close() open.
    server.closeAllConnections();
  });
}
