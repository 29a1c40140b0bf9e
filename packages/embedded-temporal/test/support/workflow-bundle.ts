// Workflow bundles for the tests' workers, built once per content and kept on disk: building one
// (webpack) takes seconds of CPU, and every conformance file on every engine needs its own. The
// key covers what goes into a bundle: the entry module and every file of its folder and of the
// folder above it (the workflows import the activities' types from there), the SDK's version, and
// where the files are (the source map names their paths). A cache that cannot be read or written
// is passed over. (The service's worker has its own, src/worker/workflow-bundle.ts.)
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
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as WorkflowBundleWithSourceMap;
  } catch {
    // not built for this content yet
  }
  const bundle = await bundleWorkflowCode({ workflowsPath, logger: Runtime.instance().logger });
  try {
    fs.mkdirSync(CACHE_DIR, { recursive: true });
    // Whole or not at all: test files bundling together may race on the same file.
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(bundle));
    fs.renameSync(tmp, file);
  } catch {
    // a cache that cannot be written is passed over
  }
  return bundle;
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
