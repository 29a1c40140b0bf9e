// The bench's datastores phase: what a named query tool costs over the bare
// query. The sample SQLite database (examples/shop.db) is uploaded once; each
// run is one task whose agent calls the named query customer_city once. Per call,
// from the callDatastore activity's result in the task's history:
//   overhead = callMs (the whole activity: registration lookup, reader, formatting, publishing the result)
//            - queryMs (the bare query, timed by the SQLite reader from the statement to the last row).
// Both are the worker's clocks; callMs is whole ms, so a sample is good to about 0.5 ms.
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { codecDataConverter, codecFromKeys } from '../src/codec/data-converter';
import type { CallDatastoreOutput } from '../activities/datastores';
import { request, target } from './bench-http';
import { Row } from './bench-report';
import { summarize } from './bench-stats';

export const DATASTORE_LABEL = 'Datastore named query: tool call overhead over the bare query (callMs - queryMs)';
export const DATASTORE_TARGET_P99_MS = 10;
const SAMPLE_DB = path.join(__dirname, '..', 'examples', 'shop.db');

export interface DatastorePhaseInput {
  gatewayUrl: string;
  apiKey: string;
  temporalAddress: string;
  /** The stack's PAYLOAD_KEYS: activity results in the history are encrypted. */
  payloadKeys: string;
  runs: number;
  quiet: () => Promise<unknown>;
  left: () => number;
  log: (line: string) => void;
}

export async function runDatastorePhase(inp: DatastorePhaseInput): Promise<Row[]> {
  const api = target(inp.gatewayUrl, inp.apiKey, 1);
  const codec = codecFromKeys(inp.payloadKeys);
  const connection = await Connection.connect({ address: inp.temporalAddress });
  const temporal = new Client({ connection, dataConverter: codecDataConverter(codec) });
  const samples: number[] = [];
  const queryMs: number[] = [];
  const activityMs: number[] = [];
  let errors = 0;
  try {
    const form = new FormData();
    form.append('name', 'shop');
    form.append('file', new Blob([fs.readFileSync(SAMPLE_DB)], { type: 'application/vnd.sqlite3' }), 'shop.db');
    const up = await fetch(new URL('/datastores', inp.gatewayUrl), { method: 'POST', headers: { authorization: `Bearer ${inp.apiKey}` }, body: form });
    const ds = (await up.json()) as { id?: string };
    if (up.status !== 201 || !ds.id) throw new Error(`uploading ${SAMPLE_DB}: ${up.status} ${JSON.stringify(ds)}`);
    const run = {
      datastores: [{ id: ds.id, name: 'shop' }],
      queries: [{ name: 'customer_city', description: 'The city of a customer by name', query: 'SELECT city FROM customers WHERE name = ?' }],
    };
    // Run 0 is an unmeasured warm-up (it starts the SQLite reader).
    for (let i = 0; i <= inp.runs && inp.left() > 0; i++) {
      await inp.quiet();
      const message = `[[tool name=customer_city args={"p1":"Ada"}]] where does Ada live? (dsbench ${i})`;
      const r = await request(api, 'POST', '/', { message, ...run }, { timeoutMs: 60_000 }).catch((err: Error) => ({ status: 0, body: err.message }));
      const taskId = /"task_id":"(task_[A-Za-z0-9]+)"/.exec(r.body)?.[1];
      if (r.status !== 200 || !/"status":"completed"/.test(r.body) || !r.body.includes('London') || !taskId) {
        errors++;
        continue;
      }
      if (i === 0) continue;
      const events = (await temporal.workflow.getHandle(taskId).fetchHistory()).events ?? [];
      // Event ids and times are Long: compared and converted through their text.
      const scheduled = new Map(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callDatastore').map((e) => [String(e.eventId), e]));
      const completed = events.filter((e) => scheduled.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId)));
      if (completed.length !== 1) {
        errors++;
        continue;
      }
      const done = completed[0];
      const [payload] = await codec.decode([done.activityTaskCompletedEventAttributes!.result!.payloads![0]]);
      const out = defaultPayloadConverter.fromPayload<CallDatastoreOutput>(payload);
      if (out.isError || out.queryMs === undefined) {
        errors++;
        continue;
      }
      samples.push(out.callMs - out.queryMs);
      queryMs.push(out.queryMs);
      const at = (e: (typeof events)[number]) => Number(String(e.eventTime!.seconds)) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6;
      activityMs.push(at(done) - at(scheduled.get(String(done.activityTaskCompletedEventAttributes!.scheduledEventId))!));
    }
  } finally {
    await connection.close();
  }
  const q = summarize(queryMs);
  const a = summarize(activityMs);
  inp.log(`datastores: ${samples.length} named-query calls over ${inp.runs} runs, ${errors} errors; bare query p50 ${q.p50.toFixed(2)} / p99 ${q.p99.toFixed(2)} ms; activity scheduled -> completed (engine) p50 ${a.p50.toFixed(1)} / p99 ${a.p99.toFixed(1)} ms`);
  return [{ label: DATASTORE_LABEL, concurrency: '1 run', s: summarize(samples), errors, targetP99: DATASTORE_TARGET_P99_MS }];
}
