// The web phase: what web_fetch costs over a plain fetch of the same page. The page is an article
// of the demo web site (src/dev/demo-web), served by the bench process on loopback (the bench's
// stack allowlists 127.0.0.1). Per run: one web_fetch call; its activity's time is read from the
// task's history (started -> completed, the server's stamps: the policy's checks, the GET, the
// readable markdown, the publish on the relay), then the bench fetches the same page itself
// (GET and the whole body, no conversion). The row is the difference, per run.
// The browser phase: browser_navigate (which answers the page's snapshot) of the same page in a
// session's context, its runBrowserTool activity's time from history; the first run launches
// Chromium and is not measured.
import type { Client as TemporalClient } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { startDemoWebServer } from '../src/dev/demo-web/server';
import { completedTaskId, summarize } from './measure';
import { Row, rowOf } from './report';
import type { Bench } from './stack';

export const WEB_FETCH_LABEL = 'web_fetch: activity time over a direct fetch of the same page';
export const DIRECT_FETCH_LABEL = 'baseline: direct fetch of the same page (bench process)';
export const BROWSER_LABEL = 'browser_navigate + snapshot of a local page (runBrowserTool activity)';

export async function webPhase(b: Bench): Promise<Row[]> {
  const site = await startDemoWebServer();
  const temporal = await b.temporal();
  const page = `${site.url}/articles/durable-execution`;
  const overhead: number[] = [];
  const direct: number[] = [];
  let errors = 0;
  try {
    // Run 0 is an unmeasured warm-up (the worker's connection pool, the extractor's first load).
    for (let i = 0; i <= b.opts.webRuns && b.left() > 0; i++) {
      await b.quiet();
      const message = `[[tool name=web_fetch args={"url":"${page}"}]] read it (webbench ${i})`;
      const r = await b.post({ message, tools: ['web_fetch'] }, 60_000);
      const taskId = r.body.includes('Durable execution means') ? completedTaskId(r) : undefined;
      const activityMs = taskId ? await activityMsOf(temporal, taskId, 'runWebTool') : undefined;
      const t0 = performance.now();
      const body = await (await fetch(page)).text();
      const directMs = performance.now() - t0;
      if (activityMs === undefined || !body.includes('Durable execution means')) errors++;
      else if (i > 0) {
        overhead.push(activityMs - directMs);
        direct.push(directMs);
      }
    }
  } finally {
    await site.close();
  }
  const d = summarize(direct);
  b.log(
    `web: ${overhead.length} web_fetch calls over ${b.opts.webRuns} runs, ${errors} errors; direct fetch p50 ${d.p50.toFixed(2)} / p99 ${d.p99.toFixed(2)} ms`,
  );
  return [rowOf(WEB_FETCH_LABEL, '1 run', overhead, { errors }), rowOf(DIRECT_FETCH_LABEL, '1 run', direct)];
}

export async function browserPhase(b: Bench): Promise<Row[]> {
  const site = await startDemoWebServer();
  const temporal = await b.temporal();
  const page = `${site.url}/articles/tides`;
  const samples: number[] = [];
  let errors = 0;
  // One session for all runs: its browser context is reused, as an agent's is.
  const session = `browser-bench-${Date.now()}`;
  const made = await b.post({ session }, 10_000, '/sessions');
  if (made.status !== 201) throw new Error(`creating the bench's session: ${made.status} ${made.body}`);
  try {
    for (let i = 0; i <= b.opts.webRuns && b.left() > 0; i++) {
      await b.quiet();
      const message = `[[tool name=browser_navigate args={"url":"${page}"}]] open it (browserbench ${i})`;
      const r = await b.post({ message, tools: ['browser_navigate'] }, 60_000, `/?session=${session}`);
      const taskId = r.body.includes('two tides a day') ? completedTaskId(r) : undefined;
      const ms = taskId ? await activityMsOf(temporal, taskId, 'runBrowserTool') : undefined;
      if (ms === undefined) {
        errors++;
        if (errors === 1) b.log(`browser: a run went wrong: ${r.status} ${r.body.slice(0, 300)}`);
      } else if (i > 0) samples.push(ms);
    }
  } finally {
    await site.close();
  }
  b.log(`browser: ${samples.length} browser_navigate calls over ${b.opts.webRuns} runs, ${errors} errors`);
  return [rowOf(BROWSER_LABEL, '1 run', samples, { errors })];
}

/** The task's one activity of `type`: started -> completed, ms; undefined unless there is exactly one. */
async function activityMsOf(temporal: TemporalClient, taskId: string, type: string): Promise<number | undefined> {
  const events = (await temporal.workflow.getHandle(taskId).fetchHistory()).events ?? [];
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type);
  if (scheduled.length !== 1) return undefined;
  // Event ids are Long: compared through their text.
  const id = String(scheduled[0].eventId);
  const started = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === id);
  const completed = events.find((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === id);
  if (!started?.eventTime || !completed?.eventTime) return undefined;
  return tsToMs(completed.eventTime) - tsToMs(started.eventTime);
}
