// The replay CLI's command line: what it was asked to replay, or a UsageError
// saying what is wrong with the arguments (the CLI prints it with USAGE, exit 2).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

export const USAGE =
  'usage: replay <workflowId>... [--run-id <runId>] | --all [--hours <n>] [--workflows <path>] [--json]';
const DEFAULT_WORKFLOWS = path.resolve(__dirname, '../../workflows');

export interface Options {
  ids: string[];
  runId?: string;
  all: boolean;
  hours: number;
  workflowsPath: string;
  json: boolean;
}

export class UsageError extends Error {}

export function parseOptions(argv: string[]): Options {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'run-id': { type: 'string' },
        all: { type: 'boolean', default: false },
        hours: { type: 'string' },
        workflows: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    // Node's own messages go on to explain '--' escaping; the first sentence is the point.
    throw new UsageError(String((err as Error).message ?? err).split('. ')[0]);
  }
  const { values: v, positionals: ids } = parsed;
  if (v.all && ids.length) throw new UsageError('--all takes no workflow ids');
  if (!v.all && !ids.length) throw new UsageError('give workflow ids or --all');
  if (v['run-id'] !== undefined && ids.length !== 1) throw new UsageError('--run-id needs exactly one workflow id');
  if (v.hours !== undefined && !v.all) throw new UsageError('--hours goes with --all');
  const hours = Number(v.hours ?? 24);
  if (!(hours > 0)) throw new UsageError(`--hours must be a positive number, got ${v.hours}`);
  const workflowsPath = v.workflows === undefined ? DEFAULT_WORKFLOWS : path.resolve(v.workflows);
  if (!fs.existsSync(workflowsPath)) throw new UsageError(`--workflows: no such file or folder ${workflowsPath}`);
  return { ids, runId: v['run-id'], all: v.all, hours, workflowsPath, json: v.json };
}
