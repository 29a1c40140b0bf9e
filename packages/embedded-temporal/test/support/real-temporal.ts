// Where the real Temporal programs are, for the tests and benches that compare the embedded engine
// with them: the `temporal` CLI (its dev server) and the official time-skipping test server. In
// this repository they are installed into .tools/ by scripts/install-temporal-cli.sh on first use
// (pinned versions; TEMPORAL_CLI_VERSION and TEMPORAL_TEST_SERVER_VERSION pick others), as the
// service's launcher does; a checkout of the package alone, without that script, takes them from
// the PATH (`temporal`, `temporal-test-server`).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Thrown when a real Temporal program is wanted but cannot be had here. */
export class RealTemporalUnavailableError extends Error {}

/** The repository's install script, found from the package's folder upwards; undefined outside the repository. */
function installScript(): string | undefined {
  for (let dir = path.resolve(__dirname, '..', '..'); ; dir = path.dirname(dir)) {
    const script = path.join(dir, 'scripts', 'install-temporal-cli.sh');
    if (fs.existsSync(script)) return script;
    if (path.dirname(dir) === dir) return undefined;
  }
}

function installed(flag: '--cli-only' | '--test-server-only', onPath: string): string {
  const what = flag === '--cli-only' ? 'CLI' : 'test server';
  const script = installScript();
  if (!script) {
    const r = spawnSync('sh', ['-c', 'command -v "$0"', onPath], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
    throw new RealTemporalUnavailableError(`the real Temporal ${what} is not available: ${onPath} is not on the PATH`);
  }
  const r = spawnSync('bash', [script, flag], { encoding: 'utf8' });
  if (r.status !== 0) {
    const why = r.stderr.trim().split('\n').pop() || `install script exited with ${r.status}`;
    throw new RealTemporalUnavailableError(`the real Temporal ${what} is not available: ${why}`);
  }
  return r.stdout.trim().split('\n').pop()!;
}

/** Path of the real `temporal` executable (installed into .tools/ when missing). */
export function realTemporalCli(): string {
  return installed('--cli-only', 'temporal');
}

/** Path of the official time-skipping test server (installed into .tools/ when missing). */
export function realTestServer(): string {
  return installed('--test-server-only', 'temporal-test-server');
}
