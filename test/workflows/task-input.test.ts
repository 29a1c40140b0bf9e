// readTaskInput (workflows/task-input.ts): the one reader of a task's input at every workflow entry.
// Both shapes: the grouped input of today as it is, the flat one of runs started before it with
// each field in its group and none lost; and every task input of the saved histories (the starts
// of agentTask, dagWorkflow and dagStep, the children and continuations they start, and a
// schedule's prepared task) reads so, flat in the generations before 6-grouped-task-input, grouped
// in it and after.
import fs from 'node:fs';
import path from 'node:path';
import { type FlatTaskInput, readTaskInput } from '../../workflows/task-input';
import type { TaskInput } from '../../workflows/types';
import { flatInput } from './fake-activities';

/** A flat input with every field of the flat shape set (Required: one missing does not compile). */
const FULL_FLAT = {
  taskId: 'task_1',
  account: 'acct',
  session: 'sess_1',
  message: 'hello',
  system: 'be brief',
  rules: ['one'],
  mode: 'flash',
  streamTokens: true,
  background: true,
  createdAt: '2026-11-28T00:00:00.000Z',
  metadata: { a: 1 },
  multitask: 'reject',
  modelHeartbeatTimeoutMs: 5000,
  slots: { limit: 3 },
  maxSteps: 7,
  maxCost: 0.5,
  maxDurationMs: 60_000,
  tools: ['calculate'],
  toolResultMaxChars: 1000,
  mcpServers: [{ name: 'srv', url: 'http://mcp.example.com/mcp', token: 't' }],
  agents: [{ name: 'billing', description: 'bills' }],
  datastores: [{ id: 'ds_1', name: 'shop' }],
  queries: [{ name: 'orders', description: 'orders of a customer', query: 'SELECT 1', datastore: 'shop' }],
  mcpCallTimeoutMs: 30_000,
  mcpConnectTimeoutMs: 2000,
  callback: { url: 'http://hooks.example.com/a', headers: {}, retryDelaysMs: [10], timeoutMs: 1000 },
  carry: { step: 2 } as never,
  price: { input: 1, output: 2 },
  joinGraceMs: 300,
  ownsTurn: true,
  joinsSession: true,
  workflows: [{ id: 'w', name: 'W', description: 'a workflow', steps: [] }],
  step: { tag: { workflow_id: 'w', step_id: 's' }, threadWorkflowId: 'task_1:w:s', producerPrefix: 'p:' },
  finalOutput: { name: 'out', strict: false, schema: { type: 'object' } },
  schedules: [{ schedule_id: 'sched_1', next_run_at: null }],
} satisfies Required<FlatTaskInput>;

test('a flat input reads with each field in its group', () => {
  const f = FULL_FLAT;
  expect(readTaskInput(f)).toStrictEqual({
    taskId: f.taskId,
    account: f.account,
    session: f.session,
    createdAt: f.createdAt,
    request: {
      message: f.message,
      system: f.system,
      rules: f.rules,
      mode: f.mode,
      streamTokens: f.streamTokens,
      metadata: f.metadata,
      mcpServers: f.mcpServers,
      agents: f.agents,
      datastores: f.datastores,
      queries: f.queries,
      workflows: f.workflows,
      finalOutput: f.finalOutput,
      callback: f.callback,
      schedules: f.schedules,
    },
    limits: {
      maxSteps: f.maxSteps,
      maxCost: f.maxCost,
      maxDurationMs: f.maxDurationMs,
      tools: f.tools,
      toolResultMaxChars: f.toolResultMaxChars,
      modelHeartbeatTimeoutMs: f.modelHeartbeatTimeoutMs,
      mcpCallTimeoutMs: f.mcpCallTimeoutMs,
      mcpConnectTimeoutMs: f.mcpConnectTimeoutMs,
      price: f.price,
    },
    admission: {
      background: f.background,
      multitask: f.multitask,
      slots: f.slots,
      joinGraceMs: f.joinGraceMs,
      ownsTurn: f.ownsTurn,
      joinsSession: f.joinsSession,
    },
    step: f.step,
    carry: f.carry,
  });
  // Nothing lost, nothing added: the groups flattened again are the input.
  expect(flatInput(readTaskInput(f))).toStrictEqual(f);
});

test('a field the flat input lacks stays absent in its group (not present as undefined)', () => {
  const {
    system: _s,
    rules: _r,
    slots: _sl,
    maxCost: _mc,
    maxDurationMs: _md,
    mcpServers: _ms,
    agents: _a,
    datastores: _d,
    queries: _q,
    mcpCallTimeoutMs: _mct,
    mcpConnectTimeoutMs: _mcc,
    callback: _c,
    carry: _ca,
    price: _p,
    joinGraceMs: _j,
    ownsTurn: _o,
    joinsSession: _js,
    workflows: _w,
    step: _st,
    finalOutput: _f,
    schedules: _sc,
    ...required
  } = FULL_FLAT;
  const read = readTaskInput(required);
  expect(Object.keys(read).sort()).toEqual([
    'account',
    'admission',
    'createdAt',
    'limits',
    'request',
    'session',
    'taskId',
  ]);
  expect(Object.keys(read.request).sort()).toEqual(['message', 'metadata', 'mode', 'streamTokens']);
  expect(Object.keys(read.limits).sort()).toEqual([
    'maxSteps',
    'modelHeartbeatTimeoutMs',
    'toolResultMaxChars',
    'tools',
  ]);
  expect(Object.keys(read.admission).sort()).toEqual(['background', 'multitask']);
  expect(flatInput(read)).toStrictEqual(required);
});

test('a grouped input reads as it is, and reading is idempotent', () => {
  const grouped = readTaskInput(FULL_FLAT);
  expect(readTaskInput(grouped)).toBe(grouped);
  const copy: TaskInput = JSON.parse(JSON.stringify(grouped));
  expect(readTaskInput(copy)).toBe(copy);
});

// --- every task input of the saved histories ---

const HISTORIES = path.join(__dirname, 'histories');
/** The first generation recorded with the grouped input (6-grouped-task-input); those before it carry it flat. */
const GROUPED_FROM = 6;
/** Whether a saved history's generation (the number its folder starts with) was recorded with the grouped input. */
const groupedIn = (file: string) => parseInt(file, 10) >= GROUPED_FROM;

interface Payloads {
  payloads?: { metadata?: { encoding?: string }; data?: string }[];
}

/** The first argument (or result) of a payload list, decoded (the saved histories are not encrypted). */
function first(p: Payloads | undefined): any {
  const payload = p?.payloads?.[0];
  if (!payload?.data) return undefined;
  expect(Buffer.from(payload.metadata?.encoding ?? '', 'base64').toString()).toBe('json/plain');
  return JSON.parse(Buffer.from(payload.data, 'base64').toString());
}

/** Where a workflow type's argument holds the task's input. */
const TASK_OF: Record<string, (arg: any) => unknown> = {
  agentTask: (arg) => arg,
  dagWorkflow: (arg) => arg?.task,
  dagStep: (arg) => arg?.task,
};

/** Every task input a history holds, by where it was found (its workflow type or activity). */
function taskInputsOf(file: string): { where: string; input: unknown }[] {
  const events: any[] = JSON.parse(fs.readFileSync(path.join(HISTORIES, file), 'utf8')).events;
  const type = events[0].workflowExecutionStartedEventAttributes.workflowType.name as string;
  const out: { where: string; input: unknown }[] = [];
  const scheduled = new Map<string, string>();
  for (const e of events) {
    const started = e.workflowExecutionStartedEventAttributes;
    if (started && TASK_OF[type]) out.push({ where: type, input: TASK_OF[type](first(started.input)) });
    const child = e.startChildWorkflowExecutionInitiatedEventAttributes;
    const childType = child?.workflowType?.name as string | undefined;
    if (childType && TASK_OF[childType]) out.push({ where: childType, input: TASK_OF[childType](first(child.input)) });
    const continued = e.workflowExecutionContinuedAsNewEventAttributes;
    if (continued && TASK_OF[type]) out.push({ where: type, input: TASK_OF[type](first(continued.input)) });
    const activity = e.activityTaskScheduledEventAttributes;
    if (activity) scheduled.set(String(e.eventId), activity.activityType.name);
    const done = e.activityTaskCompletedEventAttributes;
    if (done && scheduled.get(String(done.scheduledEventId)) === 'prepareScheduledTask')
      out.push({ where: 'prepareScheduledTask', input: first(done.result)?.input });
  }
  return out;
}

const files = fs
  .readdirSync(HISTORIES, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.json'))
  .sort();
const found = files.flatMap((file) => taskInputsOf(file).map((x) => ({ file, ...x })));

test('the saved histories hold task inputs of both shapes at every entry', () => {
  const seen = (grouped: boolean) => new Set(found.filter((x) => groupedIn(x.file) === grouped).map((x) => x.where));
  const every = ['agentTask', 'dagWorkflow', 'dagStep', 'prepareScheduledTask'];
  expect([...seen(false)].sort()).toEqual(every.sort());
  expect([...seen(true)].sort()).toEqual(every.sort());
});

test.each(found.map((x) => [x.file, x.where, x.input] as const))(
  '%s: the %s input reads to the grouped input with the same fields',
  (file, _where, input) => {
    const grouped = groupedIn(file);
    const raw = input as TaskInput | FlatTaskInput;
    expect('request' in raw).toBe(grouped);
    const read = readTaskInput(raw);
    expect(typeof read.request.message).toBe('string');
    expect(typeof read.limits.maxSteps).toBe('number');
    expect(typeof read.admission.multitask).toBe('string');
    if (grouped) expect(read).toBe(raw);
    else expect(flatInput(read)).toStrictEqual(raw);
  },
);
