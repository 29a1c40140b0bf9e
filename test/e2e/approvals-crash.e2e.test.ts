// An approval outlives every process: while a gated bash call waits, kill -9 of the worker, the
// engine and the gateway, all started again on their data; then the approval: the run completes
// and the call ran exactly once (its side effect, a line appended to a file of the session's
// workspace, is there once). A wait holds nothing on a worker, so nothing was lost with it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Stack } from '../../src/dev/launcher/stack';
import { api, startPersistentStack, waitUntil } from './helpers';

jest.setTimeout(240_000);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-approvals-crash-'));
let stack: Stack | undefined;

afterAll(async () => {
  await stack?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const APPEND = '[[tool name=bash args={"command":"echo ran >> side-effect.txt && wc -l < side-effect.txt"}]] append';

test('kill -9 of worker, engine and gateway while a call waits; approved after, it runs once and the run completes', async () => {
  stack = await startPersistentStack(dataDir, { MODEL_HEARTBEAT_TIMEOUT_MS: '2000' });
  let call = api(stack);
  const submit = await call('POST', '/', {
    body: { message: APPEND, background: true, require_approval: { tools: ['bash'] } },
  });
  expect(submit.status).toBe(202);
  const { task_id: id, session } = submit.json;
  const view = await waitUntil(
    'the bash call waiting for a decision',
    async () => (await call('GET', `/tasks/${id}`)).json,
    (v) => v.status === 'input_required' && v.approvals?.length === 1,
    { stepMs: 100 },
  );
  const callId = view.approvals[0].tool_call_id;

  for (const name of ['worker', 'engine', 'gateway']) {
    stack.children[name].proc.kill('SIGKILL');
    await stack.children[name].exited;
  }
  for (const name of ['engine', 'worker', 'gateway']) await stack.restarters[name]();
  call = api(stack);

  // Still waiting, as the engine kept it: the restarted gateway reads it, and takes the decision.
  const after = await waitUntil(
    'the task readable after the restarts',
    () => call('GET', `/tasks/${id}/approvals`),
    (r) => r.status === 200,
    { stepMs: 250 },
  );
  expect(after.json.pending.map((p: { tool_call_id: string }) => p.tool_call_id)).toEqual([callId]);
  const decided = await waitUntil(
    'the approval taken',
    () => call('POST', `/tasks/${id}/approvals/${callId}`, { body: { decision: 'approve' } }),
    (r) => r.status === 200,
    { stepMs: 250 },
  );
  expect(decided.json).toMatchObject({ decision: 'approve', by: 'user' });
  const result = await call('GET', `/tasks/${id}/result?wait=60`);
  expect(result.json.status).toBe('completed');
  expect(result.json.output).toMatch(/\b1\b/);
  const file = await call('GET', `/sessions/${session}/files/side-effect.txt`);
  expect(file.text).toBe('ran\n');
});
