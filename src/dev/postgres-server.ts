// A private PostgreSQL server (Debian's package) in a folder of its own, on loopback: the
// production cluster's database (scripts/cluster.sh) and the datastore tests' server. pg_ctl runs
// it as a daemon, so it outlives the process that started it until `stopPostgresServer`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { which } from './launcher/processes';

const APT_ENV = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };

/** The folder holding initdb and pg_ctl: PATH first, else Debian's newest version, installing the package when we may. */
export function postgresBin(): string {
  const onPath = which('initdb');
  if (onPath && which('pg_ctl')) return path.dirname(onPath);
  const found = newestDebianBin();
  if (found) return found;
  if (!which('apt-get') || process.getuid?.() !== 0) {
    throw new Error(
      'PostgreSQL is not installed and apt-get is not usable here: install it (e.g. `sudo apt-get install postgresql`)',
    );
  }
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', 'postgresql'],
  ]) {
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env: APT_ENV });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed; install postgresql yourself`);
  }
  const installed = newestDebianBin();
  if (!installed) throw new Error('initdb still not found after installing postgresql');
  return installed;
}

function newestDebianBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin/initdb')))
    : [];
  const v = versions.sort((a, b) => Number(b) - Number(a))[0];
  return v ? path.join(root, v, 'bin') : undefined;
}

/** initdb refuses to run as root, so root runs everything as the package's `postgres` user. */
const asRoot = process.getuid?.() === 0;

function run(bin: string, args: string[]): void {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0)
    throw new Error(
      `${path.basename(bin)} ${args[0]} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout || r.error?.message}`,
    );
}

function numericId(flag: '-u' | '-g'): number {
  const r = spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error("running as root needs the `postgres` system user (Debian's postgresql package creates it)");
  return Number(r.stdout.trim());
}

export interface PostgresServerOptions {
  /** An empty folder the server owns: its data (data/), socket and log. */
  dir: string;
  port: number;
  /** pg_hba.conf lines: who may connect and how. */
  hba: string[];
  /** Extra server settings (`-c name=value`), e.g. max_connections. */
  settings?: Record<string, string>;
}

/** initdb (superuser `postgres`, trusted on the socket) and start; the log is `<dir>/log`. */
export function startPostgresServer(opts: PostgresServerOptions): void {
  const bin = postgresBin();
  const owner = asRoot ? [numericId('-u'), numericId('-g')] : undefined;
  if (owner) fs.chownSync(opts.dir, owner[0], owner[1]);
  const data = path.join(opts.dir, 'data');
  run(path.join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--no-locale',
    '--no-sync',
    '--auth=trust',
  ]);
  fs.writeFileSync(path.join(data, 'pg_hba.conf'), `${opts.hba.join('\n')}\n`);
  if (owner) fs.chownSync(path.join(data, 'pg_hba.conf'), owner[0], owner[1]);
  const settings = Object.entries({ listen_addresses: '127.0.0.1', ...opts.settings }).map(([k, v]) => `-c ${k}=${v}`);
  const o = [`-p ${opts.port}`, `-k ${opts.dir}`, ...settings].join(' ');
  run(path.join(bin, 'pg_ctl'), ['start', '-D', data, '-o', o, '-l', path.join(opts.dir, 'log'), '-w']);
}

/** Stops the server of `dir` at once (no checkpoint: its data is thrown away or crash-safe anyway). */
export function stopPostgresServer(dir: string): void {
  run(path.join(postgresBin(), 'pg_ctl'), ['stop', '-D', path.join(dir, 'data'), '-m', 'immediate']);
}

/** The server's process id, from its pid file; undefined when it is not running. */
export function postgresPid(dir: string): number | undefined {
  try {
    return Number(fs.readFileSync(path.join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined;
  } catch {
    return undefined;
  }
}

/** The end of the server's log, for an error message. */
export function postgresLogTail(dir: string): string {
  const file = path.join(dir, 'log');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').slice(-2000) : '';
}
