// The computer's activity with its tools stubbed (the real ones: bash.e2e, sandbox.e2e, editor,
// search.e2e; the whole path: test/e2e/computer.e2e.test.ts): a call that may change the workspace
// runs at most once across the activity's retries (a recorded answer is answered again, a call
// whose worker died mid-command is "outcome unknown"), what it changed is reported, read-only
// calls simply run again, and the tools' input errors are results while the machinery's faults
// are left for Temporal to retry.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createComputerActivities,
  OUTCOME_UNKNOWN,
  type RunComputerToolInput,
  type RunComputerToolOutput,
} from '../../../activities/computer/computer-activities';
import type { ComputerTool, ComputerTools } from '../../../activities/computer/computer-tools';
import { ToolInputError } from '../../../activities/tools/builtin';
import { sessionWorkspace } from '../../../src/common/workspaces/layout';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'computer-activity-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function harness(tools: Partial<Record<string, ComputerTool>>) {
  const published: string[] = [];
  const publisher = {
    publish: async (_t: string, _s: string, _p: string, _n: number, events: { content?: string }[]) => {
      published.push(JSON.parse(String(events[0].content)).content);
      return { lastSeq: 7 };
    },
  };
  const acts = createComputerActivities({
    publisher,
    config: { WORKSPACE_DIR: dir, DATA_DIR: dir },
    computer: tools as ComputerTools,
  } as never);
  const input = (name: string, args: object, id = 'call_1'): RunComputerToolInput => ({
    taskId: 'task_1',
    session: 'sess_1',
    account: 'acct',
    producer: 's1:t0',
    floor: 3,
    call: { id, name, arguments: JSON.stringify(args) },
    maxChars: 10_000,
  });
  // The same activity id across attempts: a retry of the same call.
  const attempt = (i: RunComputerToolInput, activityId = 'act-1'): Promise<RunComputerToolOutput> =>
    new MockActivityEnvironment({ activityId }).run(acts.runComputerTool, i);
  return { published, input, attempt, ws: sessionWorkspace(dir, 'acct', 'sess_1') };
}

test('a command runs once; its retry answers the recorded result again without running it', async () => {
  let runs = 0;
  const h = harness({
    bash: async (_args, ws) => {
      runs++;
      fs.mkdirSync(ws.files, { recursive: true });
      fs.writeFileSync(path.join(ws.files, 'out.txt'), 'x');
      return { text: 'exit code: 0', command: { exitCode: 0, durationMs: 5 } };
    },
  });
  const first = await h.attempt(h.input('bash', { command: 'echo x > out.txt' }));
  expect(first).toMatchObject({
    content: 'exit code: 0',
    isError: false,
    lastSeq: 7,
    files: { created: ['out.txt'], modified: [], deleted: [] },
    command: { exitCode: 0 },
    workspaceBytes: 1,
  });
  const again = await h.attempt(h.input('bash', { command: 'echo x > out.txt' }));
  expect(again).toMatchObject({ content: 'exit code: 0', files: { created: ['out.txt'] } });
  expect(runs).toBe(1);
  // Another call (another activity) runs.
  await h.attempt(h.input('bash', { command: 'echo x > out.txt' }, 'call_2'), 'act-2');
  expect(runs).toBe(2);
});

test('a retry of a command whose worker died during it is not run again: the model reads that its outcome is unknown', async () => {
  let runs = 0;
  const h = harness({
    bash: async () => {
      runs++;
      // The worker dies mid-command: the activity never ends; Temporal retries it elsewhere.
      throw Object.assign(new Error('worker lost'), { crash: true });
    },
  });
  await expect(h.attempt(h.input('bash', { command: 'make deploy' }))).rejects.toThrow('worker lost');
  const retry = await h.attempt(h.input('bash', { command: 'make deploy' }));
  expect(retry).toMatchObject({ content: OUTCOME_UNKNOWN, isError: true });
  expect(h.published).toEqual([OUTCOME_UNKNOWN]);
  expect(runs).toBe(1);
});

test('read-only calls (view, glob, grep) keep no record and run again on a retry', async () => {
  let runs = 0;
  const h = harness({ glob: async () => ({ text: `found ${++runs}` }) });
  expect((await h.attempt(h.input('glob', { pattern: '*' }))).content).toBe('found 1');
  expect((await h.attempt(h.input('glob', { pattern: '*' }))).content).toBe('found 2');
  expect(fs.existsSync(path.join(h.ws.state, 'calls'))).toBe(false);
});

test("a changing call gets the workspace's size the activity measured (one walk, not two), with the run's network flag; a read-only one neither", async () => {
  const seen: unknown[] = [];
  const h = harness({
    bash: async (_a, _ws, call) => (seen.push({ usage: call.usage, network: call.network }), { text: 'ran' }),
    glob: async (_a, _ws, call) => (seen.push({ usage: call.usage, network: call.network }), { text: 'found' }),
  });
  fs.mkdirSync(path.join(h.ws.files, 'src'), { recursive: true });
  fs.writeFileSync(path.join(h.ws.files, 'a.txt'), 'abc');
  fs.writeFileSync(path.join(h.ws.files, 'src', 'b.txt'), 'hello');
  await h.attempt({ ...h.input('bash', { command: 'true' }), network: true });
  await h.attempt(h.input('glob', { pattern: '*' }), 'act-2');
  expect(seen).toEqual([
    { usage: { bytes: 8, files: 2 }, network: true },
    { usage: undefined, network: false },
  ]);
});

test("the tools' input errors are results for the model; bad arguments never reach the tool", async () => {
  const h = harness({
    str_replace_editor: async () => {
      throw new ToolInputError('no file at /workspace/x.py');
    },
  });
  const r = await h.attempt(h.input('str_replace_editor', { command: 'view', path: 'x.py' }));
  expect(r).toMatchObject({ content: 'Error: no file at /workspace/x.py', isError: true });
  const bad = await h.attempt({
    ...h.input('str_replace_editor', {}),
    call: { id: 'c', name: 'str_replace_editor', arguments: '[1' },
  });
  expect(bad).toMatchObject({ isError: true, content: expect.stringMatching(/^Error: the arguments are not JSON/) });
});

test('a tool this worker lacks fails the call for good (ToolBadInput), not as a retry', async () => {
  const h = harness({});
  await expect(h.attempt(h.input('bash', { command: 'true' }))).rejects.toMatchObject({
    type: 'ToolBadInput',
    nonRetryable: true,
  });
});
