// agent replay <task>...: replays tasks' histories against the current
// workflow code, talking to Temporal directly (not through the service) with
// the same configuration as the service (loadConfig over the environment) and
// the replay tool's own code (src/cli/replay-runs.ts). A run that would break
// on this code fails with the event it diverges at.
import path from 'node:path';
import type { Command } from '../args';

/** The repository (client/cli/commands → ../../..): `npm start` keeps its data folder there. */
const ROOT = path.resolve(__dirname, '../../..');

export const replayCommand: Command = {
  name: 'replay',
  summary: "Replay tasks' histories against the current workflow code (talks to Temporal: TEMPORAL_ADDRESS).",
  usage: 'agent replay <task>... [--json]',
  help: [
    '--json        print the outcome as JSON',
    "reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, PAYLOAD_KEYS (else DATA_DIR's key file) as the service does",
    'exit status: 0 all replayed, 1 a replay failed or Temporal could not be reached',
  ],
  options: { json: { type: 'boolean' } },
  positionals: { min: 1, max: Infinity },
  async run(ctx, values, ids) {
    // Loaded here: the Temporal SDK is heavy, and no other command needs it.
    const { loadConfig } = require('../../../src/common/config') as typeof import('../../../src/common/config');
    const { dataConverter } =
      require('../../../src/common/codec/data-converter') as typeof import('../../../src/common/codec/data-converter');
    const replay = require('../../../src/cli/replay-runs') as typeof import('../../../src/cli/replay-runs');
    // The key file of `npm start` lives in the repository's data folder, wherever the CLI runs from.
    const env = { ...ctx.env, DATA_DIR: ctx.env.DATA_DIR || path.join(ROOT, '.data') };
    const config = loadConfig(env);
    const converter = dataConverter(config);
    replay.quietRuntime();
    const { client, close } = await replay.connect(config.TEMPORAL_ADDRESS, config.TEMPORAL_NAMESPACE, converter);
    const outcomes = [];
    try {
      const runs = await replay.resolveRuns(client, ids);
      const bundle = await replay.bundle(path.join(ROOT, 'workflows'), converter);
      for await (const o of replay.replayRuns(client, bundle, runs, converter)) {
        outcomes.push(o);
        if (!values.json) {
          ctx.out.line(
            o.error === undefined
              ? `replay OK ${o.workflowId} ${o.runId} (${o.events} events)`
              : `replay FAILED ${o.workflowId} ${o.runId}: ${o.error}`,
          );
        }
      }
    } finally {
      await close();
    }
    const failed = outcomes.filter((o) => o.error !== undefined).length;
    if (values.json)
      ctx.out.line(
        JSON.stringify({
          replayed: outcomes.length - failed,
          failed,
          runs: outcomes.map((o) => ({ ...o, ok: o.error === undefined })),
        }),
      );
    else ctx.out.line(`${outcomes.length - failed} replayed, ${failed} failed`);
    return failed ? 1 : 0;
  },
};
