// Namespaces (register, describe, list, update, isolation), custom search
// attributes per namespace through the operator service, GetSystemInfo, the
// --namespace / --search-attribute launch flags, and UNIMPLEMENTED for methods
// nobody serves.
import { randomUUID } from 'node:crypto';
import Long from 'long';
import { Client, WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { waitUntil } from '../support/wait-until';
import { createEnv, ENGINE, Env, uid, workflowBundle } from './harness';
import { localEnv } from '../support/engine';
import { whereAmI } from './workflows/namespaces';
import * as activities from './activities/namespaces';
import { S, CallOutcome, outcome, codeName, detailType, RawClient, WORKFLOW_SERVICE } from './fuzz-tools';

const IVT = temporal.api.enums.v1.IndexedValueType;
const REGISTERED = temporal.api.enums.v1.NamespaceState.NAMESPACE_STATE_REGISTERED;
const WORKFLOWS = require.resolve('./workflows/namespaces');
const day = { seconds: Long.fromNumber(86400) };

let env: Env;
beforeAll(async () => {
  env = await createEnv({ workflowsPath: WORKFLOWS, activities });
});
afterAll(async () => {
  await env?.teardown();
});

const ws = () => env.connection.workflowService;
const ops = () => env.connection.operatorService;

function expectStatus(o: CallOutcome, code: number, message?: RegExp, detail?: string): void {
  expect(`${codeName(o.code)}: ${o.details}`).toMatch(new RegExp(`^${codeName(code)}: `));
  if (message) expect(o.details).toMatch(message);
  if (detail) expect(detailType(o)).toBe(detail);
}

// A namespace just registered on a real server takes a moment to reach every cache: the calls
// made in it right after are retried (waitUntil retries a call that throws).

/** Runs whereAmI in `namespace` with a worker of that namespace; replays it. */
async function runIn(address: string, namespace: string, client: Client): Promise<string> {
  const connection = await NativeConnection.connect({ address });
  try {
    const taskQueue = `tq-${randomUUID()}`;
    const worker = await Worker.create({
      connection,
      namespace,
      taskQueue,
      workflowBundle: await workflowBundle(WORKFLOWS),
      activities,
    });
    let handle: WorkflowHandle | undefined;
    const result = await worker.runUntil(async () => {
      handle = await waitUntil('a start in the new namespace to be accepted', () =>
        client.workflow.start(whereAmI, { taskQueue, workflowId: uid('where') }),
      );
      return await handle.result();
    });
    await env.replay(handle!);
    return result;
  } finally {
    await connection.close();
  }
}

test('GetSystemInfo reports the capabilities the SDK relies on', async () => {
  const info = await ws().getSystemInfo({});
  expect(info.serverVersion).toMatch(/^\d+\.\d+\.\d+/);
  expect(info.capabilities).toMatchObject({
    signalAndQueryHeader: true,
    internalErrorDifferentiation: true,
    activityFailureIncludeHeartbeat: true,
    supportsSchedules: true,
    encodedFailureAttributes: true,
    upsertMemo: true,
    sdkMetadata: true,
    countGroupByExecutionStatus: true,
  });
});

test('the default namespace exists, is listed and described', async () => {
  const d = await ws().describeNamespace({ namespace: 'default' });
  expect(d.namespaceInfo?.name).toBe('default');
  expect(d.namespaceInfo?.state).toBe(REGISTERED);
  expect(d.namespaceInfo?.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(Number(d.config?.workflowExecutionRetentionTtl?.seconds)).toBeGreaterThan(0);
  const byId = await ws().describeNamespace({ id: d.namespaceInfo!.id! });
  expect(byId.namespaceInfo?.name).toBe('default');
  const all = await ws().listNamespaces({});
  expect(all.namespaces!.map((n) => n.namespaceInfo?.name)).toContain('default');
});

test('register, describe, list and update a namespace; its workflows stay in it', async () => {
  const name = uid('ns');
  await ws().registerNamespace({
    namespace: name,
    description: 'for a test',
    ownerEmail: 'test@example.com',
    data: { k: 'v' },
    workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(2 * 86400) },
  });
  const d = await ws().describeNamespace({ namespace: name });
  expect(d.namespaceInfo).toMatchObject({
    name,
    state: REGISTERED,
    description: 'for a test',
    ownerEmail: 'test@example.com',
    data: { k: 'v' },
  });
  expect(Number(d.config?.workflowExecutionRetentionTtl?.seconds)).toBe(2 * 86400);
  expect((await ws().describeNamespace({ id: d.namespaceInfo!.id! })).namespaceInfo?.name).toBe(name);

  const names: string[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await ws().listNamespaces({ pageSize: 2, nextPageToken });
    names.push(...page.namespaces!.map((n) => n.namespaceInfo!.name!));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  expect(names).toEqual(expect.arrayContaining(['default', name]));
  expect(new Set(names).size).toBe(names.length);

  const updated = await ws().updateNamespace({
    namespace: name,
    updateInfo: { description: 'changed' },
    config: { workflowExecutionRetentionTtl: { seconds: Long.fromNumber(3 * 86400) } },
  });
  expect(updated.namespaceInfo?.description).toBe('changed');
  const after = await ws().describeNamespace({ namespace: name });
  expect(after.namespaceInfo?.description).toBe('changed');
  expect(after.namespaceInfo?.ownerEmail).toBe('test@example.com');
  expect(Number(after.config?.workflowExecutionRetentionTtl?.seconds)).toBe(3 * 86400);

  const client = new Client({ connection: env.connection, namespace: name });
  expect(await runIn(env.address, name, client)).toBe(`${name}/${name}`);
  const [wf] = await waitUntil(
    'the run to be listed',
    async () => {
      const out = [];
      for await (const w of client.workflow.list({ query: "WorkflowType = 'whereAmI'" })) out.push(w);
      return out;
    },
    (l) => l.length === 1,
  );
  expectStatus(
    await outcome(ws().describeWorkflowExecution({ namespace: 'default', execution: { workflowId: wf.workflowId } })),
    S.NOT_FOUND,
  );
  expect((await env.client.workflow.count(`WorkflowId = '${wf.workflowId}'`)).count).toBe(0);
});

test('namespace mistakes get the real server status', async () => {
  const nope = uid('nope');
  const reg = (namespace: string, extra: object = {}) =>
    outcome(ws().registerNamespace({ namespace, workflowExecutionRetentionPeriod: day, ...extra }));
  expectStatus(await reg('default'), S.ALREADY_EXISTS, /default/, 'NamespaceAlreadyExistsFailure');
  expectStatus(await reg(''), S.INVALID_ARGUMENT, /Namespace/);
  expectStatus(await reg('x'.repeat(1001)), S.INVALID_ARGUMENT, /length/);
  expectStatus(await reg(nope, { workflowExecutionRetentionPeriod: undefined }), S.INVALID_ARGUMENT, /retention/i);
  expectStatus(
    await reg(nope, { workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(60) } }),
    S.INVALID_ARGUMENT,
    /retention/i,
  );
  expectStatus(
    await outcome(ws().describeNamespace({ namespace: nope })),
    S.NOT_FOUND,
    new RegExp(nope),
    'NamespaceNotFoundFailure',
  );
  expectStatus(await outcome(ws().describeNamespace({ id: randomUUID() })), S.NOT_FOUND);
  expectStatus(await outcome(ws().describeNamespace({})), S.INVALID_ARGUMENT, /Namespace/);
  expectStatus(await outcome(ws().updateNamespace({ namespace: nope, updateInfo: { description: 'x' } })), S.NOT_FOUND);
  const tiny = { workflowExecutionRetentionTtl: { seconds: Long.fromNumber(1) } };
  expectStatus(
    await outcome(ws().updateNamespace({ namespace: 'default', config: tiny })),
    S.INVALID_ARGUMENT,
    /retention/i,
  );
  expect(
    Number((await ws().describeNamespace({ namespace: 'default' })).config?.workflowExecutionRetentionTtl?.seconds),
  ).toBeGreaterThan(1);
});

test('custom search attributes per namespace: add, list, limits, reserved names, remove', async () => {
  const namespace = uid('ns-sa');
  await ws().registerNamespace({ namespace, workflowExecutionRetentionPeriod: day });
  const list = async () => (await ops().listSearchAttributes({ namespace })).customAttributes ?? {};
  const add = (searchAttributes: Record<string, number>) =>
    outcome(
      waitUntil(
        'search attributes to be added',
        () => ops().addSearchAttributes({ namespace, searchAttributes }),
        () => true,
      ),
    );
  expectStatus(await add({ NsKeyword: IVT.INDEXED_VALUE_TYPE_KEYWORD, NsInt1: IVT.INDEXED_VALUE_TYPE_INT }), S.OK);
  expect(await list()).toMatchObject({ NsKeyword: IVT.INDEXED_VALUE_TYPE_KEYWORD, NsInt1: IVT.INDEXED_VALUE_TYPE_INT });
  // Adding a name that exists is a no-op, whatever the type.
  expectStatus(await add({ NsKeyword: IVT.INDEXED_VALUE_TYPE_TEXT }), S.OK);
  expect((await list()).NsKeyword).toBe(IVT.INDEXED_VALUE_TYPE_KEYWORD);
  const sys = await ops().listSearchAttributes({ namespace });
  expect(sys.systemAttributes).toMatchObject({
    WorkflowId: IVT.INDEXED_VALUE_TYPE_KEYWORD,
    StartTime: IVT.INDEXED_VALUE_TYPE_DATETIME,
  });

  const bad = (searchAttributes: Record<string, number>) =>
    outcome(ops().addSearchAttributes({ namespace, searchAttributes }));
  expectStatus(await bad({}), S.INVALID_ARGUMENT, /SearchAttributes/);
  expectStatus(await bad({ WorkflowId: IVT.INDEXED_VALUE_TYPE_KEYWORD }), S.INVALID_ARGUMENT, /WorkflowId.*reserved/);
  expectStatus(
    await bad({ TemporalMine: IVT.INDEXED_VALUE_TYPE_KEYWORD }),
    S.INVALID_ARGUMENT,
    /TemporalMine.*reserved/,
  );
  expectStatus(await bad({ NsOdd: 99 }), S.INVALID_ARGUMENT, /type/);
  expectStatus(
    await bad({
      NsInt2: IVT.INDEXED_VALUE_TYPE_INT,
      NsInt3: IVT.INDEXED_VALUE_TYPE_INT,
      NsInt4: IVT.INDEXED_VALUE_TYPE_INT,
    }),
    S.INVALID_ARGUMENT,
    /cannot have more than 3 search attribute of type Int/,
  );
  expect(await list()).not.toHaveProperty('NsInt2');
  expectStatus(
    await outcome(ops().addSearchAttributes({ namespace: '', searchAttributes: { A: IVT.INDEXED_VALUE_TYPE_INT } })),
    S.INVALID_ARGUMENT,
    /Namespace/,
  );
  expectStatus(await outcome(ops().listSearchAttributes({ namespace: uid('nope') })), S.NOT_FOUND);

  const client = new Client({ connection: env.connection, namespace });
  const startWith = (fields: Record<string, unknown>) =>
    outcome(
      client.workflow
        .start(whereAmI, {
          taskQueue: `tq-never-polled-${randomUUID()}`,
          workflowId: uid('sa'),
          searchAttributes: fields as never,
        })
        .then((h) => h.terminate()),
    );
  expectStatus(await startWith({ NsInt1: [5] }), S.OK);
  await waitUntil(
    'the run with NsInt1 to be listed',
    () => client.workflow.count('NsInt1 = 5'),
    (c) => c.count === 1,
  );

  expectStatus(
    await outcome(ops().removeSearchAttributes({ namespace, searchAttributes: ['NsKeyword', 'NeverAdded'] })),
    S.OK,
  );
  expect(await list()).not.toHaveProperty('NsKeyword');
  expectStatus(
    await outcome(ops().removeSearchAttributes({ namespace, searchAttributes: ['WorkflowId'] })),
    S.INVALID_ARGUMENT,
    /WorkflowId/,
  );
  expectStatus(await outcome(ops().removeSearchAttributes({ namespace, searchAttributes: [] })), S.INVALID_ARGUMENT);
  const rejected = await outcome(
    ws().startWorkflowExecution({
      namespace,
      workflowId: uid('sa'),
      workflowType: { name: 'whereAmI' },
      taskQueue: { name: 'tq-x' },
      requestId: randomUUID(),
      searchAttributes: {
        indexedFields: { NsKeyword: { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"x"') } },
      },
    }),
  );
  expectStatus(rejected, S.INVALID_ARGUMENT, /NsKeyword/);
  for await (const wf of client.workflow.list({ query: 'NsInt1 = 5' }))
    await env.replay(client.workflow.getHandle(wf.workflowId));
});

test('a method nobody serves is UNIMPLEMENTED and named', async () => {
  const raw = new RawClient(env.address);
  try {
    const o = await raw.call(`/${WORKFLOW_SERVICE}/NoSuchMethod`, Buffer.alloc(0));
    expectStatus(o, S.UNIMPLEMENTED, /NoSuchMethod/);
    const svc = await raw.call('/temporal.api.nosuchservice.v1.NoSuchService/Anything', Buffer.alloc(0));
    // grpc-go names the service only, grpc-js the whole path.
    expectStatus(svc, S.UNIMPLEMENTED, /NoSuchService/);
  } finally {
    raw.close();
  }
});

// The embedded engine only: a real server serves these methods.
const embeddedOnly = ENGINE === 'embedded' && !process.env.TEMPORAL_ADDRESS ? test : test.skip;
// Starts a server of its own, which TEMPORAL_ADDRESS (a server started elsewhere) rules out.
const launchable = process.env.TEMPORAL_ADDRESS ? test.skip : test;

embeddedOnly('methods the embedded server does not cover answer UNIMPLEMENTED naming the method', async () => {
  const calls: [string, Promise<unknown>][] = [
    ['PollNexusTaskQueue', ws().pollNexusTaskQueue({ namespace: 'default', taskQueue: { name: 'x' } })],
    ['DescribeWorkerDeployment', ws().describeWorkerDeployment({ namespace: 'default', deploymentName: 'x' })],
    ['ListWorkerDeployments', ws().listWorkerDeployments({ namespace: 'default' })],
    ['ListBatchOperations', ws().listBatchOperations({ namespace: 'default' })],
  ];
  for (const [method, p] of calls)
    expectStatus(await outcome(p), S.UNIMPLEMENTED, new RegExp(`WorkflowService/${method}`));
  expectStatus(
    await outcome(env.connection.operatorService.listClusters({})),
    S.UNIMPLEMENTED,
    /OperatorService\/ListClusters/,
  );
});

launchable('--namespace and --search-attribute at launch create every namespace with the attributes', async () => {
  const launched = await localEnv({
    namespace: 'ns-launch',
    searchAttributes: [
      { name: 'LaunchList', type: SearchAttributeType.KEYWORD_LIST },
      { name: 'LaunchTime', type: SearchAttributeType.DATETIME },
    ],
    extraArgs: ['--namespace', 'ns-extra', '--search-attribute', 'LaunchKw=keyword'],
  });
  try {
    const svc = launched.connection.workflowService;
    const names = (await svc.listNamespaces({})).namespaces!.map((n) => n.namespaceInfo!.name).sort();
    // The server's own namespace is listed too, with its well-known id.
    expect(names).toEqual(['default', 'ns-extra', 'ns-launch', 'temporal-system']);
    const system = await svc.describeNamespace({ namespace: 'temporal-system' });
    expect(system.namespaceInfo).toMatchObject({
      id: '32049b68-7872-4094-8e63-d0dd59896a83',
      description: 'Temporal internal system namespace',
    });
    for (const namespace of names.filter((n) => n !== 'temporal-system')) {
      const custom = (await launched.connection.operatorService.listSearchAttributes({ namespace })).customAttributes;
      expect(custom).toEqual({
        LaunchList: IVT.INDEXED_VALUE_TYPE_KEYWORD_LIST,
        LaunchTime: IVT.INDEXED_VALUE_TYPE_DATETIME,
        LaunchKw: IVT.INDEXED_VALUE_TYPE_KEYWORD,
      });
    }
    expect(launched.namespace).toBe('ns-launch');
    expect(await runIn(launched.address, 'ns-launch', launched.client)).toBe('ns-launch/ns-launch');
  } finally {
    await launched.teardown();
  }
});
