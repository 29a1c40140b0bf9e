// The worker's workflow bundle, built once per content and kept on disk.
// Building it (webpack) takes a few seconds of CPU at every worker start: a
// restarted worker (npm start's supervisor, a deploy) then resumes its tasks
// that much later. The cache key covers everything that goes into the bundle:
// the entry module and the files of its folder (lint lets workflows/ import
// nothing else but types), the service's workflows/ folder too (a module
// elsewhere, such as the replay CLI's --workflows or a test fixture, may
// re-export them), the failure converter and interceptor modules
// bundled with them, the locked dependency versions, and where the repository
// is (the source map names its paths). A cache that cannot be read or written
// is passed over; processes needing one bundle together build it once
// (built-once.ts).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { bundleWorkflowCode, Runtime, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { builtOnce } from './built-once';

const ROOT = path.resolve(__dirname, '../..');
const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'aes-workflow-bundles');
const WORKFLOWS_DIR = path.join(ROOT, 'workflows');

export interface BundleInputs {
  /** The workflows' index module (its folder is bundled). */
  workflowsPath: string;
  failureConverterPath?: string;
  interceptorModules: string[];
}

export async function workflowBundle(
  inputs: BundleInputs,
  logger: Logger,
  cacheDir = CACHE_DIR,
): Promise<WorkflowBundleWithSourceMap> {
  const file = path.join(cacheDir, `workflows-${cacheKey(inputs)}.json`);
  const build = async () => {
    logger.debug({ file }, 'building the workflow bundle');
    return bundleWorkflowCode({
      workflowsPath: inputs.workflowsPath,
      failureConverterPath: inputs.failureConverterPath,
      workflowInterceptorModules: inputs.interceptorModules,
      logger: Runtime.instance().logger,
    });
  };
  // Once per content on this machine: workers starting together wait for the first one's build.
  const text = await builtOnce(file, async () => JSON.stringify(await build()));
  try {
    return JSON.parse(text) as WorkflowBundleWithSourceMap;
  } catch {
    return build(); // a cache file someone else damaged: not ours to fix, built here instead
  }
}

export function cacheKey(inputs: BundleInputs): string {
  const h = crypto.createHash('sha256');
  const add = (label: string, data: string | Buffer) => h.update(`${label}\0`).update(data).update('\0');
  add('root', ROOT);
  // The entry too: two workflows modules of one folder are two bundles.
  add('entry', path.resolve(inputs.workflowsPath));
  const dirs = new Set([workflowsFolder(inputs.workflowsPath), WORKFLOWS_DIR]);
  for (const dir of dirs) for (const f of filesUnder(dir)) add(f, fs.readFileSync(f));
  if (inputs.failureConverterPath) add(inputs.failureConverterPath, fs.readFileSync(inputs.failureConverterPath));
  for (const m of inputs.interceptorModules) add('interceptor', m);
  add('lock', readOr(path.join(ROOT, 'package-lock.json')));
  return h.digest('hex').slice(0, 32);
}

/**
 * The folder bundled with the workflows: the entry's own folder, or the entry itself when it names
 * a folder (its index module; the replay CLI's default and the tests name workflows/ that way).
 * Its parent would be the whole repository, node_modules included: seconds of hashing per key.
 */
export function workflowsFolder(workflowsPath: string): string {
  const entry = path.resolve(workflowsPath);
  return fs.statSync(entry, { throwIfNoEntry: false })?.isDirectory() ? entry : path.dirname(entry);
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => fs.statSync(f).isFile())
    .sort();
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
