// List / Count workflow executions through the SDK: system and custom search
// attributes, AND/OR/parentheses, GROUP BY ExecutionStatus, rejected queries, and
// paging. Every query is scoped to this file's own task queue, since other test
// files (or earlier runs, on a real server) leave executions of their own.
import { randomUUID } from 'node:crypto';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { WorkflowExecutionInfo, WorkflowHandle } from '@temporalio/client';
import { waitUntil } from '../support/wait-until';
import { createEnv, Env, uid } from './harness';
import { visDone, visFail, visWait } from './workflows/visibility';
import * as activities from './activities/visibility';
import { S, outcome, codeName } from './fuzz-tools';

const KW = defineSearchAttributeKey('CustomKeyword', SearchAttributeType.KEYWORD);
const INT = defineSearchAttributeKey('CustomInt', SearchAttributeType.INT);
const DT = defineSearchAttributeKey('CustomDatetime', SearchAttributeType.DATETIME);
const IVT = temporal.api.enums.v1.IndexedValueType;

let env: Env;
const tag = randomUUID().slice(0, 8);
const handles: Record<string, WorkflowHandle> = {};
/** Runs in the order they started; each finished (if it finishes) before the next started. */
const order = ['a1', 'a2', 'b1', 'f', 't', 'c', 'r'] as const;
let info: Record<string, WorkflowExecutionInfo> = {};

/** Registers CustomDatetime where missing (a real server may not have it). */
async function ensureDatetimeAttribute(): Promise<void> {
  const ops = env.connection.operatorService;
  const has = async () =>
    (await ops.listSearchAttributes({ namespace: env.namespace })).customAttributes?.CustomDatetime !== undefined;
  if (await has()) return;
  await ops.addSearchAttributes({
    namespace: env.namespace,
    searchAttributes: { CustomDatetime: IVT.INDEXED_VALUE_TYPE_DATETIME },
  });
  await waitUntil('CustomDatetime to be registered', has, Boolean);
}

const tq = () => env.taskQueue;
const scoped = (q: string) => `TaskQueue = '${tq()}' AND (${q})`;
// Part of the fixture: 20 ms between one run's close and the next one's start, so that the
// start and close times the ordering tests compare are never equal.
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ids(query: string): Promise<string[]> {
  const out: string[] = [];
  for await (const wf of env.client.workflow.list({ query })) out.push(wf.workflowId);
  return out;
}

/** The fixture's short name of a workflow id. */
function nameOf(id: string): string {
  return Object.entries(handles).find(([, h]) => h.workflowId === id)?.[0] ?? id;
}

/** The fixture's short names of the runs a query lists, in the order listed. */
async function names(query: string): Promise<string[]> {
  return (await ids(query)).map(nameOf);
}

const sorted = async (query: string) => (await names(query)).sort();

beforeAll(async () => {
  env = await createEnv({ workflowsPath: require.resolve('./workflows/visibility'), activities });
  await ensureDatetimeAttribute();
  const attrs = (kw: string | undefined, n: number, dt?: string) => [
    ...(kw ? [{ key: KW, value: kw }] : []),
    { key: INT, value: n },
    ...(dt ? [{ key: DT, value: new Date(dt) }] : []),
  ];
  const opts = (name: string, a: ReturnType<typeof attrs>) => ({
    taskQueue: tq(),
    workflowId: uid(`vis-${name}`),
    typedSearchAttributes: a,
  });
  await env.withWorker(async () => {
    handles.a1 = await env.client.workflow.start(visDone, {
      args: ['a1'],
      ...opts('a1', attrs(`${tag}-a`, 1, '2030-01-01T00:00:00.000Z')),
    });
    await handles.a1.result();
    await sleep(20);
    handles.a2 = await env.client.workflow.start(visDone, {
      args: ['a2'],
      ...opts('a2', attrs(`${tag}-a`, 2, '2030-02-01T00:00:00.000Z')),
    });
    await handles.a2.result();
    await sleep(20);
    handles.b1 = await env.client.workflow.start(visDone, {
      args: ['b1'],
      ...opts('b1', attrs(`${tag}-b`, 3, '2030-03-01T00:00:00.000Z')),
    });
    await handles.b1.result();
    await sleep(20);
    handles.f = await env.client.workflow.start(visFail, opts('f', attrs(`${tag}-b`, 4)));
    await expect(handles.f.result()).rejects.toThrow();
    await sleep(20);
    handles.t = await env.client.workflow.start(visWait, opts('t', attrs(`${tag}-c`, 5)));
    await handles.t.terminate('for visibility');
    await sleep(20);
    handles.c = await env.client.workflow.start(visWait, opts('c', attrs(`${tag}-c`, 6)));
    await handles.c.cancel();
    await expect(handles.c.result()).rejects.toThrow();
    await sleep(20);
    handles.r = await env.client.workflow.start(visWait, opts('r', attrs(undefined, 7)));
    // Let its first task complete before the worker goes: a task finished during shutdown
    // leaves the run stuck to that worker's sticky queue until the sticky timeout.
    await waitUntil(
      'the first workflow task of r',
      () => handles.r.describe(),
      (d) => d.historyLength >= 4,
    );
  });
  // Visibility is eventually consistent on a real server: wait until it has caught up.
  await waitUntil(
    'closed runs to be visible',
    () => env.client.workflow.count(`TaskQueue = '${tq()}' AND ExecutionStatus != 'Running'`),
    (c) => c.count === 6,
  );
  await waitUntil(
    'all runs to be visible',
    () => env.client.workflow.count(`TaskQueue = '${tq()}'`),
    (c) => c.count === 7,
  );
  const listed: WorkflowExecutionInfo[] = [];
  for await (const wf of env.client.workflow.list({ query: `TaskQueue = '${tq()}'` })) listed.push(wf);
  info = Object.fromEntries(order.map((k) => [k, listed.find((w) => w.workflowId === handles[k].workflowId)!]));
});

afterAll(async () => {
  await env?.teardown();
});

const iso = (d: Date, plusMs = 0) => new Date(d.getTime() + plusMs).toISOString();

test('each run is listed with its type, status, times and search attributes', () => {
  expect(order.map((k) => info[k]?.status.name)).toEqual([
    'COMPLETED',
    'COMPLETED',
    'COMPLETED',
    'FAILED',
    'TERMINATED',
    'CANCELLED',
    'RUNNING',
  ]);
  expect(info.a1.type).toBe('visDone');
  expect(info.a1.taskQueue).toBe(tq());
  expect(info.a1.typedSearchAttributes.get(KW)).toBe(`${tag}-a`);
  expect(info.a1.typedSearchAttributes.get(INT)).toBe(1);
  expect(info.a1.typedSearchAttributes.get(DT)?.toISOString()).toBe('2030-01-01T00:00:00.000Z');
  expect(info.r.closeTime).toBeUndefined();
  for (let i = 1; i < order.length; i++)
    expect(info[order[i]].startTime.getTime()).toBeGreaterThan(info[order[i - 1]].startTime.getTime());
});

test('system attributes: WorkflowId, WorkflowType, ExecutionStatus, TaskQueue', async () => {
  expect(await names(`WorkflowId = '${handles.b1.workflowId}'`)).toEqual(['b1']);
  expect(
    await sorted(scoped(`WorkflowId IN ('${handles.a1.workflowId}', '${handles.f.workflowId}', 'no-such-id')`)),
  ).toEqual(['a1', 'f']);
  expect(await sorted(scoped(`WorkflowType = 'visDone'`))).toEqual(['a1', 'a2', 'b1']);
  expect(await sorted(scoped(`WorkflowType != 'visDone'`))).toEqual(['c', 'f', 'r', 't']);
  const byStatus = async (s: string) => sorted(scoped(`ExecutionStatus = '${s}'`));
  expect(await byStatus('Completed')).toEqual(['a1', 'a2', 'b1']);
  expect(await byStatus('Failed')).toEqual(['f']);
  expect(await byStatus('Terminated')).toEqual(['t']);
  expect(await byStatus('Canceled')).toEqual(['c']);
  expect(await byStatus('Running')).toEqual(['r']);
  expect((await env.client.workflow.count(scoped(`ExecutionStatus != 'Running'`))).count).toBe(6);
  expect((await env.client.workflow.count(`TaskQueue = '${tq()}-other'`)).count).toBe(0);
});

test('StartTime and CloseTime ranges', async () => {
  const start = (k: string) => info[k].startTime;
  expect(await sorted(scoped(`StartTime >= '${iso(start('f'))}'`))).toEqual(['c', 'f', 'r', 't']);
  expect(await sorted(scoped(`StartTime < '${iso(start('b1'))}'`))).toEqual(['a1', 'a2']);
  expect(await sorted(scoped(`StartTime BETWEEN '${iso(start('a2'))}' AND '${iso(start('t'), -1)}'`))).toEqual([
    'a2',
    'b1',
    'f',
  ]);
  const close = (k: string) => info[k].closeTime!;
  expect(await sorted(scoped(`CloseTime >= '${iso(close('b1'))}'`))).toEqual(['b1', 'c', 'f', 't']);
  expect(await sorted(scoped(`CloseTime < '${iso(close('a2'))}'`))).toEqual(['a1']);
  expect(await sorted(scoped(`StartTime > '2000-01-01T00:00:00Z' AND CloseTime < '${iso(close('t'))}'`))).toEqual([
    'a1',
    'a2',
    'b1',
    'f',
  ]);
});

test('custom keyword, int and datetime attributes', async () => {
  expect(await sorted(`CustomKeyword = '${tag}-a'`)).toEqual(['a1', 'a2']);
  expect(await sorted(`CustomKeyword IN ('${tag}-a', '${tag}-c')`)).toEqual(['a1', 'a2', 'c', 't']);
  expect(await sorted(scoped(`CustomKeyword != '${tag}-a'`))).toEqual(['b1', 'c', 'f', 't']);
  expect(await sorted(scoped('CustomInt > 4'))).toEqual(['c', 'r', 't']);
  expect(await sorted(scoped('CustomInt BETWEEN 2 AND 4'))).toEqual(['a2', 'b1', 'f']);
  expect(await sorted(scoped('CustomInt IN (1, 7)'))).toEqual(['a1', 'r']);
  expect(await sorted(scoped(`CustomDatetime >= '2030-02-01T00:00:00Z'`))).toEqual(['a2', 'b1']);
  expect(await sorted(scoped(`CustomDatetime < '2030-02-01T00:00:00.000Z'`))).toEqual(['a1']);
});

test('AND, OR and parentheses', async () => {
  expect(await sorted(scoped(`(CustomInt = 1 OR CustomInt = 6) AND ExecutionStatus = 'Completed'`))).toEqual(['a1']);
  expect(await sorted(scoped(`WorkflowType = 'visFail' OR (CustomInt >= 5 AND ExecutionStatus != 'Running')`))).toEqual(
    ['c', 'f', 't'],
  );
  expect(await sorted(scoped(`CustomKeyword = '${tag}-b' OR CustomKeyword = '${tag}-c' AND CustomInt = 6`))).toEqual([
    'b1',
    'c',
    'f',
  ]);
  expect(await sorted(scoped(`(CustomKeyword = '${tag}-b' OR CustomKeyword = '${tag}-c') AND CustomInt = 6`))).toEqual([
    'c',
  ]);
  expect(
    (await env.client.workflow.count(scoped(`WorkflowType = 'visDone' AND (CustomInt < 2 OR CustomInt > 2)`))).count,
  ).toBe(2);
});

test('count GROUP BY ExecutionStatus', async () => {
  const res = await env.client.workflow.count(`TaskQueue = '${tq()}' GROUP BY ExecutionStatus`);
  expect(res.count).toBe(7);
  const groups = Object.fromEntries(res.groups.map((g) => [String(g.groupValues[0]), g.count]));
  expect(groups).toEqual({ Running: 1, Completed: 3, Failed: 1, Canceled: 1, Terminated: 1 });
});

test('an unsupported or invalid query is INVALID_ARGUMENT naming the offending part', async () => {
  const ws = env.connection.workflowService;
  const cases: [string, 'list' | 'count', RegExp][] = [
    ["Bogus = 'x'", 'list', /Bogus/],
    [`TaskQueue = '${tq()}' LIMIT 5`, 'list', /LIMIT/],
    ["CustomInt = 'abc'", 'list', /CustomInt/],
    ["StartTime > 'yesterday'", 'count', /yesterday/],
    [`TaskQueue = '${tq()}' GROUP BY WorkflowType`, 'count', /WorkflowType/],
    ["WorkflowId = 'a' AND", 'count', /malformed|syntax/i],
  ];
  for (const [query, kind, part] of cases) {
    const o = await outcome(
      kind === 'list'
        ? ws.listWorkflowExecutions({ namespace: env.namespace, query })
        : ws.countWorkflowExecutions({ namespace: env.namespace, query }),
    );
    expect(`${query} -> ${codeName(o.code)}`).toBe(`${query} -> INVALID_ARGUMENT`);
    expect(`${query} -> ${o.details}`).toMatch(part);
  }
  // The SDK surfaces the same rejection.
  const err = await (async () => {
    for await (const _ of env.client.workflow.list({ query: "Bogus = 'x'" })) void _;
  })().catch((e) => e);
  expect(err?.cause?.code ?? err?.code).toBe(S.INVALID_ARGUMENT);
  await expect(env.client.workflow.count("Bogus = 'x'")).rejects.toThrow();
});

test('default order: running first, then most recently closed', async () => {
  expect(await names(`TaskQueue = '${tq()}'`)).toEqual(['r', 'c', 't', 'f', 'b1', 'a2', 'a1']);
});

test('paging: SDK pageSize, raw page tokens, absurd page sizes, and runs started between pages', async () => {
  const all: string[] = [];
  for await (const wf of env.client.workflow.list({ query: `TaskQueue = '${tq()}'`, pageSize: 2 }))
    all.push(wf.workflowId);
  expect(all.map(nameOf)).toEqual(['r', 'c', 't', 'f', 'b1', 'a2', 'a1']);

  const ws = env.connection.workflowService;
  const query = `TaskQueue = '${tq()}'`;
  for (const pageSize of [0, -5, 100000]) {
    const res = await ws.listWorkflowExecutions({ namespace: env.namespace, query, pageSize });
    expect(res.executions).toHaveLength(7);
  }
  const page1 = await ws.listWorkflowExecutions({ namespace: env.namespace, query, pageSize: 3 });
  expect(page1.executions).toHaveLength(3);
  expect(page1.nextPageToken?.length).toBeGreaterThan(0);
  // A new run sorts first; the next page must continue where the first stopped, not shift.
  handles.r2 = await env.client.workflow.start(visWait, { taskQueue: tq(), workflowId: uid('vis-r2') });
  await waitUntil(
    'the new run to be visible',
    () => env.client.workflow.count(query),
    (c) => c.count === 8,
  );
  const seen = page1.executions!.map((e) => e.execution!.workflowId!);
  let token = page1.nextPageToken;
  while (token?.length) {
    const page = await ws.listWorkflowExecutions({
      namespace: env.namespace,
      query,
      pageSize: 3,
      nextPageToken: token,
    });
    seen.push(...page.executions!.map((e) => e.execution!.workflowId!));
    token = page.nextPageToken;
  }
  expect(seen.map(nameOf)).toEqual(['r', 'c', 't', 'f', 'b1', 'a2', 'a1']);
});

test('every workflow of this file replays', async () => {
  await handles.r.signal('finish');
  await handles.r2.terminate('done');
  await env.withWorker(() => handles.r.result());
  for (const h of Object.values(handles)) await env.replay(h);
});
