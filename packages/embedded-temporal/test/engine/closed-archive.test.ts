// Closed runs beyond the in-memory limit move to the archive file and come back
// on demand: describe, history, list/count, queries and replay still work, and
// after a restart everything is still there (the durable log is the truth).
import { CLOSED_IN_MEMORY_KEY } from '../../src/engine/limits';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { startDevServer, DevServer } from '../../src/server';
import * as activities from '../conformance/activities/basics';
import { greet, counter, doneSignal, totalQuery, addSignal } from '../conformance/workflows/basics';

// A unit test, but a heavy one: whole engines in this process, thousands of runs closed, archived and read back (about 10 s alone on two cores); more than the unit project's 10 s.
jest.setTimeout(60_000);

jest.setTimeout(120_000);
const logger = pino({ level: 'silent' });
let dir: string;

beforeAll(() => {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function withServer<T>(
  fn: (s: DevServer, client: Client, run: <R>(f: () => Promise<R>) => Promise<R>) => Promise<T>,
): Promise<T> {
  // The bound as a deployment sets it: the command line's --dynamic-config-value embedded.maxClosedRunsInMemory=3.
  const dynamicConfig = { [CLOSED_IN_MEMORY_KEY]: 3 };
  const server = await startDevServer({ port: 0, dbFilename: path.join(dir, 'db'), dynamicConfig, logger });
  const address = `127.0.0.1:${server.port}`;
  const connection = await Connection.connect({ address });
  const native = await NativeConnection.connect({ address });
  const bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../conformance/workflows/basics'),
    logger: new DefaultLogger('ERROR'),
  });
  try {
    const run = async <R>(f: () => Promise<R>) => {
      const worker = await Worker.create({
        connection: native,
        taskQueue: 'archive',
        workflowBundle: bundle,
        activities,
      });
      return worker.runUntil(f);
    };
    return await fn(server, new Client({ connection }), run);
  } finally {
    await native.close();
    await connection.close();
    await server.close();
  }
}

test('closed runs leave memory and come back on demand, also after a restart', async () => {
  await withServer(async (server, client, run) => {
    await run(async () => {
      for (let i = 0; i < 10; i++)
        await client.workflow.execute(greet, { args: [`n${i}`], taskQueue: 'archive', workflowId: `g-${i}` });
      const h = await client.workflow.start(counter, { taskQueue: 'archive', workflowId: 'counter' });
      await h.signal(addSignal, 7);
      await h.signal(doneSignal);
      await h.result();
      await client.workflow.execute(greet, { args: ['last'], taskQueue: 'archive', workflowId: 'g-last' });
      await client.workflow.execute(greet, { args: ['last2'], taskQueue: 'archive', workflowId: 'g-last2' });
      await client.workflow.execute(greet, { args: ['last3'], taskQueue: 'archive', workflowId: 'g-last3' });
      const engine = server.engine;
      expect(engine.archive!.count).toBeGreaterThanOrEqual(9);
      expect([...engine.executions.values()].filter((e) => e.closeTime !== undefined).length).toBeLessThanOrEqual(4);
      // An archived run answers describe, history, queries (needs its history), and replays.
      expect((await client.workflow.getHandle('g-0').describe()).status.name).toBe('COMPLETED');
      expect(await client.workflow.getHandle('g-0').result()).toBe('hello n0');
      expect(await client.workflow.getHandle('counter').query(totalQuery)).toBe(7);
      await Worker.runReplayHistory(
        {
          workflowBundle: await bundleWorkflowCode({
            workflowsPath: require.resolve('../conformance/workflows/basics'),
            logger: new DefaultLogger('ERROR'),
          }),
        },
        await client.workflow.getHandle('g-1').fetchHistory(),
      );
      // List and count see archived runs too.
      const listed: string[] = [];
      for await (const x of client.workflow.list({ query: "WorkflowType = 'greet'" })) listed.push(x.workflowId);
      expect(listed.sort()).toEqual(
        [...Array.from({ length: 10 }, (_, i) => `g-${i}`), 'g-last', 'g-last2', 'g-last3'].sort(),
      );
      expect((await client.workflow.count("ExecutionStatus = 'Completed'")).count).toBe(14);
    });
  });
  await withServer(async (server, client) => {
    // Recovered closed runs are archived again, not all kept in memory.
    expect([...server.engine.executions.values()].filter((e) => e.closeTime !== undefined).length).toBeLessThanOrEqual(
      3,
    );
    expect(server.engine.archive!.count).toBeGreaterThanOrEqual(11);
    expect(await client.workflow.getHandle('g-3').result()).toBe('hello n3');
    expect((await client.workflow.count('')).count).toBe(14);
  });
});
