// The demo servers `npm start` runs in its own process: the MCP server with
// time and arithmetic tools, and the web site with its SearXNG-style search that web_search uses
// when no provider is configured. Both are on loopback, which the outbound policy refuses unless
// allowed: with OUTBOUND_ALLOWLIST unset, the stack allows 127.0.0.1 for them.
import { DEMO_MCP_TOOLS, startDemoMcpServer } from '../demo-mcp/server';
import { startDemoWebServer } from '../demo-web/server';
import type { Stack, Starting } from './stack';

/** The demo MCP server (DEMO_MCP_PORT), in process, and the outbound policy opened to it. */
export async function startDemoMcp(st: Starting, env: NodeJS.ProcessEnv): Promise<Stack['demoMcp']> {
  const spec = { variable: 'DEMO_MCP', fallback: 8790, given: st.opts.demoMcpPort, what: 'demo MCP server' };
  const demoMcp = await startDemoServer(st, spec, (port) => startDemoMcpServer({ port }));
  st.log(`demo MCP server at ${demoMcp.url} (tools: ${DEMO_MCP_TOOLS.join(', ')})`);
  allowLoopback(st, env, 'the demo MCP server');
  return demoMcp;
}

/** The demo web site (DEMO_WEB_PORT), in process, as web_search's provider unless one is configured. */
export async function startDemoWeb(st: Starting, env: NodeJS.ProcessEnv): Promise<string> {
  const { base, log } = st;
  const spec = { variable: 'DEMO_WEB', fallback: 8791, given: st.opts.demoWebPort, what: 'demo web site' };
  const site = await startDemoServer(st, spec, (port) => startDemoWebServer({ port }));
  log(`demo web site at ${site.url} (articles, and a SearXNG-style search at /search)`);
  if (base.WEB_SEARCH_PROVIDER === undefined) {
    env.WEB_SEARCH_PROVIDER = 'searxng';
    env.WEB_SEARCH_URL = site.url;
    log('WEB_SEARCH_PROVIDER unset: web_search searches the demo web site');
  }
  allowLoopback(st, env, 'the demo web site');
  return site.url;
}

/**
 * One of the stack's demo servers on its port (`given`, else `<variable>_PORT`, else `fallback`),
 * stopped with the stack; a failure to start names both fixes (another port, or going without).
 */
async function startDemoServer<T extends { close(): Promise<void> }>(
  st: Starting,
  d: { variable: string; fallback: number; given?: number; what: string },
  start: (port: number) => Promise<T>,
): Promise<T> {
  const raw = st.base[`${d.variable}_PORT`];
  const port = d.given ?? Number(raw || d.fallback);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`${d.variable}_PORT must be a port number, got ${raw}`);
  const server = await start(port).catch((err: Error) => {
    throw new Error(
      `${d.what} could not start on port ${port} (${err.message}); set ${d.variable}_PORT, or ${d.variable}=false to go without it`,
    );
  });
  st.stoppers.unshift(() => server.close());
  return server;
}

/** The outbound policy refuses loopback addresses; without this the service could not reach its own demo servers. */
function allowLoopback(st: Starting, env: NodeJS.ProcessEnv, what: string): void {
  const { base, log } = st;
  if (base.OUTBOUND_ALLOWLIST !== undefined || env.OUTBOUND_ALLOWLIST !== undefined) return;
  env.OUTBOUND_ALLOWLIST = '127.0.0.1';
  log(`OUTBOUND_ALLOWLIST unset: allowing 127.0.0.1 (loopback) so runs can reach ${what}`);
  // With loopback allowed, a command given network could reach Redis, the engine and the gateway.
  if (base.SANDBOX_NETWORK === undefined) {
    env.SANDBOX_NETWORK = 'off';
    log('SANDBOX_NETWORK unset: off, as loopback is allowed (set OUTBOUND_ALLOWLIST to give commands network)');
  }
}
