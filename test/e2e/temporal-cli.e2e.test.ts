// The real `temporal` CLI, a client no one here wrote, against the ENGINE on runs the
// service created: workflow list/describe/show/query/signal/cancel/terminate/count,
// schedule list/describe, operator namespace list/describe and search-attribute
// list. The same shape assertions hold on both engines: the embedded one must
// answer like the real server. The service's payloads are encrypted: the CLI
// reads and writes them through the gateway's codec endpoint, as an operator's would.
import { KEY_B, useStack, waitUntil, withTemporal } from './helpers';
import {
  DURATION,
  INT64,
  SYSTEM_SEARCH_ATTRIBUTES,
  TIMESTAMP,
  eventsOfType,
  payload,
  runCli,
  runCliJson,
  runCliText,
  tableRows,
  textFields,
} from './temporal-cli-helpers';
import { SEARCH_ATTRIBUTES } from '../../workflows/types';

jest.setTimeout(120_000);
const CODEC_TOKEN = 'cli-test-codec-token-0123456789';
const ctx = useStack({ CODEC_AUTH_TOKEN: CODEC_TOKEN });
const addr = () => ctx.stack().temporalAddress;
const codec = () => ['--codec-endpoint', `${ctx.stack().gatewayUrl}/codec`, '--codec-auth', `Bearer ${CODEC_TOKEN}`];
const cli = (...args: string[]) => runCli(addr(), [...args, ...codec()]);
const json = (...args: string[]) => runCliJson(addr(), [...args, ...codec()]);
const text = (...args: string[]) => runCliText(addr(), [...args, ...codec()]);

let done: { task_id: string; session: string };
/** The run that continued done's session. */
let continued: string;
let running: string;
let victim: string;
const scheduleId = `cli-schedule-${Date.now()}`;

async function background(message: string, key?: string): Promise<string> {
  const r = await ctx.call('POST', '/', { body: { message, background: true }, key });
  expect(r.status).toBe(202);
  return r.json.task_id;
}

const statusOf = async (id: string) => (await json('workflow', 'describe', '-w', id)).workflowExecutionInfo.status;

beforeAll(async () => {
  const r = await ctx.call('POST', '/', { body: { message: 'hello' } });
  expect(r.json.status).toBe('completed');
  done = r.json;
  // Continued: the session opens (a run that names none opens none by itself) and grants this run its turn.
  const again = await ctx.call('POST', `/?session=${done.session}`, { body: { message: 'hello again' } });
  expect(again.json.status).toBe('completed');
  continued = again.json.task_id;
  // Long enough to stay running through every test that needs it; cancelled at the end.
  running = await background('[[slow delay=300 tokens=300]] long');
  victim = await background('[[slow delay=300 tokens=300]] doomed');
  await withTemporal(ctx.stack(), (client) =>
    client.schedule.create({
      scheduleId,
      spec: { cronExpressions: ['0 0 1 1 *'] },
      action: { type: 'startWorkflow', workflowType: 'agentTask', taskQueue: 'agent-tasks', args: [] },
      state: { paused: true, note: 'made by the CLI test' },
      memo: { purpose: 'cli' },
    }),
  );
  // Both are mid-turn (a model call in flight) from here on.
  await waitUntil(
    'both runs mid-turn',
    async () =>
      (await ctx.call('GET', `/tasks/${running}`)).json.status === 'running' &&
      (await ctx.call('GET', `/tasks/${victim}`)).json.status === 'running',
  );
});

afterAll(async () => {
  await withTemporal(ctx.stack(), (client) => client.schedule.getHandle(scheduleId).delete()).catch(() => undefined);
});

test('workflow list: the service runs, in the visibility shape (counters once closed, typed search attributes)', async () => {
  const rows = tableRows(await text('workflow', 'list'));
  expect(rows).toEqual(
    expect.arrayContaining([
      ['Completed', done.task_id, 'agentTask', expect.any(String)],
      ['Running', running, 'agentTask', expect.any(String)],
    ]),
  );
  const list: any[] = await json('workflow', 'list');
  const closed = list.find((x) => x.execution.workflowId === done.task_id);
  const open = list.find((x) => x.execution.workflowId === running);
  for (const x of [closed, open]) {
    expect(x).toMatchObject({
      execution: { runId: expect.any(String) },
      type: { name: 'agentTask' },
      startTime: TIMESTAMP,
      executionTime: TIMESTAMP,
      taskQueue: 'agent-tasks',
    });
    expect(x.rootExecution).toEqual(x.execution);
    expect(x).not.toHaveProperty('firstRunId');
    // List gives each value as its visibility store holds it: decoded, typed, a single keyword as itself.
    expect(payload(x.searchAttributes.indexedFields.TaskAccount)).toEqual({
      metadata: { encoding: 'json/plain', type: 'Keyword' },
      value: 'alice',
    });
    expect(payload(x.searchAttributes.indexedFields.BuildIds).value).toEqual(expect.arrayContaining(['unversioned']));
  }
  expect(closed).toMatchObject({
    status: 'WORKFLOW_EXECUTION_STATUS_COMPLETED',
    closeTime: TIMESTAMP,
    historyLength: INT64,
    stateTransitionCount: INT64,
    historySizeBytes: INT64,
    executionDuration: DURATION,
  });
  expect(payload(closed.searchAttributes.indexedFields.TaskStatus).value).toBe('completed');
  expect(open.status).toBe('WORKFLOW_EXECUTION_STATUS_RUNNING');
  for (const k of ['closeTime', 'historyLength', 'stateTransitionCount', 'historySizeBytes', 'executionDuration'])
    expect(open).not.toHaveProperty(k);

  const filtered: any[] = await json('workflow', 'list', '-q', "TaskStatus = 'running' AND WorkflowType = 'agentTask'");
  expect(filtered.map((x) => x.execution.workflowId).sort()).toEqual([running, victim].sort());
});

test('workflow describe: execution config, info from the run itself, pending activity, extended info', async () => {
  const d = await json('workflow', 'describe', '-w', running);
  expect(d.executionConfig).toEqual({
    taskQueue: { name: 'agent-tasks', kind: 'TASK_QUEUE_KIND_NORMAL' },
    defaultWorkflowTaskTimeout: DURATION,
  });
  const info = d.workflowExecutionInfo;
  expect(info).toMatchObject({
    execution: { workflowId: running },
    status: 'WORKFLOW_EXECUTION_STATUS_RUNNING',
    historyLength: INT64,
    stateTransitionCount: INT64,
    historySizeBytes: INT64,
    firstRunId: info.execution.runId,
    mostRecentWorkerVersionStamp: { buildId: expect.stringContaining('@temporalio/worker@') },
    memo: { fields: expect.objectContaining({ account: 'alice' }) },
  });
  expect(Number(info.historySizeBytes)).toBeGreaterThan(1000);
  expect(info.autoResetPoints.points).toEqual([
    {
      buildId: info.mostRecentWorkerVersionStamp.buildId,
      runId: info.execution.runId,
      firstWorkflowTaskCompletedId: '4',
      createTime: TIMESTAMP,
      resettable: true,
    },
  ]);
  // Describe gives the values as the workflow set them, with their type added.
  const status = payload(info.searchAttributes.indexedFields.TaskStatus);
  expect(status).toEqual({ metadata: { encoding: 'json/plain', type: 'Keyword' }, value: ['running'] });
  expect(d.pendingActivities).toHaveLength(1);
  expect(d.pendingActivities[0]).toMatchObject({
    activityType: { name: 'modelTurn' },
    state: 'PENDING_ACTIVITY_STATE_STARTED',
    lastStartedTime: TIMESTAMP,
    activityOptions: {
      taskQueue: { name: 'agent-tasks', normalName: 'agent-tasks' },
      startToCloseTimeout: DURATION,
      heartbeatTimeout: DURATION,
      retryPolicy: { maximumAttempts: expect.any(Number) },
    },
  });
  expect(d.pendingActivities[0].activityOptions.retryPolicy).not.toHaveProperty('nonRetryableErrorTypes');
  expect(d.workflowExtendedInfo).toEqual({
    runExpirationTime: '0001-01-01T00:00:00Z',
    originalStartTime: info.startTime,
    requestIdInfos: {
      [Object.keys(d.workflowExtendedInfo.requestIdInfos)[0]]: {
        eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
        eventId: '1',
      },
    },
  });

  const t = await text('workflow', 'describe', '-w', done.task_id);
  expect(textFields(t)).toMatchObject({
    WorkflowId: done.task_id,
    Type: 'agentTask',
    Namespace: 'default',
    TaskQueue: 'agent-tasks',
    Status: 'COMPLETED',
    HistoryLength: INT64,
  });
  expect(Number(textFields(t).HistorySize)).toBeGreaterThan(1000);
  expect(t).toContain('Extended Execution Info:');
  expect(t).toMatch(/Results:\n {2}RunTime/);
  const reset = await text('workflow', 'describe', '-w', done.task_id, '--reset-points');
  expect(reset).toMatch(/^Auto Reset Points: 1\n/);
  expect(textFields(reset).EventId).toBe('4');
});

test('workflow show: the history, table and JSON, and --follow until the run closes', async () => {
  const rows = tableRows(
    (await text('workflow', 'show', '-w', done.task_id)).split('\n\nResults:')[0].replace(/^Progress:\n/, ''),
  );
  expect(rows[0]).toEqual(['1', TIMESTAMP, 'WorkflowExecutionStarted']);
  expect(rows[rows.length - 1]).toEqual([String(rows.length), TIMESTAMP, 'WorkflowExecutionCompleted']);
  const h = await json('workflow', 'show', '-w', done.task_id);
  expect(h.events.map((e: any) => e.eventId)).toEqual(rows.map((r) => r[0]));
  const started = h.events[0].workflowExecutionStartedEventAttributes;
  // A top-level run without timeouts: no root, no timeouts, a zero backoff.
  expect(started).toMatchObject({
    workflowType: { name: 'agentTask' },
    firstWorkflowTaskBackoff: '0s',
    workflowTaskTimeout: DURATION,
    attempt: 1,
  });
  for (const k of ['rootWorkflowExecution', 'workflowRunTimeout', 'workflowExecutionTimeout'])
    expect(started).not.toHaveProperty(k);
  expect(payload(started.searchAttributes.indexedFields.TaskStatus).metadata.type).toBe('Keyword');
  const build = { buildId: expect.stringContaining('@temporalio/worker@') };
  for (const e of eventsOfType(h, 'WORKFLOW_TASK_STARTED'))
    expect(e.workflowTaskStartedEventAttributes).toMatchObject({ historySizeBytes: INT64, workerVersion: build });
  const completions = eventsOfType(h, 'WORKFLOW_TASK_COMPLETED');
  for (const e of completions) {
    expect(e.workflowTaskCompletedEventAttributes).toMatchObject({ workerVersion: build });
    expect(e.workflowTaskCompletedEventAttributes).not.toHaveProperty('binaryChecksum');
  }
  expect(completions[0].workflowTaskCompletedEventAttributes.sdkMetadata).toMatchObject({
    sdkName: 'temporal-typescript',
  });
  expect(eventsOfType(h, 'ACTIVITY_TASK_STARTED')[0].activityTaskStartedEventAttributes).toMatchObject({
    workerVersion: build,
    attempt: 1,
  });
  // An external signal as the CLI shows it: the session granting its turn to the run that continued it.
  const session = await json('workflow', 'show', '-w', `session:alice:${done.session}`);
  const signaled = eventsOfType(session, 'EXTERNAL_WORKFLOW_EXECUTION_SIGNALED')[0]
    .externalWorkflowExecutionSignaledEventAttributes;
  expect(signaled.workflowExecution).toEqual({ workflowId: continued });
  expect(
    payload(h.events[h.events.length - 1].workflowExecutionCompletedEventAttributes.result.payloads[0]).value,
  ).toMatchObject({ task_id: done.task_id, output: 'You said: hello' });

  // Another account, so that no slot of the first one is in the way.
  const quick = await background('[[slow delay=50 tokens=30]] quick', KEY_B);
  const followed = await cli('workflow', 'show', '-w', quick, '--follow');
  expect(followed.code).toBe(0);
  expect(followed.stdout).toMatch(/^Progress:\n/);
  expect(followed.stdout).toMatch(/WorkflowExecutionCompleted\s*\n\nResults:\n {2}Status +COMPLETED\n/);
});

test('workflow query: the status query, the stack trace, an unknown query, a rejected one', async () => {
  const q = await json('workflow', 'query', '-w', running, '--type', 'status');
  expect(q.queryResult).toEqual([expect.objectContaining({ task_id: running, status: 'running', account: 'alice' })]);
  const t = await text('workflow', 'query', '-w', running, '--name', 'status');
  expect(t).toMatch(/^Query result:\n {2}QueryResult {2}\{/);
  expect(JSON.parse(textFields(t).QueryResult)).toMatchObject({ task_id: running });
  const closed = await json('workflow', 'query', '-w', done.task_id, '--type', 'status');
  expect(closed.queryResult[0]).toMatchObject({ task_id: done.task_id, status: 'completed' });

  const stack = await json('workflow', 'query', '-w', running, '--type', '__stack_trace');
  expect(stack.queryResult).toEqual([expect.stringContaining('agent-task.ts')]);
  expect(await text('workflow', 'stack', '-w', running)).toMatch(
    /^Query result:\n {2}QueryResult {2}".*agent-task\.ts/,
  );

  const unknown = await cli('workflow', 'query', '-w', running, '--type', 'noSuchQuery');
  expect(unknown.code).toBe(1);
  // The worker encrypts every failure's message, a query's too (it can quote
  // data); the server hands the CLI that message as a bare string, which no
  // codec endpoint sees.
  expect(unknown.stderr).toContain('querying workflow failed: Encoded failure');
  const rejected = await cli(
    'workflow',
    'query',
    '-w',
    done.task_id,
    '--type',
    'status',
    '--reject-condition',
    'not_open',
  );
  expect(rejected.code).toBe(1);
  expect(rejected.stderr).toContain('query was rejected, workflow has status: Completed');
});

test('workflow signal: a signal no handler takes is still in the history', async () => {
  expect(await text('workflow', 'signal', '-w', running, '--name', 'cliProbe', '--input', '{"from":"cli"}')).toBe(
    'Signal workflow succeeded\n',
  );
  const h = await json('workflow', 'show', '-w', running);
  const [signal] = eventsOfType(h, 'WORKFLOW_EXECUTION_SIGNALED').filter(
    (e) => e.workflowExecutionSignaledEventAttributes.signalName === 'cliProbe',
  );
  expect(signal.workflowExecutionSignaledEventAttributes).toMatchObject({
    identity: expect.stringContaining('temporal-cli'),
  });
  expect(payload(signal.workflowExecutionSignaledEventAttributes.input.payloads[0]).value).toEqual({ from: 'cli' });
  const missing = await cli('workflow', 'signal', '-w', 'task_nobody', '--name', 'x');
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain('workflow not found for ID: task_nobody');
});

test('workflow count: a total, and totals per status with GROUP BY ExecutionStatus', async () => {
  const total = await json('workflow', 'count');
  expect(total).toEqual({ count: INT64 });
  expect(await text('workflow', 'count')).toBe(`Total: ${total.count}\n`);
  const grouped = await json('workflow', 'count', '-q', 'GROUP BY ExecutionStatus');
  expect(grouped.count).toBe(total.count);
  expect(grouped.groups.map((g: any) => g.groupValues)).toEqual([['Running'], ['Completed']]);
  expect(grouped.groups.reduce((n: number, g: any) => n + Number(g.count), 0)).toBe(Number(total.count));
  const lines = (await text('workflow', 'count', '-q', 'GROUP BY ExecutionStatus')).trim().split('\n');
  expect(lines).toEqual([
    `Total: ${total.count}`,
    expect.stringMatching(/^Group total: \d+, values: Running$/),
    expect.stringMatching(/^Group total: \d+, values: Completed$/),
  ]);
  expect(await json('workflow', 'count', '-q', `WorkflowId = '${done.task_id}'`)).toEqual({ count: '1' });
});

test('schedule list and describe: a schedule made through the SDK', async () => {
  const rows = tableRows(await text('schedule', 'list'));
  expect(rows).toContainEqual([scheduleId, '{"Workflow":"agentTask"}', 'true', expect.any(String)]);
  const list: any[] = await json('schedule', 'list');
  const item = list.find((s) => s.scheduleId === scheduleId);
  expect(item.info).toMatchObject({
    workflowType: { name: 'agentTask' },
    notes: 'made by the CLI test',
    paused: true,
    futureActionTimes: expect.arrayContaining([TIMESTAMP]),
  });
  expect(item.info.spec.structuredCalendar).toHaveLength(1);
  const d = await json('schedule', 'describe', '-s', scheduleId);
  expect(d.schedule).toMatchObject({
    action: {
      startWorkflow: {
        workflowType: { name: 'agentTask' },
        taskQueue: { name: 'agent-tasks', kind: 'TASK_QUEUE_KIND_NORMAL' },
      },
    },
    policies: { overlapPolicy: 'SCHEDULE_OVERLAP_POLICY_SKIP', catchupWindow: DURATION },
    state: { notes: 'made by the CLI test', paused: true },
  });
  expect(d.info).toMatchObject({ createTime: TIMESTAMP, futureActionTimes: expect.arrayContaining([TIMESTAMP]) });
  expect(payload(d.memo.fields.purpose).value).toBe('cli');
  const t = textFields(await text('schedule', 'describe', '-s', scheduleId));
  expect(t).toMatchObject({
    ScheduleId: scheduleId,
    OverlapPolicy: 'Skip',
    Notes: 'made by the CLI test',
    Paused: 'true',
  });
});

test('operator namespace list and describe', async () => {
  const list: any[] = await json('operator', 'namespace', 'list');
  expect(list.map((n) => n.namespaceInfo.name)).toEqual(expect.arrayContaining(['default', 'temporal-system']));
  const d = await json('operator', 'namespace', 'describe', '-n', 'default');
  // Capabilities differ on purpose (packages/embedded-temporal/README.md): each engine lists what it does.
  expect(d.namespaceInfo).toMatchObject({
    name: 'default',
    state: 'NAMESPACE_STATE_REGISTERED',
    id: expect.any(String),
    capabilities: { syncUpdate: true, asyncUpdate: true },
    limits: { blobSizeLimitError: INT64, memoSizeLimitError: INT64, workflowTaskCompletionSizeLimitError: INT64 },
    supportsSchedules: true,
  });
  expect(d.config).toMatchObject({
    workflowExecutionRetentionTtl: DURATION,
    badBinaries: {},
    historyArchivalState: 'ARCHIVAL_STATE_DISABLED',
    visibilityArchivalState: 'ARCHIVAL_STATE_DISABLED',
  });
  const aliases = d.config.customSearchAttributeAliases;
  expect(Object.values(aliases).sort()).toEqual(Object.values(SEARCH_ATTRIBUTES).sort());
  for (const column of Object.keys(aliases)) expect(column).toMatch(/^Keyword(0[1-9]|10)$/);
  expect(d.replicationConfig).toEqual({ activeClusterName: 'active', clusters: [{ clusterName: 'active' }] });
  const t = textFields(await text('operator', 'namespace', 'describe', 'default'));
  expect(t).toMatchObject({
    'NamespaceInfo.Name': 'default',
    'NamespaceInfo.State': 'Registered',
    'ReplicationConfig.State': 'Unspecified',
    'Config.HistoryArchivalState': 'Disabled',
    'Config.VisibilityArchivalState': 'Disabled',
  });
});

test('operator search-attribute list: the system attributes of the real server and the service’s own', async () => {
  const sa = await json('operator', 'search-attribute', 'list');
  expect(sa.customAttributes).toEqual(
    Object.fromEntries(Object.values(SEARCH_ATTRIBUTES).map((n) => [n, 'INDEXED_VALUE_TYPE_KEYWORD'])),
  );
  expect(Object.keys(sa.systemAttributes).sort()).toEqual([...SYSTEM_SEARCH_ATTRIBUTES].sort());
  expect(sa.systemAttributes).toMatchObject({
    BuildIds: 'INDEXED_VALUE_TYPE_KEYWORD_LIST',
    HistorySizeBytes: 'INDEXED_VALUE_TYPE_INT',
    TemporalSchedulePaused: 'INDEXED_VALUE_TYPE_BOOL',
  });
  const rows = tableRows(await text('operator', 'search-attribute', 'list'));
  expect(rows).toContainEqual(['TaskStatus', 'Keyword']);
  expect(rows).toContainEqual(['StartTime', 'Datetime']);
  expect(rows).toHaveLength(SYSTEM_SEARCH_ATTRIBUTES.length + Object.keys(SEARCH_ATTRIBUTES).length);
});

test('workflow cancel and terminate --reason: the runs close as the service handles them', async () => {
  expect(await text('workflow', 'cancel', '-w', running)).toBe('Canceled workflow\n');
  expect(await text('workflow', 'terminate', '-w', victim, '--reason', 'stopped from the CLI')).toBe(
    'Workflow terminated\n',
  );
  await waitUntil(
    'the cancelled run to close as CANCELED',
    async () => (await statusOf(running)) === 'WORKFLOW_EXECUTION_STATUS_CANCELED',
  );
  const cancelled = await json('workflow', 'show', '-w', running);
  expect(
    eventsOfType(cancelled, 'WORKFLOW_EXECUTION_CANCEL_REQUESTED')[0].workflowExecutionCancelRequestedEventAttributes,
  ).toMatchObject({ identity: expect.stringContaining('temporal-cli') });
  expect(cancelled.events[cancelled.events.length - 1].eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED');

  expect(await statusOf(victim)).toBe('WORKFLOW_EXECUTION_STATUS_TERMINATED');
  const terminated = await json('workflow', 'show', '-w', victim);
  expect(terminated.events[terminated.events.length - 1]).toMatchObject({
    eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED',
    workflowExecutionTerminatedEventAttributes: {
      reason: 'stopped from the CLI',
      identity: expect.stringContaining('temporal-cli'),
    },
  });
  const again = await cli('workflow', 'terminate', '-w', victim, '--reason', 'twice');
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('workflow execution already completed');
  const list: any[] = await json('workflow', 'list', '-q', `WorkflowId = '${victim}'`);
  expect(list[0]).toMatchObject({
    status: 'WORKFLOW_EXECUTION_STATUS_TERMINATED',
    historyLength: INT64,
    historySizeBytes: INT64,
  });
});
