// A second release of the service for the rollout test: this checkout's files (as they are, the
// uncommitted ones included) copied to a folder of their own, node_modules shared, with one change
// to the task workflow that no run of the first release could replay: a timer before anything else.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../src/dev/launcher/processes';

/** What build B's agentTask does first, which build A's never did. */
export const B_MARKER = 'await sleep(1); // the rollout test: build B only';

export function makeReleaseB(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-release-b-'));
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: ROOT,
    maxBuffer: 64 << 20,
  })
    .toString()
    .split('\0')
    .filter((f) => f && fs.existsSync(path.join(ROOT, f)));
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, f), path.join(dir, f));
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const file = path.join(dir, 'workflows', 'agent-task.ts');
  const before = fs.readFileSync(file, 'utf8');
  const after = before
    .replace(
      "import { TemporalFailure, allHandlersFinished, condition, continueAsNew } from '@temporalio/workflow';",
      "import { TemporalFailure, allHandlersFinished, condition, continueAsNew, sleep } from '@temporalio/workflow';",
    )
    .replace(
      '  const run = new TaskRun(readTaskInput(input));',
      `  ${B_MARKER}\n  const run = new TaskRun(readTaskInput(input));`,
    );
  if (!after.includes(B_MARKER) || !after.includes('continueAsNew, sleep }'))
    throw new Error(
      'workflows/agent-task.ts changed: the rollout test cannot make its build B (test/cluster/release.ts)',
    );
  fs.writeFileSync(file, after);
  return dir;
}
