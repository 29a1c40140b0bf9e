// The task input the gateway and a schedule's activity build (src/common/tasks/task-input.ts): the
// grouped TaskInput holds what the flat input of before held, field for field, each in its group
// (the flat inputs below are what the builder made before the grouping, written out), so a run
// started today has the commands a run of the same request had.
import { runRequestSchema } from '../../../src/common/contracts/run-request';
import { type TaskInputConfig, taskInput } from '../../../src/common/tasks/task-input';
import { type FlatTaskInput, readTaskInput } from '../../../workflows/task-input';

const CONFIG: TaskInputConfig = {
  MAX_RUNNING_TASKS_PER_ACCOUNT: 4,
  MODEL_HEARTBEAT_TIMEOUT_MS: 20_000,
  MODEL_PRICES: { 'model-base': { input: 1, output: 2 } },
  MODEL_FLASH: 'model-flash',
  MODEL_BASE: 'model-base',
  MODEL_MAX: 'model-max',
  MAX_STEPS_DEFAULT: 25,
  MAX_DURATION_DEFAULT: 0,
  BUILTIN_TOOLS: ['current_time', 'calculate', 'wait'],
  MCP_CALL_TIMEOUT_MS: 300_000,
  MCP_CONNECT_TIMEOUT_MS: 10_000,
  TOOL_RESULT_MAX_CHARS: 65_536,
  BASH_TIMEOUT_MAX_S: 600,
  BROWSER_MAX_PAGES_PER_RUN: 50,
  BROWSER_NAVIGATION_TIMEOUT_S: 30,
  APPROVAL_REQUIRED_TOOLS: [],
  APPROVAL_TIMEOUT_S: 86_400,
};
const START = { taskId: 'task_1', account: 'acct', session: 'sess_1', createdAt: '2026-11-28T00:00:00.000Z' };

/** What a workflow is handed: the input as JSON carries it (an undefined field is no field). */
const asStored = (x: unknown) => JSON.parse(JSON.stringify(x));

test('a plain request: its fields in their groups, as the flat input held them', () => {
  const req = runRequestSchema.parse({ message: 'hello' });
  const before: FlatTaskInput = {
    ...START,
    message: 'hello',
    mode: 'base',
    streamTokens: false,
    background: false,
    metadata: {},
    multitask: 'queue',
    modelHeartbeatTimeoutMs: 20_000,
    price: { input: 1, output: 2 },
    maxSteps: 25,
    tools: ['current_time', 'calculate', 'wait'],
    toolResultMaxChars: 65_536,
    ownsTurn: true,
  };
  const built = taskInput(CONFIG, req, { ...START, ownsTurn: true });
  expect(asStored(built)).toStrictEqual(readTaskInput(before));
});

test('a request with every option: each field in its group, none lost or added', () => {
  const workflows = [
    {
      id: 'w',
      name: 'W',
      description: 'a workflow',
      steps: [{ id: 's', name: 'S', description: 'd', depends_on: [] }],
    },
  ];
  const req = runRequestSchema.parse({
    message: 'do it',
    system: 'be brief',
    rules: ['one'],
    mode: 'max',
    streaming_tokens: true,
    background: true,
    multitask: 'reject',
    metadata: { a: 1 },
    mcp_servers: [{ serverName: 'srv', serverUrl: 'http://mcp.example.com/mcp', auth: { type: 'bearer', token: 't' } }],
    agents: [{ name: 'billing', description: 'bills' }],
    datastores: [{ id: 'ds_1', name: 'shop' }],
    queries: [{ name: 'orders', description: 'orders', query: 'SELECT 1' }],
    workflows,
    final_output: { name: 'out', schema: { type: 'object' } },
    max_steps: 7,
    max_cost: 0.5,
    max_duration: 60,
    callback: { url: 'http://hooks.example.com/a' },
  });
  const callback = { url: 'http://hooks.example.com/a', headers: {}, retryDelaysMs: [10], timeoutMs: 1000 };
  const schedules = [{ schedule_id: 'sched_1', next_run_at: null }];
  const before: FlatTaskInput = {
    ...START,
    message: 'do it',
    system: 'be brief',
    rules: ['one'],
    mode: 'max',
    streamTokens: true,
    background: true,
    metadata: { a: 1 },
    multitask: 'reject',
    modelHeartbeatTimeoutMs: 20_000,
    slots: { limit: 2 },
    maxSteps: 7,
    maxCost: 0.5,
    maxDurationMs: 60_000,
    tools: ['current_time', 'calculate', 'wait'],
    mcpServers: [{ name: 'srv', url: 'http://mcp.example.com/mcp', token: 't' }],
    mcpCallTimeoutMs: 300_000,
    mcpConnectTimeoutMs: 10_000,
    agents: [{ name: 'billing', description: 'bills' }],
    datastores: [{ id: 'ds_1', name: 'shop' }],
    queries: [{ name: 'orders', description: 'orders', query: 'SELECT 1' }],
    callback,
    toolResultMaxChars: 65_536,
    ownsTurn: false,
    joinsSession: true,
    schedules,
    workflows,
    finalOutput: { name: 'out', strict: false, schema: { type: 'object' } },
  };
  const built = taskInput(CONFIG, req, { ...START, maxRunning: 2, callback, joinsSession: true, schedules });
  // Beyond what the flat input ever carried: a background run gives its slot back from its end activity.
  const expected = readTaskInput(before);
  expected.admission.slots = { limit: 2, releasedByEnd: true };
  expect(asStored(built)).toStrictEqual(expected);
});

test("a request's tools replace the deployment's, groups expanded; the computer's bring their call time limit", () => {
  const computer = taskInput(
    CONFIG,
    runRequestSchema.parse({ message: 'hi', tools: ['computer', 'calculate'] }),
    START,
  );
  expect(computer.limits.tools).toEqual(['bash', 'str_replace_editor', 'glob', 'grep', 'calculate']);
  expect(computer.limits.computerCallTimeoutMs).toBe(660_000);
  const none = taskInput(CONFIG, runRequestSchema.parse({ message: 'hi', tools: [] }), START);
  expect(none.limits.tools).toEqual([]);
  expect(none.limits).not.toHaveProperty('computerCallTimeoutMs');
  const deployment = taskInput(CONFIG, runRequestSchema.parse({ message: 'hi' }), START);
  expect(deployment.limits.tools).toEqual(CONFIG.BUILTIN_TOOLS);
  expect(() => runRequestSchema.parse({ message: 'hi', tools: ['shell'] })).toThrow(/tools/);
});

test("the browser's tools bring their page limit and call time limit; a run without them carries neither", () => {
  const browser = taskInput(CONFIG, runRequestSchema.parse({ message: 'hi', tools: ['browser'] }), START);
  expect(browser.limits.tools).toEqual(
    expect.arrayContaining(['browser_navigate', 'browser_snapshot', 'browser_click']),
  );
  expect(browser.limits).toMatchObject({ browserMaxPages: 50, browserCallTimeoutMs: 90_000 });
  const web = taskInput(CONFIG, runRequestSchema.parse({ message: 'hi', tools: ['web'] }), START);
  expect(web.limits.tools).toEqual(['web_fetch', 'web_search']);
  expect(web.limits).not.toHaveProperty('browserMaxPages');
  expect(web.limits).not.toHaveProperty('browserCallTimeoutMs');
});

test('computer.network becomes limits.computerNetwork, only when asked (older inputs stay as they were)', () => {
  const asked = taskInput(CONFIG, runRequestSchema.parse({ message: 'hi', computer: { network: true } }), START);
  expect(asked.limits.computerNetwork).toBe(true);
  for (const computer of [undefined, { network: false }, {}]) {
    const plain = taskInput(CONFIG, runRequestSchema.parse({ message: 'hi', ...(computer && { computer }) }), START);
    expect(plain.limits).not.toHaveProperty('computerNetwork');
  }
});

test("approval gates reach the run only when some are set: the request's, an MCP server's, the deployment's", () => {
  const build = (body: object, config: Partial<TaskInputConfig> = {}) =>
    taskInput({ ...CONFIG, ...config }, runRequestSchema.parse({ message: 'hi', ...body }), START);
  const plain = build({});
  expect(plain.request.requireApproval).toBeUndefined();
  expect(plain.limits.approvalTools).toBeUndefined();
  expect(plain.limits.approvalTimeoutMs).toBeUndefined();

  const asked = build({ require_approval: { tools: ['bash', 'browser_*'], timeout: 60 } });
  expect(asked.request.requireApproval).toEqual({ tools: ['bash', 'browser_*'], timeout: 60, onTimeout: 'deny' });
  expect(asked.limits.approvalTimeoutMs).toBe(86_400_000);

  const server = { serverName: 'fs', serverUrl: 'https://mcp.example.com/mcp' };
  const mcp = build({
    mcp_servers: [
      { ...server, require_approval: { always: { tool_names: ['write'] } } },
      { ...server, serverName: 'ro', require_approval: 'never' },
    ],
  });
  expect(mcp.request.mcpServers).toEqual([
    { name: 'fs', url: server.serverUrl, requireApproval: { always: { tool_names: ['write'] } } },
    { name: 'ro', url: server.serverUrl },
  ]);
  expect(mcp.limits.approvalTimeoutMs).toBe(86_400_000);

  const deployed = build({}, { APPROVAL_REQUIRED_TOOLS: ['bash'], APPROVAL_TIMEOUT_S: 600 });
  expect(deployed.limits).toMatchObject({ approvalTools: ['bash'], approvalTimeoutMs: 600_000 });
});
