// Replay CLI: fetches runs' histories from the configured engine and replays
// them against the current workflow code (or another workflows module), so a
// change that would break runs in flight shows before it is deployed.
//   npm run replay -- <workflowId>... [--run-id <runId>]
//   npm run replay -- --all [--hours <n>]
//   options: --workflows <path> (default workflows/), --json
// Exit: 0 all replayed, 1 a replay failed or the engine/run was unavailable, 2 bad usage.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { dataConverter as serviceDataConverter } from '../codec/data-converter';
import { ReplayOutcome, RunRef, bundle, connect, listClosedRuns, oneLine, quietRuntime, replayRuns, resolveRuns } from './replay-runs';

const USAGE = 'usage: replay <workflowId>... [--run-id <runId>] | --all [--hours <n>] [--workflows <path>] [--json]';
const DEFAULT_WORKFLOWS = path.resolve(__dirname, '../../workflows');

interface Options {
  ids: string[];
  runId?: string;
  all: boolean;
  hours: number;
  workflowsPath: string;
  json: boolean;
}

class UsageError extends Error {}

const out = (s: string) => process.stdout.write(`${s}\n`);

function parseOptions(argv: string[]): Options {
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
    throw new UsageError(oneLine(err).split('. ')[0]);
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

async function main(argv: string[]): Promise<number> {
  let opts: Options;
  try {
    opts = parseOptions(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`replay: ${err.message}. ${USAGE}\n`);
    return 2;
  }
  const config = loadConfig(process.env);
  // The histories' payloads are encrypted: the replay worker decrypts them with the service's keys.
  const dataConverter = serviceDataConverter(config);
  quietRuntime();
  const { client, close } = await connect(config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE, dataConverter);
  try {
    // Runs first: an unknown id or an unreachable engine should not wait for a bundle.
    const runs: RunRef[] = opts.all ? await listClosedRuns(client, opts.hours) : await resolveRuns(client, opts.ids, opts.runId);
    const outcomes: ReplayOutcome[] = [];
    if (runs.length) {
      for await (const outcome of replayRuns(client, await bundle(opts.workflowsPath, dataConverter), runs, dataConverter)) {
        outcomes.push(outcome);
        if (!opts.json) out(describe(outcome));
      }
    }
    return report(outcomes, opts.json);
  } finally {
    await close();
  }
}

function describe(o: ReplayOutcome): string {
  return o.error === undefined
    ? `replay OK ${o.workflowId} ${o.runId} (${o.events} events)`
    : `replay FAILED ${o.workflowId} ${o.runId}: ${o.error}`;
}

function report(outcomes: ReplayOutcome[], json: boolean): number {
  const failed = outcomes.filter((o) => o.error !== undefined).length;
  const replayed = outcomes.length - failed;
  if (json) out(JSON.stringify({ replayed, failed, runs: outcomes.map((o) => ({ ...o, ok: o.error === undefined })) }));
  else out(`${replayed} replayed, ${failed} failed`);
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`replay: ${oneLine(err)}\n`);
    process.exit(1);
  },
);
