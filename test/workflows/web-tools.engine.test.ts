// The web tools and the browser in the task workflow, on the engine (fake model, the real runWebTool activity
// around fake tools, the real workflows): a turn's web calls run at once, each an activity
// summarised by the tool's name; a call that saved a file is followed by agent_files_changed; a
// run rebuilt from its history at every workflow task (a worker caching none) takes the same
// decisions. The history is saved (UPDATE_HISTORIES=1) for the replay test.
import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createEnv, replayingWorker, saveHistories as save } from './env';
import { fakeActivities, recorder, taskInput } from './fake-activities';
import type { TaskResult } from '../../workflows/types';

jest.setTimeout(90_000);
let env: TestWorkflowEnvironment;
const taskQueue = `wf-web-${randomUUID()}`;
const rec = recorder();

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

/** A run owning its session's turn whose model makes these calls, turn after turn, offered `tools`. */
const turnsInput = (turns: unknown[][][], tools: string[]) =>
  taskInput(`turns:${JSON.stringify(turns)}`, { joinGraceMs: 300, ownsTurn: true, tools });

test('a search and two fetches run at once as runWebTool activities named by their tool; a saved file is announced; rebuilt from history at every task', async () => {
  const w = await replayingWorker(
    env,
    taskQueue,
    fakeActivities(() => env, taskQueue, rec),
    0,
  );
  await w.runUntil(async () => {
    const turns = [
      [
        ['web_search', { query: 'tides' }],
        ['web_fetch', { url: 'https://a.example/tides' }],
        ['web_fetch', { url: 'https://b.example/chart.png' }],
      ],
      [['web_fetch', { url: 'https://b.example/tides', format: 'text' }]],
    ];
    const i = turnsInput(turns, ['calculate', 'web_fetch', 'web_search']);
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    const r = (await h.result()) as TaskResult;
    expect(r.output).toBe(
      'results:1. A\n   https://a.example/tides\n\n2. B\n   https://b.example/tides,' +
        'URL: https://a.example/tides\n\npage,URL: https://b.example/chart.png\n\nsaved,URL: https://b.example/tides\n\npage',
    );
    const events = (await h.fetchHistory()).events ?? [];
    const scheduled = events.flatMap((e) => {
      const a = e.activityTaskScheduledEventAttributes;
      if (a?.activityType?.name !== 'runWebTool') return [];
      return [
        { summary: defaultPayloadConverter.fromPayload<string>(e.userMetadata!.summary!), id: Number(e.eventId) },
      ];
    });
    expect(scheduled.map((s) => s.summary)).toEqual(['web_search', 'web_fetch', 'web_fetch', 'web_fetch']);
    // The first turn's three were scheduled in one workflow task: none waited for another.
    const webIds = new Set(scheduled.map((s) => s.id));
    const firstDone = events.find((e) => webIds.has(Number(e.activityTaskCompletedEventAttributes?.scheduledEventId)));
    expect(scheduled.slice(0, 3).map((s) => s.id < Number(firstDone!.eventId))).toEqual([true, true, true]);
    // The png fetch saved a file: announced once, after the round's responses.
    const types = rec.published[i.taskId].map((e) => e.type);
    expect(types.filter((t) => t === 'agent_files_changed')).toHaveLength(1);
    const responses = types.flatMap((t, k) => (t === 'agent_tool_response' ? [k] : []));
    const announced = types.indexOf('agent_files_changed');
    expect(announced).toBeGreaterThan(responses[2]);
    expect(announced).toBeLessThan(responses[3]);
    await save('web-tools', h);
  });
});

test("browser calls are runBrowserTool activities named by their tool; a screenshot is announced with its file; the run's page limit refuses a navigation without an activity", async () => {
  const w = await replayingWorker(
    env,
    taskQueue,
    fakeActivities(() => env, taskQueue, rec),
    0,
  );
  await w.runUntil(async () => {
    const turns = [
      [['browser_navigate', { url: 'https://a.example/' }]],
      [
        ['browser_take_screenshot', {}],
        ['browser_snapshot', {}],
      ],
      [['browser_navigate', { url: 'https://b.example/' }]],
    ];
    const base = turnsInput(turns, ['browser_navigate', 'browser_snapshot', 'browser_take_screenshot']);
    const i = { ...base, limits: { ...base.limits, browserMaxPages: 1, browserCallTimeoutMs: 90_000 } };
    const h = await env.client.workflow.start('agentTask', { taskQueue, workflowId: i.taskId, args: [i] });
    const r = (await h.result()) as TaskResult;
    expect(r.output).toBe(
      'results:browser_navigate https://a.example/,Saved a screenshot to /workspace/screenshots/shot.png,browser_snapshot,' +
        'Error: this run has opened 1 pages, its limit (BROWSER_MAX_PAGES_PER_RUN); answer with what you have.',
    );
    expect(rec.calls[i.taskId].filter((c) => c.startsWith('runBrowserTool'))).toEqual([
      'runBrowserTool:browser_navigate',
      'runBrowserTool:browser_take_screenshot',
      'runBrowserTool:browser_snapshot',
    ]);
    const events = (await h.fetchHistory()).events ?? [];
    const scheduled = events.flatMap((e) =>
      e.activityTaskScheduledEventAttributes?.activityType?.name === 'runBrowserTool'
        ? [
            {
              summary: defaultPayloadConverter.fromPayload<string>(e.userMetadata!.summary!),
              timeoutMs: Number(e.activityTaskScheduledEventAttributes.startToCloseTimeout!.seconds) * 1000,
              attempts: e.activityTaskScheduledEventAttributes.retryPolicy!.maximumAttempts,
            },
          ]
        : [],
    );
    expect(scheduled).toEqual(
      ['browser_navigate', 'browser_take_screenshot', 'browser_snapshot'].map((summary) => ({
        summary,
        timeoutMs: 90_000,
        attempts: 2,
      })),
    );
    // After the screenshot's round: the file it saved, then the screenshot itself.
    const types = rec.published[i.taskId].map((e) => e.type);
    const changed = types.indexOf('agent_files_changed');
    expect(changed).toBeGreaterThan(0);
    expect(types[changed + 1]).toBe('agent_screenshot');
    await save('browser-tools', h);
  });
});
