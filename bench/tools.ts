// The tool phases: what a run adds to an MCP tool call, and what a named
// datastore query costs over the bare query.
//
// MCP: the MCP server (test/mcp/fixtures/bearer-server.ts) and the scripted
// model both run in the bench process, so their stamps share one clock (epoch ms):
//   per call = (tools/call arrives at the server - the model's tool-call message was written)
//            + (the next model request arrives - the server answered).
// Each run makes MCP_ROUNDS sequential echo calls ([[tool rounds=N]]); the k-th
// call's arrival and answer go with the k-th tool-call message and request k+1.
// After each run: as many direct SDK calls to the same server, and a floor run
// (dag.ts) of as many calls, judged together: p99 <= FLOOR_RATIO x the floor's.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Client as TemporalClient } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { CallDatastoreOutput } from '../activities/datastores';
import { codecFromKeys } from '../src/common/codec/data-converter';
import { startBearerMcpServer, type BearerMcpServer } from '../test/mcp/fixtures/bearer-server';
import { MCP_FLOOR_LABEL } from './dag';
import { completedTaskId, epochNow, fmtMs, summarize } from './measure';
import { judgeAgainstFloor, Row, rowOf, TARGETS } from './report';
import type { Bench } from './stack';

export const MCP_ROUNDS = 20;
export const MCP_LABEL = 'MCP tool call overhead: model -> server + answer -> model';
export const DIRECT_MCP_LABEL = 'baseline: direct MCP client call (SDK, same server)';
export const DATASTORE_LABEL = 'Datastore named query: tool call overhead over the bare query (callMs - queryMs)';
const TOKEN = 'bench-mcp-token-0123456789';
const SAMPLE_DB = path.join(__dirname, '..', 'examples', 'shop.db');

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

interface McpSamples {
  toServer: number[];
  toModel: number[];
  direct: number[];
  floor: number[];
  errors: number;
}

/** One run through the service: its calls' two legs, or undefined (logged) when it went wrong. */
async function mcpRun(
  b: Bench,
  server: BearerMcpServer,
  tag: string,
): Promise<{ toServer: number[]; toModel: number[] } | undefined> {
  server.reset();
  b.mcpClock.ends = [];
  b.mcpClock.on = true;
  const message = `[[tool name=echo rounds=${MCP_ROUNDS} args={"text":"${tag} r{{round}}"}]] ${tag}`;
  const body = {
    message,
    mcp_servers: [{ serverName: 'bench', serverUrl: server.url, auth: { type: 'bearer', token: TOKEN } }],
  };
  const r = await b.post(body, 60_000);
  b.mcpClock.on = false;
  const { toolCallArrivals: arrivals, answers } = server.stats();
  const ends = b.mcpClock.ends;
  const requests = b.model
    .received()
    .filter((q) => JSON.stringify(q.body.messages).includes(tag))
    .map((q) => q.at);
  if (
    !completedTaskId(r) ||
    arrivals.length !== MCP_ROUNDS ||
    answers.length !== MCP_ROUNDS ||
    ends.length !== MCP_ROUNDS ||
    requests.length !== MCP_ROUNDS + 1
  ) {
    const got = `${arrivals.length} arrivals, ${answers.length} answers, ${ends.length} tool-call messages, ${requests.length} model requests`;
    b.log(
      `mcp ${tag}: HTTP ${r.status}, ${got} (want ${MCP_ROUNDS}, ${MCP_ROUNDS}, ${MCP_ROUNDS}, ${MCP_ROUNDS + 1}): ${r.body.slice(0, 200)}`,
    );
    return undefined;
  }
  const k = Array.from({ length: MCP_ROUNDS }, (_, i) => i);
  return { toServer: k.map((i) => arrivals[i] - ends[i]), toModel: k.map((i) => requests[i + 1] - answers[i]) };
}

/** Runs of MCP_ROUNDS calls through the service, each followed by as many direct calls and a floor run of as many calls. */
async function mcpSamples(b: Bench, server: BearerMcpServer, client: Client): Promise<McpSamples> {
  const out: McpSamples = { toServer: [], toModel: [], direct: [], floor: [], errors: 0 };
  const floor = await b.floor();
  // Run -1 is an unmeasured warm-up of every path (the worker's pooled session, JIT, the floor worker's first workflows).
  for (let i = -1; i < Math.ceil(b.opts.mcpCalls / MCP_ROUNDS) && b.left() > 0; i++) {
    const tag = `mcpbench${String(i + 1).padStart(4, '0')}`;
    await b.quiet();
    const run = await mcpRun(b, server, tag);
    if (i >= 0 && !run) out.errors += MCP_ROUNDS;
    if (i >= 0 && run) {
      out.toServer.push(...run.toServer);
      out.toModel.push(...run.toModel);
    }
    for (let k = 0; k < MCP_ROUNDS; k++) {
      const t0 = epochNow();
      await client.callTool({ name: 'echo', arguments: { text: `${tag} direct ${k}` } });
      if (i >= 0) out.direct.push(epochNow() - t0);
    }
    await b.quiet();
    const f = await floor
      .toolCalls(tag, MCP_ROUNDS)
      .catch((err: Error) => void b.log(`mcp floor ${tag}: ${err.message}`));
    if (i >= 0) out.floor.push(...(f ?? []));
  }
  return out;
}

export async function mcpPhase(b: Bench): Promise<Row[]> {
  const server = await startBearerMcpServer({ token: TOKEN });
  const client = new Client({ name: 'bench-direct', version: '1.0.0' });
  let s: McpSamples;
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    s = await mcpSamples(b, server, client);
  } finally {
    await client.close().catch(() => undefined);
    await server.close();
  }
  const row = (label: string, v: number[], errors = 0) => rowOf(label, '1', v, { errors });
  const floor = row(MCP_FLOOR_LABEL, s.floor);
  const calls = s.toServer.map((x, i) => x + s.toModel[i]);
  const overhead = judgeAgainstFloor(row(MCP_LABEL, calls, s.errors), floor);
  const direct = row(DIRECT_MCP_LABEL, s.direct);
  b.log(
    `mcp: overhead p50=${fmtMs(overhead.s.p50)} p99=${fmtMs(overhead.s.p99)} ms, floor p50=${fmtMs(floor.s.p50)} p99=${fmtMs(floor.s.p99)} ms, direct p99=${fmtMs(direct.s.p99)} ms (n=${overhead.s.count}/${floor.s.count}/${direct.s.count}, errors=${s.errors})`,
  );
  return [
    overhead,
    row('  of which: tool-call message -> tools/call at the server', s.toServer),
    row("  of which: server's answer -> next model request", s.toModel),
    floor,
    direct,
  ];
}

// ---- datastores -----------------------------------------------------------------------

/**
 * examples/shop.db uploaded once; each run one task whose agent calls the named
 * query customer_city once. Per call, from the callDatastore activity's result
 * in the task's history: callMs (the whole activity: registration lookup,
 * reader, formatting, publishing the result) - queryMs (the bare query, timed
 * by the SQLite reader from the statement to the last row). The worker's clocks.
 */
export async function datastoresPhase(b: Bench): Promise<Row[]> {
  const codec = codecFromKeys(b.stack.env.PAYLOAD_KEYS!);
  const temporal = await b.temporal();
  const samples: number[] = [];
  const queryMs: number[] = [];
  let errors = 0;
  const run = {
    datastores: [{ id: await uploadSampleDb(b), name: 'shop' }],
    queries: [
      {
        name: 'customer_city',
        description: 'The city of a customer by name',
        query: 'SELECT city FROM customers WHERE name = ?',
      },
    ],
  };
  // Run 0 is an unmeasured warm-up (it starts the SQLite reader).
  for (let i = 0; i <= b.opts.datastoreRuns && b.left() > 0; i++) {
    await b.quiet();
    const message = `[[tool name=customer_city args={"p1":"Ada"}]] where does Ada live? (dsbench ${i})`;
    const r = await b.post({ message, ...run }, 60_000);
    const taskId = r.body.includes('London') ? completedTaskId(r) : undefined;
    const out = taskId ? await datastoreCall(temporal, codec, taskId) : undefined;
    if (!out || out.isError || out.queryMs === undefined) errors++;
    else if (i > 0) {
      samples.push(out.callMs - out.queryMs);
      queryMs.push(out.queryMs);
    }
  }
  const q = summarize(queryMs);
  b.log(
    `datastores: ${samples.length} named-query calls over ${b.opts.datastoreRuns} runs, ${errors} errors; bare query p50 ${q.p50.toFixed(2)} / p99 ${q.p99.toFixed(2)} ms`,
  );
  return [rowOf(DATASTORE_LABEL, '1 run', samples, { errors, targetP99: TARGETS.datastore })];
}

async function uploadSampleDb(b: Bench): Promise<string> {
  const form = new FormData();
  form.append('name', 'shop');
  form.append('file', new Blob([fs.readFileSync(SAMPLE_DB)], { type: 'application/vnd.sqlite3' }), 'shop.db');
  const up = await fetch(new URL('/datastores', b.gatewayUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${b.apiKey}` },
    body: form,
  });
  const ds = (await up.json()) as { id?: string };
  if (up.status !== 201 || !ds.id) throw new Error(`uploading ${SAMPLE_DB}: ${up.status} ${JSON.stringify(ds)}`);
  return ds.id;
}

/** The task's one callDatastore result, decoded with the stack's payload keys; undefined unless there is exactly one. */
async function datastoreCall(
  temporal: TemporalClient,
  codec: ReturnType<typeof codecFromKeys>,
  taskId: string,
): Promise<CallDatastoreOutput | undefined> {
  const events = (await temporal.workflow.getHandle(taskId).fetchHistory()).events ?? [];
  // Event ids are Long: compared through their text.
  const scheduled = new Set(
    events
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callDatastore')
      .map((e) => String(e.eventId)),
  );
  const completed = events.filter((e) =>
    scheduled.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)),
  );
  if (completed.length !== 1) return undefined;
  const [payload] = await codec.decode([completed[0].activityTaskCompletedEventAttributes!.result!.payloads![0]]);
  return defaultPayloadConverter.fromPayload<CallDatastoreOutput>(payload);
}
