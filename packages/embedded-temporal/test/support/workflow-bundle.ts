// Workflow bundles for the tests' workers, built once per content and kept on disk: building one
// (webpack) takes seconds of CPU, and every conformance file on every engine needs its own. The
// key covers what goes into a bundle: the entry module and every file of its folder and of the
// folder above it (the workflows import the activities' types from there), the SDK's version, and
// where the files are (the source map names their paths). A cache that cannot be read or written
// is passed over. Test files needing one bundle together build it once (a lock file). (The
// service's worker has its own, src/worker/workflow-bundle.ts and built-once.ts: this package
// takes nothing from the service.)
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, Runtime, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

const CACHE_DIR = path.join(
  path.dirname(require.resolve('@temporalio/worker/package.json')),
  '..',
  '..',
  '.cache',
  'embedded-temporal-workflow-bundles',
);

/** The bundle of the workflows module `workflowsPath` (absolute), from the cache when it has it. */
export async function cachedWorkflowBundle(workflowsPath: string): Promise<WorkflowBundleWithSourceMap> {
  const file = path.join(CACHE_DIR, `workflows-${cacheKey(workflowsPath)}.json`);
  for (;;) {
    const cached = readBundle(file);
    if (cached) return cached;
    // Test files of two engines (or two files) needing one bundle together: the first builds it,
    // the others wait for its file instead of building it again.
    const lock = takeLock(`${file}.lock`);
    if (lock === 'busy') {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    try {
      const built = lock === 'held' ? readBundle(file) : undefined;
      if (built) return built;
      const bundle = await bundleWorkflowCode({ workflowsPath, logger: Runtime.instance().logger });
      writeWhole(file, JSON.stringify(bundle));
      return bundle;
    } finally {
      if (lock === 'held') fs.rmSync(`${file}.lock`, { force: true });
    }
  }
}

function readBundle(file: string): WorkflowBundleWithSourceMap | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as WorkflowBundleWithSourceMap;
  } catch {
    return undefined; // not built for this content yet
  }
}

/** An exclusive lock file holding our pid; one whose process is gone is removed (the next look takes it). */
function takeLock(lock: string): 'held' | 'busy' | 'none' {
  try {
    fs.mkdirSync(path.dirname(lock), { recursive: true });
  } catch {
    // the create below says whether a lock can be made there
  }
  try {
    fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
    return 'held';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return 'none';
    let pid = 0;
    try {
      pid = Number(fs.readFileSync(lock, 'utf8'));
    } catch {
      // released meanwhile
    }
    if (pid > 0 && !alive(pid)) fs.rmSync(lock, { force: true });
    return 'busy';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

function writeWhole(file: string, content: string): void {
  try {
    // Whole or not at all: readers never see half a file.
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, content);
    fs.renameSync(tmp, file);
  } catch {
    // a cache that cannot be written is passed over
  }
}

function cacheKey(workflowsPath: string): string {
  const h = crypto.createHash('sha256');
  const add = (label: string, data: string | Buffer) => h.update(`${label}\0`).update(data).update('\0');
  const entry = path.resolve(workflowsPath);
  add('entry', entry);
  add('sdk', require('@temporalio/worker/package.json').version);
  add('sdk-workflow', require('@temporalio/workflow/package.json').version);
  const folder = path.dirname(entry);
  for (const dir of [folder, path.dirname(folder)])
    for (const f of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
      const file = path.join(dir, f);
      if (file.endsWith('.ts') && fs.statSync(file).isFile()) add(file, fs.readFileSync(file));
    }
  return h.digest('hex').slice(0, 32);
}
