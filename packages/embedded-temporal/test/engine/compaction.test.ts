// Compaction of the durable log runs alongside the engine's own writes: while a
// snapshot of open, closed and archived runs is written out, workflows keep
// starting and closing, and after a restart every run is exactly what it was.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { startDevServer, DevServer } from '../../src/server';
import type { FileStore } from '../../src/storage/store';
import * as activities from '../conformance/activities/basics';
import { greet, counter, doneSignal, totalQuery, addSignal } from '../conformance/workflows/basics';

// A unit test, but a heavy one: a busy engine in this process compacting its log again and again (about 7 s alone on two cores); more than the unit project's 10 s.
jest.setTimeout(60_000);

jest.setTimeout(120_000);
const logger = pino({ level: 'silent' });
let dir: string;
let bundle: Awaited<ReturnType<typeof bundleWorkflowCode>>;

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compaction-'));
  bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../conformance/workflows/basics'),
    logger: new DefaultLogger('ERROR'),
  });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function withServer<T>(fn: (s: DevServer, client: Client, worker: Worker) => Promise<T>): Promise<T> {
  // A small threshold so the log is compacted many times during the test.
  const server = await startDevServer({
    port: 0,
    dbFilename: path.join(dir, 'db'),
    maxClosedInMemory: 5,
    compactMinBytes: 32 * 1024,
    logger,
  });
  const address = `127.0.0.1:${server.port}`;
  const connection = await Connection.connect({ address });
  const native = await NativeConnection.connect({ address });
  try {
    const worker = await Worker.create({
      connection: native,
      taskQueue: 'compaction',
      workflowBundle: bundle,
      activities,
    });
    return await worker.runUntil(fn(server, new Client({ connection }), worker));
  } finally {
    await native.close();
    await connection.close();
    await server.close();
  }
}

const eventTypes = async (client: Client, id: string) =>
  (await client.workflow.getHandle(id).fetchHistory()).events!.map((e) => e.eventType);

test('compactions during a busy run lose and duplicate nothing, and a restart recovers every run', async () => {
  const histories = new Map<string, unknown[]>();
  await withServer(async (server, client) => {
    const store = server.engine.store as FileStore;
    // Open runs whose history keeps growing while compactions happen.
    const counters = await Promise.all(
      [0, 1, 2].map((i) => client.workflow.start(counter, { taskQueue: 'compaction', workflowId: `c-${i}` })),
    );
    for (let round = 0; round < 12; round++) {
      await Promise.all(
        Array.from({ length: 5 }, (_, k) =>
          client.workflow.execute(greet, {
            args: [`${round}-${k}`],
            taskQueue: 'compaction',
            workflowId: `g-${round}-${k}`,
          }),
        ),
      );
      for (const c of counters) await c.signal(addSignal, round);
    }
    expect(store.stats.rewrites).toBeGreaterThanOrEqual(2);
    // Some closed runs were archived, so the snapshots read them from the archive file.
    expect(server.engine.archive!.count).toBeGreaterThan(30);
    await counters[0].signal(doneSignal);
    expect(await counters[0].result()).toBe(66);
    for (const id of ['c-0', 'c-1', 'c-2', 'g-0-0', 'g-5-3', 'g-11-4']) histories.set(id, await eventTypes(client, id));
  });
  await withServer(async (_server, client) => {
    for (const [id, types] of histories) expect(await eventTypes(client, id)).toEqual(types);
    expect(await client.workflow.getHandle('g-7-2').result()).toBe('hello 7-2');
    expect((await client.workflow.count("WorkflowType = 'greet'")).count).toBe(60);
    // The open runs go on where they were.
    const c1 = client.workflow.getHandle('c-1');
    expect(await c1.query(totalQuery)).toBe(66);
    await c1.signal(addSignal, 1);
    await c1.signal(doneSignal);
    expect(await c1.result()).toBe(67);
  });
});
