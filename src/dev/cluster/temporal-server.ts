// The official Temporal server for the production topology on one machine (scripts/cluster.sh):
// built once from its Go module into .tools/ (a pinned version, with the SQL tool of the same
// version and that version's schema files), its PostgreSQL databases created and migrated by that
// tool, and its configuration written for free ports.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, which } from '../launcher/processes';

/** The server's version: the one temporal-docker/docker-compose.yml runs (its auto-setup image's tag). */
export const TEMPORAL_SERVER_VERSION = '1.29.1';

export interface TemporalServerTools {
  server: string;
  sqlTool: string;
  /** schema/postgresql/v12 of the same version: temporal/versioned and visibility/versioned. */
  schemaDir: string;
}

const toolsDir = () => path.join(ROOT, '.tools', `temporal-server-${TEMPORAL_SERVER_VERSION}`);

function toolsIn(dir: string): TemporalServerTools {
  return {
    server: path.join(dir, 'bin', 'server'),
    sqlTool: path.join(dir, 'bin', 'sql'),
    schemaDir: path.join(dir, 'schema', 'postgresql', 'v12'),
  };
}

/**
 * The server and its SQL tool, built with `go install` the first time (about 3 minutes of a
 * cold Go build cache) into a folder moved into place only when whole; later calls find them.
 */
export function ensureTemporalServer(log: (line: string) => void): TemporalServerTools {
  const dir = toolsDir();
  const tools = toolsIn(dir);
  if (fs.existsSync(tools.server) && fs.existsSync(tools.sqlTool) && fs.existsSync(tools.schemaDir)) return tools;
  const go = which('go') ?? (fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (!go) throw new Error('building the Temporal server needs Go (https://go.dev/doc/install); none is on PATH');
  const partial = `${dir}.partial`;
  fs.rmSync(partial, { recursive: true, force: true });
  fs.mkdirSync(partial, { recursive: true });
  const v = `v${TEMPORAL_SERVER_VERSION}`;
  log(`building the Temporal server ${v} and its SQL tool from the Go module (once; a few minutes)...`);
  const env = { ...process.env, GOBIN: path.join(partial, 'bin'), GOFLAGS: '-mod=mod' };
  const built = spawnSync(
    go,
    ['install', `go.temporal.io/server/cmd/server@${v}`, `go.temporal.io/server/cmd/tools/sql@${v}`],
    { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 },
  );
  if (built.status !== 0) throw new Error(`go install of the Temporal server failed:\n${built.stderr.slice(-3000)}`);
  // The schema files come with the module's source, which the build left in the module cache.
  const modCache = spawnSync(go, ['env', 'GOMODCACHE'], { encoding: 'utf8' }).stdout.trim();
  const schema = path.join(modCache, `go.temporal.io/server@${v}`, 'schema', 'postgresql', 'v12');
  fs.cpSync(schema, toolsIn(partial).schemaDir, { recursive: true });
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(partial, dir);
  return tools;
}

export interface TemporalDatabase {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** Creates and migrates the two databases (persistence `temporal`, SQL visibility `temporal_visibility`). */
export function setupTemporalSchemas(tools: TemporalServerTools, db: TemporalDatabase): void {
  const base = ['--plugin', 'postgres12', '--ep', db.host, '-p', String(db.port), '-u', db.user, '--pw', db.password];
  for (const [database, schema] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ]) {
    const steps = [
      ['create-database'],
      ['setup-schema', '-v', '0.0'],
      ['update-schema', '-d', path.join(tools.schemaDir, schema, 'versioned')],
    ];
    for (const step of steps) {
      const r = spawnSync(tools.sqlTool, [...base, '--db', database, ...step], { encoding: 'utf8' });
      if (r.status !== 0)
        throw new Error(`temporal-sql-tool ${step[0]} (${database}) failed: ${(r.stderr || r.stdout).slice(-2000)}`);
    }
  }
}

export interface TemporalServerPorts {
  grpc: number;
  http: number;
  metrics: number;
  /** gRPC and membership ports of the frontend, history, matching and worker services. */
  internal: number[];
}

/** One SQL datastore of the server's configuration: the database `name` on the cluster's PostgreSQL. */
function datastoreConfig(db: TemporalDatabase, name: string, conns: number): string {
  return [
    `    ${name}:`,
    '      sql:',
    '        pluginName: "postgres12"',
    `        databaseName: "${name}"`,
    `        connectAddr: "${db.host}:${db.port}"`,
    '        connectProtocol: "tcp"',
    `        user: "${db.user}"`,
    `        password: "${db.password}"`,
    `        maxConns: ${conns}`,
    `        maxIdleConns: ${conns}`,
    '        maxConnLifetime: "1h"',
  ].join('\n');
}

/** The server's configuration (persistence and visibility on PostgreSQL, everything on loopback). */
export function temporalServerConfig(
  db: TemporalDatabase,
  ports: TemporalServerPorts,
  dynamicConfigFile: string,
): string {
  const store = (name: string, conns: number) => datastoreConfig(db, name, conns);
  const [fm, hg, hm, mg, mm, wg, wm] = ports.internal;
  const service = (name: string, grpc: number, membership: number, extra = '') =>
    `  ${name}:\n    rpc:\n      grpcPort: ${grpc}\n      membershipPort: ${membership}\n      bindOnIP: "127.0.0.1"\n${extra}`;
  return `# Written by scripts/cluster.sh (src/dev/cluster/temporal-server.ts); rewritten at each \`up\`.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: temporal
  visibilityStore: temporal_visibility
  numHistoryShards: 4
  datastores:
${store('temporal', 20)}
${store('temporal_visibility', 10)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
  metrics:
    prometheus:
      framework: "tally"
      timerType: "histogram"
      listenAddress: "127.0.0.1:${ports.metrics}"
services:
${service('frontend', ports.grpc, fm, `      httpPort: ${ports.http}\n`)}${service('history', hg, hm)}${service('matching', mg, mm)}${service('worker', wg, wm)}clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:${ports.grpc}"
      httpAddress: "127.0.0.1:${ports.http}"
dcRedirectionPolicy:
  policy: "noop"
dynamicConfigClient:
  filepath: "${dynamicConfigFile}"
  pollInterval: "10s"
`;
}
