// The worker's activities wrapped for metrics: what each attempt records, from
// its input and outcome (no Temporal: the attempt number is given).
import { Registry, type Metric } from 'prom-client';
import { CancelledFailure } from '@temporalio/common';
import { instrumentActivities } from '../../../src/common/metrics/activity-metrics';
import { WorkerMetrics } from '../../../src/common/metrics/worker-metrics';
import { loadConfig } from '../../../src/common/config';

const config = loadConfig({ MODEL_BASE: 'm-base', MODEL_PRICES: '{"m-base":{"input":2,"output":10}}' });

async function values(metric: Metric<string>): Promise<Record<string, number>> {
  const { values } = await metric.get();
  return Object.fromEntries(values.map((v) => [JSON.stringify(v.labels), v.value]));
}

/** A histogram's _count or _sum for the labels given. */
async function stat(
  metric: Metric<string>,
  which: '_count' | '_sum',
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const { values } = (await metric.get()) as {
    values: { metricName?: string; labels: Record<string, string | number>; value: number }[];
  };
  return values.find(
    (v) => v.metricName?.endsWith(which) && Object.entries(labels).every(([k, x]) => v.labels[k] === x),
  )?.value;
}

function setup(attempt = 1) {
  const metrics = new WorkerMetrics(new Registry());
  const activities = {
    modelTurn: async (_input: { mode: string }) => ({
      usage: { promptTokens: 1000, completionTokens: 200 },
      content: 'hi',
    }),
    runTool: async (input: { fail?: boolean; error?: boolean }) => {
      if (input.fail) throw new Error('machinery fault');
      return { content: 'x', isError: input.error === true };
    },
    callMcpTool: async (input: { cancel?: boolean }) => {
      if (input.cancel) throw new CancelledFailure('cancelled');
      return { content: 'y', isError: false };
    },
    publishEnd: async (_input: { view: object }) => undefined,
    listMcpTools: async () => ({ tools: [] }),
  };
  return { metrics, acts: instrumentActivities(activities, metrics, config, () => attempt) };
}

test('a model turn counts its tokens and cost by model, and its duration as a model_turn step', async () => {
  const { metrics, acts } = setup();
  expect(await acts.modelTurn({ mode: 'base' })).toMatchObject({ content: 'hi' });
  expect(await values(metrics.modelTokens)).toEqual({
    '{"model":"m-base","type":"prompt"}': 1000,
    '{"model":"m-base","type":"completion"}': 200,
  });
  // 1000 * 2 / 1e6 + 200 * 10 / 1e6
  expect((await values(metrics.modelCost))['{"model":"m-base"}']).toBeCloseTo(0.004, 9);
  expect(await stat(metrics.stepSeconds, '_count', { kind: 'model_turn' })).toBe(1);
});

test('tool calls by server and outcome: an error result, a failed attempt; a cancelled call is not counted', async () => {
  const { metrics, acts } = setup();
  await acts.runTool({});
  await acts.runTool({ error: true });
  await expect(acts.runTool({ fail: true })).rejects.toThrow('machinery fault');
  await acts.callMcpTool({});
  await expect(acts.callMcpTool({ cancel: true })).rejects.toThrow('cancelled');
  expect(await values(metrics.toolCalls)).toEqual({
    '{"server":"builtin","outcome":"ok"}': 1,
    '{"server":"builtin","outcome":"error"}': 2,
    '{"server":"mcp","outcome":"ok"}': 1,
  });
  // Every attempt's duration, failed ones included.
  expect(await stat(metrics.stepSeconds, '_count', { kind: 'tool_call' })).toBe(5);
});

test('an attempt after the first is a retry of its activity type; a first attempt is not', async () => {
  const first = setup(1);
  await first.acts.listMcpTools();
  expect(await values(first.metrics.retries)).toEqual({});
  const third = setup(3);
  await third.acts.listMcpTools();
  await third.acts.modelTurn({ mode: 'base' });
  expect(await values(third.metrics.retries)).toEqual({
    '{"activity":"listMcpTools"}': 1,
    '{"activity":"modelTurn"}': 1,
  });
});

test("a run's end records its queue wait and its duration by final status", async () => {
  const { metrics, acts } = setup();
  await acts.publishEnd({
    view: {
      status: 'completed',
      created_at: '2025-01-01T00:00:00.000Z',
      started_at: '2025-01-01T00:00:02.500Z',
      completed_at: '2025-01-01T00:00:10.000Z',
    },
  });
  // Cancelled while queued: a duration, no queue wait.
  await acts.publishEnd({
    view: {
      status: 'cancelled',
      created_at: '2025-01-01T00:00:00.000Z',
      started_at: null,
      completed_at: '2025-01-01T00:00:01.000Z',
    },
  });
  expect([await stat(metrics.queueWait, '_count'), await stat(metrics.queueWait, '_sum')]).toEqual([1, 2.5]);
  expect([
    await stat(metrics.taskSeconds, '_sum', { status: 'completed' }),
    await stat(metrics.taskSeconds, '_sum', { status: 'cancelled' }),
  ]).toEqual([10, 1]);
});

test('an outcome the metrics cannot read never fails the activity', async () => {
  const metrics = new WorkerMetrics(new Registry());
  const acts = instrumentActivities(
    { modelTurn: async (_input: { mode: string }) => ({ content: 'no usage' }) },
    metrics,
    config,
    () => 1,
  );
  await expect(acts.modelTurn({ mode: 'base' })).resolves.toEqual({ content: 'no usage' });
});
