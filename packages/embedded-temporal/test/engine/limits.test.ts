// The embedded engine's side of the limits (the behaviour itself is in the conformance
// suite, on both engines): dynamic-config parsing, the warnings in the server's log,
// and a run whose single change jumps from far below the count limit to past it.
import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createLogger } from '../../src/logger';
import { startDevServer, DevServer } from '../../src/server';
import {
  CLOSED_IN_MEMORY_KEY,
  closedInMemoryFromDynamicConfig,
  DEFAULT_LIMITS,
  limitsFromDynamicConfig,
  truncateFailure,
} from '../../src/engine/limits';
import { parseArgs } from '../../src/cli-args';

const CT = temporal.api.enums.v1.CommandType;
const ET = temporal.api.enums.v1.EventType;

describe('limits from --dynamic-config-value', () => {
  test('the real server defaults, overridden by the same keys', () => {
    expect(DEFAULT_LIMITS).toMatchObject({
      blobSizeError: 2 * 1024 * 1024,
      blobSizeWarn: 512 * 1024,
      historyCountError: 51_200,
      historySizeError: 50 * 1024 * 1024,
    });
    const args = parseArgs([
      'server',
      'start-dev',
      '--dynamic-config-value',
      'limit.historyCount.error=50',
      '--dynamic-config-value',
      'limit.blobSize.error=1000',
    ]);
    expect(limitsFromDynamicConfig(args.dynamicConfig)).toMatchObject({
      historyCountError: 50,
      blobSizeError: 1000,
      blobSizeWarn: 512 * 1024,
    });
  });

  test('a value that is no integer keeps the default and says so', () => {
    const lines: string[] = [];
    const logger = createLogger({ format: 'json', destination: { write: (s: string) => lines.push(s) } });
    expect(limitsFromDynamicConfig({ 'limit.historySize.error': 'big' }, logger).historySizeError).toBe(
      50 * 1024 * 1024,
    );
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'WARN', key: 'limit.historySize.error', value: 'big' });
  });
});

test('the closed runs kept in memory: from its dynamic config key, a whole number; anything else keeps the default', () => {
  const args = parseArgs(['server', 'start-dev', '--dynamic-config-value', `${CLOSED_IN_MEMORY_KEY}=250`]);
  expect(closedInMemoryFromDynamicConfig(args.dynamicConfig)).toBe(250);
  expect(closedInMemoryFromDynamicConfig({})).toBeUndefined();
  const lines: string[] = [];
  const logger = createLogger({ format: 'json', destination: { write: (s: string) => lines.push(s) } });
  expect(closedInMemoryFromDynamicConfig({ [CLOSED_IN_MEMORY_KEY]: -1 }, logger)).toBeUndefined();
  expect(JSON.parse(lines[0])).toMatchObject({ level: 'WARN', key: CLOSED_IN_MEMORY_KEY, value: -1 });
});

test('a failure cut down to size keeps type, message head and causes within the budget', () => {
  const f = {
    message: 'é'.repeat(3000),
    stackTrace: 's'.repeat(3000),
    applicationFailureInfo: { type: 'T', nonRetryable: true },
    cause: { message: 'inner' },
  };
  const cut = truncateFailure(f, 1000)!;
  expect(cut.applicationFailureInfo).toEqual({ type: 'T', nonRetryable: true });
  expect(Buffer.byteLength(cut.message)).toBeLessThanOrEqual(1000);
  expect(cut.message).toMatch(/^é+$/); // never half a character
  expect(cut.stackTrace).toBeUndefined();
});

describe('an embedded server with lowered limits', () => {
  const lines: Record<string, unknown>[] = [];
  let server: DevServer;
  let connection: Connection;
  const namespace = 'default';
  beforeAll(async () => {
    const logger = createLogger({
      format: 'json',
      level: 'warn',
      destination: { write: (s: string) => lines.push(JSON.parse(s)) },
    });
    const dynamicConfig = {
      'limit.blobSize.warn': 100,
      'limit.blobSize.error': 1000,
      'limit.historyCount.warn': 10,
      'limit.historyCount.error': 40,
    };
    server = await startDevServer({ port: 0, logger, dynamicConfig });
    connection = await Connection.connect({ address: `127.0.0.1:${server.port}` });
  });
  afterAll(async () => {
    await connection?.close();
    await server?.close();
  });
  const svc = () => connection.workflowService;
  const start = async (taskQueue: string) => {
    const workflowId = `w-${randomUUID()}`;
    await svc().startWorkflowExecution({
      namespace,
      workflowId,
      workflowType: { name: 'w' },
      taskQueue: { name: taskQueue },
      requestId: randomUUID(),
    });
    return workflowId;
  };
  const logged = (msg: string) => lines.filter((l) => l.msg === msg);

  test('payloads past the warn limit and histories past theirs are logged, a history once', async () => {
    const workflowId = await start('tq-warn');
    await svc().signalWorkflowExecution({
      namespace,
      workflowExecution: { workflowId },
      signalName: 's',
      input: { payloads: [{ data: Buffer.alloc(500) }] },
    });
    expect(logged('Blob data size exceeds the warning limit.').at(-1)).toMatchObject({
      level: 'WARN',
      'wf-namespace': namespace,
      'wf-id': workflowId,
      'wf-size': 506,
      'blob-size-violation-operation': 'SignalWorkflowExecution',
    });
    for (let i = 0; i < 15; i++)
      await svc().signalWorkflowExecution({ namespace, workflowExecution: { workflowId }, signalName: 's' });
    expect(logged('history count exceeds warn limit.').filter((l) => l['wf-id'] === workflowId)).toHaveLength(1);
  });

  test('a single change jumping past the count limit from far below it still terminates the run (after the change)', async () => {
    const workflowId = await start('tq-jump');
    const task = await connection.withDeadline(Date.now() + 10_000, () =>
      svc().pollWorkflowTaskQueue({ namespace, taskQueue: { name: 'tq-jump' }, identity: 'raw' }),
    );
    const markers = Array.from({ length: 50 }, () => ({
      commandType: CT.COMMAND_TYPE_RECORD_MARKER,
      recordMarkerCommandAttributes: { markerName: 'm' },
    }));
    await expect(
      svc().respondWorkflowTaskCompleted({ namespace, taskToken: task.taskToken, commands: markers }),
    ).rejects.toMatchObject({ details: 'Workflow history count exceeds limit.' });
    const events = (await svc().getWorkflowExecutionHistory({ namespace, execution: { workflowId } })).history!.events!;
    expect(events.at(-1)!.eventType).toBe(ET.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED);
    expect(logged('history count exceeds error limit.').at(-1)).toMatchObject({ 'wf-id': workflowId });
  });
});
