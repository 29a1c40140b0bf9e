// Replay CLI: fetches runs' histories from the configured engine and replays
// them against the current workflow code (or another workflows module), so a
// change that would break runs in flight shows before it is deployed.
//   npm run replay -- <workflowId>... [--run-id <runId>]
//   npm run replay -- --all [--hours <n>]
//   options: --workflows <path> (default workflows/), --json
// Exit: 0 all replayed, 1 a replay failed or the engine/run was unavailable, 2 bad usage.
import { loadConfig } from '../common/config';
import { dataConverter as serviceDataConverter } from '../common/codec/data-converter';
import {
  ReplayOutcome,
  RunRef,
  bundle,
  connect,
  listClosedRuns,
  oneLine,
  quietRuntime,
  replayRuns,
  resolveRuns,
} from './replay-runs';
import { Options, parseOptions, USAGE, UsageError } from './replay-options';

const out = (s: string) => process.stdout.write(`${s}\n`);

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
    const runs: RunRef[] = opts.all
      ? await listClosedRuns(client, opts.hours)
      : await resolveRuns(client, opts.ids, opts.runId);
    const outcomes: ReplayOutcome[] = [];
    if (runs.length) {
      for await (const outcome of replayRuns(
        client,
        await bundle(opts.workflowsPath, dataConverter),
        runs,
        dataConverter,
      )) {
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
