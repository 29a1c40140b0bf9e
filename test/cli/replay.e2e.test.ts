// The replay CLI as an operator runs it: a child process against the real
// stack's engine (embedded, or the real dev server with ENGINE=temporal-cli),
// replaying tasks and sessions the API ran, and a deliberately changed
// workflows module that must fail replay at the event it diverges at.
import path from 'node:path';
import { spawn } from 'node:child_process';
import { Api, useStack, waitUntil, withTemporal } from '../e2e/helpers';
import { closedSinceQuery } from '../../src/cli/replay-runs';
import { TS_LOADER_ARGS } from '../../src/common/ts-loader';

jest.setTimeout(180_000);
// Sessions close a second after their last use, so --all finds them closed too.
const ctx = useStack({ SESSION_IDLE_CLOSE_MS: '1000' });
const call: Api = (...args) => ctx.call(...args);

const ROOT = path.resolve(__dirname, '../..');
const CHANGED = path.join(__dirname, 'fixtures/changed-workflows');

interface Cli {
  code: number | null;
  stdout: string;
  stderr: string;
  lines: string[];
}

function replay(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Cli> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...TS_LOADER_ARGS, 'src/cli/replay.ts', ...args], {
      cwd: ROOT,
      env: { ...ctx.stack().env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, lines: stdout.split('\n').filter(Boolean) }));
  });
}

const tasks: { taskId: string; session: string; runId: string }[] = [];
const sessionId = (session: string) => `session:alice:${session}`;

/** The session workflows there are to replay: a run that names no session opens none by itself. */
const sessions: string[] = [];

beforeAll(async () => {
  for (const message of ['hello', 'hello again']) {
    const r = await call('POST', '/', { body: { message } });
    expect(r.status).toBe(200);
    tasks.push({ taskId: r.json.task_id, session: r.json.session, runId: '' });
  }
  // Clearing the first one's thread opens its session (from the run's handover), which then closes when idle.
  expect((await call('DELETE', `/sessions/${tasks[0].session}/messages`)).status).toBe(204);
  sessions.push(sessionId(tasks[0].session));
  await withTemporal(ctx.stack(), async (client) => {
    for (const t of tasks) t.runId = (await client.workflow.getHandle(t.taskId).describe()).runId;
    // Visibility may trail the close on a real server: wait until --all's own query sees every run.
    const wanted = [...tasks.map((t) => t.taskId), ...sessions];
    await waitUntil(
      'every run in the list --all queries',
      async () => {
        const seen = new Set<string>();
        for await (const info of client.workflow.list({ query: closedSinceQuery(1) })) seen.add(info.workflowId);
        return wanted.every((id) => seen.has(id));
      },
      { stepMs: 250 },
    );
  });
});

test('a task id replays against the current workflows: replay OK with its run and events, exit 0', async () => {
  const { taskId, runId } = tasks[0];
  const r = await replay([taskId]);
  expect(r.lines).toEqual([
    expect.stringMatching(new RegExp(`^replay OK ${taskId} ${runId} \\(\\d+ events\\)$`)),
    '1 replayed, 0 failed',
  ]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
});

test('--all replays every run closed in the last hours: the tasks and their sessions', async () => {
  const r = await replay(['--all', '--hours', '1']);
  for (const t of tasks) {
    expect(r.lines).toContainEqual(
      expect.stringMatching(new RegExp(`^replay OK ${t.taskId} ${t.runId} \\(\\d+ events\\)$`)),
    );
  }
  for (const s of sessions)
    expect(r.lines).toContainEqual(expect.stringMatching(new RegExp(`^replay OK ${s} \\S+ \\(\\d+ events\\)$`)));
  const ok = r.lines.filter((l) => l.startsWith('replay OK')).length;
  expect(ok).toBeGreaterThanOrEqual(tasks.length + sessions.length);
  expect(r.lines.at(-1)).toBe(`${ok} replayed, 0 failed`);
  expect(r.code).toBe(0);
});

test('a deliberately changed agentTask fails replay naming the event it diverged at, exit 1; sessions still replay', async () => {
  const r = await replay(['--all', '--workflows', CHANGED]);
  for (const t of tasks) {
    const line = r.lines.find((l) => l.startsWith(`replay FAILED ${t.taskId} ${t.runId}: `));
    expect(line).toMatch(
      /DeterminismViolationError: .*Nondeterminism error: Timer machine does not handle this event: HistoryEvent\(id: \d+, UpsertWorkflowSearchAttributes\)$/,
    );
  }
  for (const s of sessions) expect(r.lines).toContainEqual(expect.stringMatching(new RegExp(`^replay OK ${s} `)));
  const failed = r.lines.filter((l) => l.startsWith('replay FAILED')).length;
  expect(failed).toBe(tasks.length);
  expect(r.lines.at(-1)).toMatch(new RegExp(`^\\d+ replayed, ${failed} failed$`));
  // The core's own warning about the failing task is the same news: it stays out of stderr.
  expect(r.stderr).toBe('');
  expect(r.code).toBe(1);
});

test('--json: one document with the counts and each run', async () => {
  const { taskId, runId } = tasks[1];
  const r = await replay([taskId, '--run-id', runId, '--json', '--workflows', CHANGED]);
  const doc = JSON.parse(r.stdout);
  expect(doc).toMatchObject({ replayed: 0, failed: 1, runs: [{ workflowId: taskId, runId, ok: false }] });
  expect(doc.runs[0].events).toBeGreaterThan(5);
  expect(doc.runs[0].error).toContain('Nondeterminism error');
  expect(r.code).toBe(1);
});

test('an unknown workflow id: one line on stderr naming it, nothing replayed, exit 1', async () => {
  const r = await replay(['task_does_not_exist']);
  expect(r.stderr).toBe('replay: workflow task_does_not_exist not found in namespace default\n');
  expect(r.stdout).toBe('');
  expect(r.code).toBe(1);
});

test('an unreachable engine: one line naming the address, exit 1', async () => {
  // Port 1 on loopback: a privileged port no service of ours listens on.
  const r = await replay([tasks[0].taskId], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
  expect(r.stderr).toMatch(/^replay: cannot reach Temporal at 127\.0\.0\.1:1: [^\n]+\n$/);
  expect(r.code).toBe(1);
});

test('bad usage: one line naming the problem, with the usage, exit 2 (test/cli/replay-options.test.ts has each mistake)', async () => {
  const r = await replay(['--all', 'task_x']);
  expect(r.stderr).toMatch(/^replay: --all takes no workflow ids\. usage: replay [^\n]+\n$/);
  expect(r.stdout).toBe('');
  expect(r.code).toBe(2);
});

// The trial that found DAG runs failing replay: the DAG example of docs/api.md, then three diamonds
// (two parallel steps feeding a third), then --all. Every task, DAG workflow and step replays.
test('after DAG runs (the docs/api.md example and three diamonds), --all replays every run', async () => {
  const readme = {
    id: 'launch',
    name: 'launch',
    description: 'what a launch needs',
    steps: [
      { id: 'notes', name: 'notes', description: 'Draft the release notes', depends_on: [] },
      {
        id: 'risks',
        name: 'risks',
        description: 'List the risks',
        depends_on: [],
        optional: true,
        retry_policy: { max_attempts: 2, backoff: 'fixed', initial_interval: 5 },
      },
      {
        id: 'mail',
        name: 'mail',
        description: 'Write the announcement',
        depends_on: ['notes', 'risks'],
        output_schema: {
          type: 'object',
          required: ['subject', 'body'],
          properties: { subject: { type: 'string' }, body: { type: 'string' } },
        },
      },
    ],
  };
  const diamond = {
    id: 'd',
    name: 'diamond',
    description: 'two parts, then the whole',
    steps: [
      { id: 'a', name: 'a', description: 'part a', depends_on: [] },
      { id: 'b', name: 'b', description: 'part b', depends_on: [] },
      { id: 'c', name: 'c', description: 'the whole', depends_on: ['a', 'b'] },
    ],
  };
  const runs = [
    { message: 'Plan the launch of version 2.3', workflows: [readme] },
    ...[1, 2, 3].map((n) => ({ message: `diamond ${n}`, workflows: [diamond] })),
  ];
  const ids: string[] = [];
  for (const body of runs) {
    const r = await call('POST', '/', { body });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe('completed');
    const wf = body.workflows[0];
    ids.push(
      r.json.task_id,
      `${r.json.task_id}:${wf.id}`,
      ...wf.steps.map((s) => `${r.json.task_id}:${wf.id}:${s.id}`),
    );
  }
  await withTemporal(ctx.stack(), (client) =>
    waitUntil(
      'every run of the DAGs in the list --all queries',
      async () => {
        const seen = new Set<string>();
        for await (const info of client.workflow.list({ query: closedSinceQuery(1) })) seen.add(info.workflowId);
        return ids.every((id) => seen.has(id));
      },
      { stepMs: 250 },
    ),
  );
  const r = await replay(['--all', '--hours', '1']);
  for (const id of ids)
    expect(r.lines).toContainEqual(expect.stringMatching(new RegExp(`^replay OK ${id} \\S+ \\(\\d+ events\\)$`)));
  expect(r.lines.filter((l) => l.startsWith('replay FAILED'))).toEqual([]);
  expect(r.code).toBe(0);
});
