// Test helper: the reference MCP server (@modelcontextprotocol/server-everything)
// as a child process, over Streamable HTTP (/mcp) or the legacy SSE transport
// (/sse + /message).
//
// It listens on every interface (Express's app.listen(PORT)); tests connect to
// 127.0.0.1, which that covers. Its env is only PATH and PORT: its get-env tool
// prints the environment, which must not carry this process's secrets.
import net from 'node:net';
import path from 'node:path';
import { Child, freePort, ROOT, startChild, waitFor } from '../../src/dev/launcher/processes';

export type EverythingTransport = 'streamableHttp' | 'sse';

export interface Everything {
  /** http://127.0.0.1:PORT/mcp (streamableHttp) or http://127.0.0.1:PORT/sse (sse). */
  url: string;
  port: number;
  /** Its stdout and stderr so far (it logs every request), for failure messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after a short grace. */
  stop(): Promise<void>;
}

const ENTRY = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
// What each transport prints once app.listen() has bound the port.
const LISTENING = /listening on port|Server is running on port/;
const ATTEMPTS = 3;

function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export async function startEverything(
  transport: EverythingTransport,
  opts: { echo?: (line: string) => void } = {},
): Promise<Everything> {
  let lastError: unknown;
  // freePort() reserves nothing: another process may take the port before
  // the child binds it. The child then exits (EADDRINUSE) and we try another.
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const port = await freePort();
    const child: Child = startChild(`server-everything-${transport}`, process.execPath, [ENTRY, transport], {
      env: { PATH: process.env.PATH ?? '', PORT: String(port) },
      echo: opts.echo,
    });
    try {
      // The log line proves that *this* child bound the port, the connect that it accepts on 127.0.0.1.
      await waitFor(
        `server-everything ${transport}`,
        child,
        async () => LISTENING.test(child.output()) && (await tcpOpen(port)),
        30_000,
      );
    } catch (err) {
      lastError = err;
      await child.stop('SIGKILL');
      continue;
    }
    return {
      url: `http://127.0.0.1:${port}/${transport === 'sse' ? 'sse' : 'mcp'}`,
      port,
      output: () => child.output(),
      stop: () => child.stop('SIGTERM', 3000),
    };
  }
  throw lastError;
}
