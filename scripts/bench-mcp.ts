// The bench's MCP phase: what a run adds to an MCP tool call, against a direct
// SDK client calling the same server in the same run. The MCP server
// (test/mcp/fixtures/bearer-server.ts) and the scripted model both run in the
// bench process, so their timestamps share one clock (epoch ms):
//   overhead = (tools/call arrives at the server - the model's tool-call message was written)
//            + (the next model request arrives - the server answered).
// Each run makes MCP_ROUNDS sequential echo calls ([[tool rounds=N]]); the k-th
// call's arrival and answer go with the k-th tool-call message and request k+1.
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ScriptedModel } from '../src/scripted-model';
import { startBearerMcpServer } from '../test/mcp/fixtures/bearer-server';
import { request, target } from './bench-http';
import { MCP_OVER_DIRECT_MS, MCP_ROUNDS as ROUNDS, Row } from './bench-report';
import { fmtMs, summarize } from './bench-stats';

export const MCP_LABEL = 'MCP tool call overhead: model -> server + answer -> model';
export const DIRECT_MCP_LABEL = 'baseline: direct MCP client call (SDK, same server)';
const TOKEN = 'bench-mcp-token-0123456789';
const epochNow = () => performance.timeOrigin + performance.now();

/** Fed by the scripted model's onTokenWritten hook: when each tool-call message's last delta was written (epoch ms). */
export class ToolCallClock {
  ends: number[] = [];
  on = false;
  onDelta(delta: Record<string, unknown>): void {
    const calls = delta.tool_calls as { id?: string }[] | undefined;
    if (!this.on || !Array.isArray(calls)) return;
    // A call's first delta carries its id; its argument deltas follow, then at once finish_reason and [DONE].
    if (calls[0]?.id !== undefined) this.ends.push(epochNow());
    else this.ends[this.ends.length - 1] = epochNow();
  }
}

export interface McpPhaseInput {
  gatewayUrl: string;
  apiKey: string;
  model: ScriptedModel;
  clock: ToolCallClock;
  /** Tool calls measured (rounded up to whole runs of ROUNDS calls), and as many direct calls. */
  calls: number;
  /** Waits for the stack to settle; called before each run. */
  quiet: () => Promise<unknown>;
  left: () => number;
  log: (line: string) => void;
}

export async function runMcpPhase(inp: McpPhaseInput): Promise<Row[]> {
  const server = await startBearerMcpServer({ token: TOKEN });
  const api = target(inp.gatewayUrl, inp.apiKey, 1);
  const client = new Client({ name: 'bench-direct', version: '1.0.0' });
  const toServer: number[] = [];
  const toModel: number[] = [];
  const overhead: number[] = [];
  const direct: number[] = [];
  let errors = 0;
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
    const runs = Math.ceil(inp.calls / ROUNDS);
    // Run -1 is an unmeasured warm-up of both paths (the worker's pooled session, JIT).
    for (let i = -1; i < runs && inp.left() > 0; i++) {
      await inp.quiet();
      const tag = `mcpbench${String(i + 1).padStart(4, '0')}`;
      server.reset();
      inp.clock.ends = [];
      inp.clock.on = true;
      const r = await request(
        api,
        'POST',
        '/',
        { message: `[[tool name=echo rounds=${ROUNDS} args={"text":"${tag} r{{round}}"}]] ${tag}`, mcp_servers: [{ serverName: 'bench', serverUrl: server.url, auth: { type: 'bearer', token: TOKEN } }] },
        { timeoutMs: 60_000 },
      ).catch((err: Error) => ({ status: 0, body: err.message }));
      inp.clock.on = false;
      const { toolCallArrivals: arrivals, answers } = server.stats();
      const ends = inp.clock.ends;
      const requests = inp.model.received().filter((q) => JSON.stringify(q.body.messages).includes(tag)).map((q) => q.at);
      const ok = r.status === 200 && /"status":"completed"/.test(r.body);
      if (!ok || arrivals.length !== ROUNDS || answers.length !== ROUNDS || ends.length !== ROUNDS || requests.length !== ROUNDS + 1) {
        inp.log(`mcp run ${i + 1}: HTTP ${r.status}, ${arrivals.length} arrivals, ${answers.length} answers, ${ends.length} tool-call messages, ${requests.length} model requests (want ${ROUNDS}, ${ROUNDS}, ${ROUNDS}, ${ROUNDS + 1}): ${r.body.slice(0, 200)}`);
        if (i >= 0) errors += ROUNDS;
      } else if (i >= 0) {
        for (let k = 0; k < ROUNDS; k++) {
          toServer.push(arrivals[k] - ends[k]);
          toModel.push(requests[k + 1] - answers[k]);
          overhead.push(toServer[toServer.length - 1] + toModel[toModel.length - 1]);
        }
      }
      // As many direct calls, right after the run, through the same code.
      for (let k = 0; k < ROUNDS; k++) {
        const t0 = performance.now();
        await client.callTool({ name: 'echo', arguments: { text: `${tag} direct ${k}` } });
        if (i >= 0) direct.push(performance.now() - t0);
      }
    }
  } finally {
    api.agent.destroy();
    await client.close().catch(() => undefined);
    await server.close();
  }
  const d = summarize(direct);
  const rows: Row[] = [
    { label: MCP_LABEL, concurrency: '1', s: summarize(overhead), errors, targetP99: Math.round((d.p99 + MCP_OVER_DIRECT_MS) * 100) / 100 },
    { label: '  of which: tool-call message -> tools/call at the server', concurrency: '1', s: summarize(toServer), errors: 0 },
    { label: "  of which: server's answer -> next model request", concurrency: '1', s: summarize(toModel), errors: 0 },
    { label: DIRECT_MCP_LABEL, concurrency: '1', s: d, errors: 0 },
  ];
  inp.log(`mcp: overhead p50=${fmtMs(rows[0].s.p50)} p99=${fmtMs(rows[0].s.p99)} ms, direct p50=${fmtMs(d.p50)} p99=${fmtMs(d.p99)} ms (n=${overhead.length}/${direct.length}, errors=${errors})`);
  return rows;
}
