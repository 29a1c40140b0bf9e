// scripts/cluster.sh: the production topology on one machine (docs/operations.md, "Beyond one
// machine").
//   up [--workers N] [--gateways N]   brings it up from nothing, prints GATEWAY_URL= and TEMPORAL_ADDRESS=
//   down                              stops everything and removes its folder
//   status                            what runs, and where
//   deploy --release DIR --build-id ID [--workers N] [--no-retire]
//                                     rolls a release out: its workers, then current, then the old ones retired
//   build                             only builds (or finds) the Temporal server and HAProxy (npm test does, early)
// The folder is CLUSTER_DIR, else .data/cluster.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../launcher/processes';
import { isAlive } from './detached';
import { readState, stateLines } from './state';
import { down, up } from './topology';
import { retireOldBuilds, rollOut } from './deploy';
import { ensureHaproxy } from './load-balancer';
import { ensureTemporalServer, TEMPORAL_SERVER_VERSION } from './temporal-server';

const USAGE =
  'usage: scripts/cluster.sh up [--workers N] [--gateways N] | down | status | build\n' +
  '       scripts/cluster.sh deploy --release DIR --build-id ID [--workers N] [--no-retire]';

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      workers: { type: 'string', default: '2' },
      gateways: { type: 'string', default: '2' },
      release: { type: 'string' },
      'build-id': { type: 'string' },
      'no-retire': { type: 'boolean', default: false },
    },
  });
  const dir = path.resolve(ROOT, process.env.CLUSTER_DIR || '.data/cluster');
  const say = (line: string) => process.stderr.write(`cluster: ${line}\n`);
  switch (positionals[0]) {
    case 'up': {
      const workers = count(values.workers, '--workers');
      const gateways = count(values.gateways, '--gateways');
      say(`starting in ${dir}: PostgreSQL, Temporal, Redis, ${workers} workers, ${gateways} gateways, HAProxy...`);
      const state = await up({ dir, workers, gateways, env: process.env, log: say });
      say(
        `up: ${state.nodes.length} processes (logs in ${path.join(dir, 'logs')}); scripts/cluster.sh down stops them`,
      );
      process.stdout.write(`${stateLines(state).join('\n')}\n`);
      return 0;
    }
    case 'build': {
      const tools = ensureTemporalServer(say);
      ensureHaproxy(say);
      say(`Temporal server ${TEMPORAL_SERVER_VERSION}: ${tools.server}`);
      return 0;
    }
    case 'deploy': {
      if (!values.release || !values['build-id']) throw new Error('deploy needs --release DIR and --build-id ID');
      const releaseDir = path.resolve(values.release);
      const opts = { dir, releaseDir, buildId: values['build-id'], workers: count(values.workers, '--workers') };
      await rollOut({ ...opts, log: say });
      if (!values['no-retire']) await retireOldBuilds(dir, { log: say });
      return 0;
    }
    case 'down':
      say((await down(dir)) ? 'down: stopped and removed' : 'down: nothing was up');
      return 0;
    case 'status': {
      const state = readState(dir);
      if (!state) {
        say('nothing is up');
        return 1;
      }
      for (const n of state.nodes)
        process.stdout.write(
          `${n.name}\t${n.role}\tpid ${n.pid}\t${isAlive(n.pid) ? 'running' : 'gone'}${n.port ? `\tport ${n.port}` : ''}\n`,
        );
      process.stdout.write(`${stateLines(state).join('\n')}\n`);
      return 0;
    }
    default:
      process.stderr.write(`${USAGE}\n`);
      return 2;
  }
}

function count(raw: string | undefined, flag: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 16)
    throw new Error(`${flag} must be a whole number from 1 to 16, got ${raw}`);
  return n;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`cluster: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
