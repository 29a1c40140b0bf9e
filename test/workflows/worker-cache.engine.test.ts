// The worker's cache of workflow runs (WORKER_CACHED_WORKFLOWS, the SDK's sticky cache) holds at
// most its bound, however many runs are open: open sessions past the bound are evicted, and each
// still answers from its history when asked (rebuilt, then cached again in place of another).
// What fills the cache in production is open runs, mostly sessions: a run that names no session
// opens none (src/common/sessions/lazy-sessions.ts), and one opened closes once idle.
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createEnv, worker } from './env';
import { messagesQuery } from '../../workflows/definitions';
import { sessionWorkflowId } from '../../workflows/types';

jest.setTimeout(90_000);
let env: TestWorkflowEnvironment;
const taskQueue = `wf-${randomUUID()}`;

beforeAll(async () => {
  env = await createEnv();
});
afterAll(async () => {
  await env?.teardown();
});

const BOUND = 10;
const OPEN = 25;

test(`a worker caching at most ${BOUND} runs keeps ${BOUND} of ${OPEN} open sessions; every one answers when asked`, async () => {
  const w = await worker(env, taskQueue, {}, { maxCachedWorkflows: BOUND });
  const seen: number[] = [];
  await w.runUntil(async () => {
    const account = `acct-${randomUUID().slice(0, 8)}`;
    const handles = await Promise.all(
      Array.from({ length: OPEN }, (_, i) =>
        env.client.workflow.start('agentSession', {
          taskQueue,
          workflowId: sessionWorkflowId(account, `sess-${i}`),
          args: [{ account, session: `sess-${i}`, messages: [{ role: 'user', content: `hello ${i}` }], queue: [] }],
        }),
      ),
    );
    // Twice over, so evicted runs are rebuilt from their histories and cached in others' place.
    for (let round = 0; round < 2; round++) {
      for (const [i, h] of handles.entries()) {
        expect((await h.query(messagesQuery)).map((m) => m.content)).toEqual([`hello ${i}`]);
        seen.push(w.getStatus().numCachedWorkflows);
      }
    }
    await Promise.all(handles.map((h) => h.terminate('test over')));
  });
  // Full, and never past its bound.
  expect(seen).toHaveLength(2 * OPEN);
  expect(Math.max(...seen)).toBe(BOUND);
});
