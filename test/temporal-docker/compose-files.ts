// What the static checks of temporal-docker/ read: the compose file parsed (YAML merge keys
// followed), its services' environment, ports, images and dependencies, the Dockerfile's
// instructions, and the repository files a command runs (compose.test.ts, dockerfile.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { envSchema } from '../../src/common/config';
export const ROOT = path.resolve(__dirname, '../..');
export const DIR = path.join(ROOT, 'temporal-docker');
export const read = (p: string) => fs.readFileSync(p, 'utf8');

export type EnvMap = Record<string, string | number | boolean | null>;
export type PortEntry =
  string | number | { target: number | string; published?: number | string; host_ip?: string; protocol?: string };
export type VolumeEntry = string | { type?: string; source?: string; target: string; read_only?: boolean };
export interface Service {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: EnvMap | string[];
  ports?: PortEntry[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  volumes?: VolumeEntry[];
  profiles?: string[];
}
export interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

// `merge: true`: the file shares settings through YAML anchors and `<<` merge keys.
export const compose = parse(read(path.join(DIR, 'docker-compose.yml')), { merge: true }) as Compose;
export const services = compose.services;
export const DEFAULTS = envSchema.parse({});
/**
 * The variables a service's settings may name: the configuration schema's, and the C library's
 * that the worker's process reads itself (its malloc arenas; docs/operations.md).
 */
export const SCHEMA_VARIABLES = new Set([...Object.keys(envSchema.shape), 'MALLOC_ARENA_MAX']);
export const APP_SERVICES = ['gateway', 'worker'];

/** Compose variable interpolation: $$, $VAR, ${VAR}, ${VAR:-d}, ${VAR-d}, ${VAR:+r}, ${VAR+r}, ${VAR:?e}, ${VAR?e}. */
export function interpolate(value: string, env: Record<string, string | undefined>): string {
  const re = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+?])((?:[^{}]|\{[^{}]*\})*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;
  return value.replace(re, (whole, braced?: string, op?: string, arg?: string, bare?: string) => {
    if (whole === '$$') return '$';
    const name = (braced ?? bare)!;
    const v = env[name];
    const set = v !== undefined;
    const nonEmpty = set && v !== '';
    const rest = () => interpolate(arg ?? '', env);
    switch (op) {
      case ':-':
        return nonEmpty ? v! : rest();
      case '-':
        return set ? v! : rest();
      case ':+':
        return nonEmpty ? rest() : '';
      case '+':
        return set ? rest() : '';
      case ':?':
      case '?':
        if (op === ':?' ? !nonEmpty : !set) throw new Error(`required variable ${name}: ${arg}`);
        return v!;
      default:
        return v ?? '';
    }
  });
}

/** What a host must set for `up` to start at all (the compose file refuses to run without payload keys). */
export const REQUIRED_HOST_ENV = { PAYLOAD_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}` };

/** A service's environment as strings, interpolated against the given host environment (plus REQUIRED_HOST_ENV). */
export function environmentOf(name: string, host: Record<string, string | undefined> = {}): Record<string, string> {
  const hostEnv: Record<string, string | undefined> = { ...REQUIRED_HOST_ENV, ...host };
  const env = services[name]?.environment ?? {};
  const pairs: [string, string][] = Array.isArray(env)
    ? env.map((e) => {
        const i = e.indexOf('=');
        return i < 0 ? [e, hostEnv[e] ?? ''] : [e.slice(0, i), e.slice(i + 1)];
      })
    : Object.entries(env).map(([k, v]) => [k, v === null ? (hostEnv[k] ?? '') : String(v)]);
  return Object.fromEntries(pairs.map(([k, v]) => [k, interpolate(v, hostEnv)]));
}

export interface Port {
  hostIp?: string;
  published?: number;
  target: number;
  protocol: string;
}

/** Short (`[ip:]host:container[/proto]`, `container`) and long port syntax. */
export function parsePort(entry: PortEntry): Port {
  if (typeof entry === 'object') {
    return {
      hostIp: entry.host_ip,
      published: entry.published === undefined ? undefined : Number(entry.published),
      target: Number(entry.target),
      protocol: entry.protocol ?? 'tcp',
    };
  }
  const [spec, protocol = 'tcp'] = interpolate(String(entry), {}).split('/');
  const m = /^(?:(\[[^\]]+\]|[^:]+):)??(?:(\d+(?:-\d+)?):)?(\d+(?:-\d+)?)$/.exec(spec);
  if (!m) throw new Error(`cannot parse port entry ${entry}`);
  const [, hostIp, published, target] = m;
  if (target.includes('-') || published?.includes('-')) throw new Error(`port ranges not expected here: ${entry}`);
  return {
    hostIp,
    published: published === undefined ? undefined : Number(published),
    target: Number(target),
    protocol,
  };
}

export const portsOf = (name: string) => (services[name]?.ports ?? []).map(parsePort);

/** `postgres:16.10` → tag "16.10"; digests count as pinned. */
export function imageTag(ref: string): { name: string; tag?: string; digest?: string } {
  const [nameTag, digest] = ref.split('@');
  const slash = nameTag.lastIndexOf('/');
  const colon = nameTag.lastIndexOf(':');
  return colon > slash
    ? { name: nameTag.slice(0, colon), tag: nameTag.slice(colon + 1), digest }
    : { name: nameTag, digest };
}

export function expectPinned(ref: string, where: string): void {
  const { tag, digest } = imageTag(ref);
  if (digest) return;
  // A pin names at least major.minor: `latest`, no tag, or a bare major (postgres:16) float.
  expect({ where, ref, pinned: tag !== undefined && tag !== 'latest' && /\d+\.\d+/.test(tag) }).toEqual({
    where,
    ref,
    pinned: true,
  });
}

export function dependsOn(name: string): Record<string, string> {
  const d = services[name]?.depends_on ?? [];
  return Array.isArray(d)
    ? Object.fromEntries(d.map((n) => [n, 'service_started']))
    : Object.fromEntries(Object.entries(d).map(([n, v]) => [n, v?.condition ?? 'service_started']));
}

/** Dockerfile instructions, continuation lines joined, comments dropped. */
export function dockerfileInstructions(file: string): { op: string; args: string }[] {
  const lines = read(file).split('\n');
  const out: { op: string; args: string }[] = [];
  let acc = '';
  for (const raw of lines) {
    const line = raw.trim();
    if (!acc && (line === '' || line.startsWith('#'))) continue;
    if (acc && line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      acc += `${line.slice(0, -1)} `;
      continue;
    }
    const full = acc + line;
    acc = '';
    const m = /^(\w+)\s+([\s\S]*)$/.exec(full);
    if (m) out.push({ op: m[1].toUpperCase(), args: m[2].trim() });
  }
  return out;
}

/** Exec-form (JSON) or shell-form arguments of CMD/ENTRYPOINT/command. */
export const argv = (v: string | string[]): string[] => {
  if (Array.isArray(v)) return v;
  const s = v.trim();
  return s.startsWith('[') ? (JSON.parse(s) as string[]) : s.split(/\s+/);
};

/** Repository files a command runs: its arguments that name script files. */
export const scriptArgs = (args: string[]) => args.filter((a) => /\.(ts|js|cjs|mjs)$/.test(a));

/** Resolves a relative import the way tsx/Node does for this repository's .ts sources. */
export function resolveImport(fromFile: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(fromFile), spec);
  for (const c of [base, `${base}.ts`, `${base}.js`, path.join(base, 'index.ts'), path.join(base, 'index.js')]) {
    if (fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  }
  return undefined;
}

/** Every repository file reachable through relative imports/requires from the entry files. */
export function localClosure(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const queue = [...entries];
  const re =
    /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire(?:\.resolve)?\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]*|\.{1,2})['"]/gm;
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of read(file).matchAll(re)) {
      const target = resolveImport(file, m[1]);
      if (!target) throw new Error(`${path.relative(ROOT, file)}: cannot resolve ${m[1]}`);
      queue.push(target);
    }
  }
  return seen;
}
