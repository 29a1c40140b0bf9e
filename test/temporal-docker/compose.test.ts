// Static checks of temporal-docker/ (Docker does not run here): the compose file
// agrees with the service's configuration schema (src/config.ts) and with the
// repository (files its commands run, what the Dockerfile copies), images are
// pinned, and references between services resolve.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { envSchema, loadConfig } from '../../src/config';

const ROOT = path.resolve(__dirname, '../..');
const DIR = path.join(ROOT, 'temporal-docker');
const read = (p: string) => fs.readFileSync(p, 'utf8');

type EnvMap = Record<string, string | number | boolean | null>;
type PortEntry =
  string | number | { target: number | string; published?: number | string; host_ip?: string; protocol?: string };
type VolumeEntry = string | { type?: string; source?: string; target: string; read_only?: boolean };
interface Service {
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
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

// `merge: true`: the file shares settings through YAML anchors and `<<` merge keys.
const compose = parse(read(path.join(DIR, 'docker-compose.yml')), { merge: true }) as Compose;
const services = compose.services;
const DEFAULTS = envSchema.parse({});
const SCHEMA_VARIABLES = new Set(Object.keys(envSchema.shape));
const APP_SERVICES = ['gateway', 'worker'];

/** Compose variable interpolation: $$, $VAR, ${VAR}, ${VAR:-d}, ${VAR-d}, ${VAR:+r}, ${VAR+r}, ${VAR:?e}, ${VAR?e}. */
function interpolate(value: string, env: Record<string, string | undefined>): string {
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
const REQUIRED_HOST_ENV = { PAYLOAD_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}` };

/** A service's environment as strings, interpolated against the given host environment (plus REQUIRED_HOST_ENV). */
function environmentOf(name: string, host: Record<string, string | undefined> = {}): Record<string, string> {
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

interface Port {
  hostIp?: string;
  published?: number;
  target: number;
  protocol: string;
}

/** Short (`[ip:]host:container[/proto]`, `container`) and long port syntax. */
function parsePort(entry: PortEntry): Port {
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

const portsOf = (name: string) => (services[name]?.ports ?? []).map(parsePort);

/** `postgres:16.10` → tag "16.10"; digests count as pinned. */
function imageTag(ref: string): { name: string; tag?: string; digest?: string } {
  const [nameTag, digest] = ref.split('@');
  const slash = nameTag.lastIndexOf('/');
  const colon = nameTag.lastIndexOf(':');
  return colon > slash
    ? { name: nameTag.slice(0, colon), tag: nameTag.slice(colon + 1), digest }
    : { name: nameTag, digest };
}

function expectPinned(ref: string, where: string): void {
  const { tag, digest } = imageTag(ref);
  if (digest) return;
  // A pin names at least major.minor: `latest`, no tag, or a bare major (postgres:16) float.
  expect({ where, ref, pinned: tag !== undefined && tag !== 'latest' && /\d+\.\d+/.test(tag) }).toEqual({
    where,
    ref,
    pinned: true,
  });
}

function dependsOn(name: string): Record<string, string> {
  const d = services[name]?.depends_on ?? [];
  return Array.isArray(d)
    ? Object.fromEntries(d.map((n) => [n, 'service_started']))
    : Object.fromEntries(Object.entries(d).map(([n, v]) => [n, v?.condition ?? 'service_started']));
}

/** Dockerfile instructions, continuation lines joined, comments dropped. */
function dockerfileInstructions(file: string): { op: string; args: string }[] {
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
const argv = (v: string | string[]): string[] => {
  if (Array.isArray(v)) return v;
  const s = v.trim();
  return s.startsWith('[') ? (JSON.parse(s) as string[]) : s.split(/\s+/);
};

/** Repository files a command runs: its arguments that name script files. */
const scriptArgs = (args: string[]) => args.filter((a) => /\.(ts|js|cjs|mjs)$/.test(a));

/** Resolves a relative import the way tsx/Node does for this repository's .ts sources. */
function resolveImport(fromFile: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(fromFile), spec);
  for (const c of [base, `${base}.ts`, `${base}.js`, path.join(base, 'index.ts'), path.join(base, 'index.js')]) {
    if (fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  }
  return undefined;
}

/** Every repository file reachable through relative imports/requires from the entry files. */
function localClosure(entries: string[]): Set<string> {
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

describe('temporal-docker/docker-compose.yml', () => {
  test('parses and declares the required services', () => {
    expect(typeof services).toBe('object');
    for (const name of [
      'postgresql',
      'temporal',
      'temporal-admin-tools',
      'temporal-ui',
      'redis',
      'gateway',
      'worker',
    ]) {
      expect({ name, declared: name in services }).toEqual({ name, declared: true });
    }
  });

  test('every image is pinned to a version (no latest, no floating major)', () => {
    for (const [name, svc] of Object.entries(services)) {
      expect({ name, hasImageOrBuild: Boolean(svc.image || svc.build) }).toEqual({ name, hasImageOrBuild: true });
      if (svc.image) expectPinned(interpolate(svc.image, {}), `service ${name}`);
    }
  });

  test('uses the agreed images: postgres 16, temporalio/auto-setup, temporalio/ui, redis 7 with appendonly', () => {
    const image = (n: string) => imageTag(interpolate(services[n].image ?? '', {}));
    expect(image('postgresql').name).toBe('postgres');
    expect(image('postgresql').tag).toMatch(/^16(\.|$)/);
    expect(image('temporal').name).toBe('temporalio/auto-setup');
    expect(image('temporal-ui').name).toBe('temporalio/ui');
    expect(image('redis').name).toBe('redis');
    expect(image('redis').tag).toMatch(/^7(\.|$)/);
    expect(argv(services.redis.command ?? []).join(' ')).toMatch(/--appendonly yes/);
  });

  test('the gateway publishes the port src/config.ts defaults to, and listens on all interfaces in its container', () => {
    const env = environmentOf('gateway');
    const port = env.PORT ? Number(env.PORT) : DEFAULTS.PORT;
    expect(port).toBe(DEFAULTS.PORT);
    const published = portsOf('gateway');
    expect(published).toContainEqual(
      expect.objectContaining({ target: port, published: DEFAULTS.PORT, protocol: 'tcp' }),
    );
    // HOST defaults to 127.0.0.1, which a published port cannot reach.
    expect(['0.0.0.0', '::']).toContain(env.HOST);
  });

  test('the UI publishes 8233 to its container port 8080', () => {
    expect(portsOf('temporal-ui')).toContainEqual(expect.objectContaining({ target: 8080, published: 8233 }));
  });

  test.each([...APP_SERVICES, 'temporal-ui', 'temporal-admin-tools'])(
    '%s: TEMPORAL_ADDRESS is the temporal service on its container port 7233',
    (name) => {
      const address = environmentOf(name).TEMPORAL_ADDRESS;
      const m = /^([^:]+):(\d+)$/.exec(address ?? '');
      expect(m).not.toBeNull();
      const [, host, port] = m!;
      expect(host).toBe('temporal');
      expect(Number(port)).toBe(7233);
      expect(portsOf('temporal').map((p) => p.target)).toContain(7233);
    },
  );

  test.each(APP_SERVICES)('%s: REDIS_URL is the redis service on its port', (name) => {
    const url = new URL(environmentOf(name).REDIS_URL);
    expect(url.protocol).toBe('redis:');
    expect(url.hostname).toBe('redis');
    expect(services[url.hostname]).toBeDefined();
    const cmd = argv(services.redis.command ?? []);
    const i = cmd.indexOf('--port');
    const redisPort = i >= 0 ? Number(cmd[i + 1]) : 6379;
    expect(Number(url.port || 6379)).toBe(redisPort);
  });

  test.each(APP_SERVICES)('%s: sets only variables src/config.ts knows', (name) => {
    const unknown = Object.keys(environmentOf(name)).filter((k) => !SCHEMA_VARIABLES.has(k));
    expect(unknown).toEqual([]);
  });

  test.each([
    ['with only the required PAYLOAD_KEYS set on the host', {}],
    [
      'with a real provider configured',
      {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: 'https://api.openai.com/v1',
        API_KEYS: 'k1:alice',
        LOG_LEVEL: 'debug',
      },
    ],
  ])('gateway and worker configurations load %s', (_label, hostEnv: Record<string, string>) => {
    for (const name of APP_SERVICES) {
      const env = environmentOf(name, hostEnv);
      const config = loadConfig(env);
      expect(config.TEMPORAL_NAMESPACE).toBe(environmentOf('temporal').DEFAULT_NAMESPACE);
      for (const key of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'API_KEYS', 'LOG_LEVEL'] as const) {
        if (key in env && hostEnv[key]) expect(config[key]).toBe(hostEnv[key]);
      }
    }
  });

  test('without PAYLOAD_KEYS on the host, compose refuses to start the gateway and worker, saying what to set', () => {
    for (const name of APP_SERVICES)
      expect(() => environmentOf(name, { PAYLOAD_KEYS: undefined })).toThrow(
        /required variable PAYLOAD_KEYS: set PAYLOAD_KEYS to id:base64key/,
      );
    for (const name of APP_SERVICES)
      expect(loadConfig(environmentOf(name)).PAYLOAD_KEYS).toBe(REQUIRED_HOST_ENV.PAYLOAD_KEYS);
  });

  test('the worker uses the scripted-model service unless OPENAI_BASE_URL is set', () => {
    const url = new URL(environmentOf('worker').OPENAI_BASE_URL);
    expect(services[url.hostname]).toBeDefined();
    const cmd = argv(services[url.hostname].command ?? []);
    expect(cmd).toEqual(expect.arrayContaining(['--host', '0.0.0.0']));
    const i = cmd.indexOf('--port');
    expect(Number(url.port)).toBe(i >= 0 ? Number(cmd[i + 1]) : 8787);
    expect(environmentOf('worker', { OPENAI_BASE_URL: 'https://api.openai.com/v1' }).OPENAI_BASE_URL).toBe(
      'https://api.openai.com/v1',
    );
  });

  test('depends_on names existing services, with valid conditions, and service_healthy targets have healthchecks', () => {
    for (const name of Object.keys(services)) {
      for (const [dep, condition] of Object.entries(dependsOn(name))) {
        expect({ name, dep, exists: dep in services }).toEqual({ name, dep, exists: true });
        expect(['service_started', 'service_healthy', 'service_completed_successfully']).toContain(condition);
        if (condition === 'service_healthy')
          expect({ dep, healthcheck: Boolean(services[dep].healthcheck?.test) }).toEqual({ dep, healthcheck: true });
        // A service must not wait for one that only starts under a profile it does not share.
        const depProfiles = services[dep].profiles ?? [];
        if (depProfiles.length) expect(services[name].profiles ?? []).toEqual(expect.arrayContaining(depProfiles));
      }
    }
    expect(dependsOn('temporal')).toEqual({ postgresql: 'service_healthy' });
    for (const name of APP_SERVICES)
      expect(dependsOn(name)).toMatchObject({ temporal: 'service_healthy', redis: 'service_healthy' });
  });

  test('named volumes are declared and bind mounts exist', () => {
    for (const [name, svc] of Object.entries(services)) {
      for (const v of svc.volumes ?? []) {
        const source = typeof v === 'string' ? (v.split(':').length > 1 ? v.split(':')[0] : undefined) : v.source;
        if (!source) continue; // anonymous volume
        if (source.startsWith('.') || source.startsWith('/')) {
          expect({ name, source, exists: fs.existsSync(path.resolve(DIR, source)) }).toEqual({
            name,
            source,
            exists: true,
          });
        } else {
          expect({ name, source, declared: source in (compose.volumes ?? {}) }).toEqual({
            name,
            source,
            declared: true,
          });
        }
      }
    }
  });

  test('the temporal server gets the mounted dynamic config, with workflow updates enabled', () => {
    const file = environmentOf('temporal').DYNAMIC_CONFIG_FILE_PATH;
    const inContainer = path.posix.resolve('/etc/temporal', file); // the image's working directory
    const mount = (services.temporal.volumes ?? [])
      .map((v) =>
        typeof v === 'string'
          ? { source: v.split(':')[0], target: v.split(':')[1] }
          : { source: v.source ?? '', target: v.target },
      )
      .find((m) => inContainer.startsWith(`${m.target}/`));
    expect(mount).toBeDefined();
    const onHost = path.resolve(DIR, mount!.source, path.posix.relative(mount!.target, inContainer));
    expect(fs.existsSync(onHost)).toBe(true);
    const config = parse(read(onHost)) as Record<string, { value: unknown; constraints?: Record<string, unknown> }[]>;
    for (const [key, values] of Object.entries(config)) {
      expect({
        key,
        isList: Array.isArray(values) && values.every((v) => v !== null && typeof v === 'object' && 'value' in v),
      }).toEqual({ key, isList: true });
    }
    expect(config['frontend.enableUpdateWorkflowExecution']?.[0]?.value).toBe(true);
  });

  test('services built from the repository use temporal-docker/Dockerfile with the repository root as context', () => {
    const built = Object.entries(services).filter(([, s]) => s.build);
    expect(built.map(([n]) => n)).toEqual(expect.arrayContaining(APP_SERVICES));
    for (const [, svc] of built) {
      const b = typeof svc.build === 'string' ? { context: svc.build } : svc.build!;
      const context = path.resolve(DIR, b.context ?? '.');
      expect(context).toBe(ROOT);
      expect(path.resolve(context, b.dockerfile ?? 'Dockerfile')).toBe(path.join(DIR, 'Dockerfile'));
    }
  });
});

describe('temporal-docker/Dockerfile', () => {
  const file = path.join(DIR, 'Dockerfile');
  const instructions = fs.existsSync(file) ? dockerfileInstructions(file) : [];
  const of = (op: string) => instructions.filter((i) => i.op === op);
  const copied = () =>
    of('COPY')
      .filter((c) => !c.args.includes('--from'))
      .flatMap((c) => {
        const parts = c.args.startsWith('[')
          ? (JSON.parse(c.args) as string[])
          : c.args.split(/\s+/).filter((p) => !p.startsWith('--'));
        return parts.slice(0, -1);
      });
  const dockerignore = () =>
    read(path.join(ROOT, '.dockerignore'))
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));

  test('exists, on a pinned node 20 Debian slim base', () => {
    expect(fs.existsSync(file)).toBe(true);
    const froms = of('FROM').map((f) => f.args.split(/\s+/)[0]);
    expect(froms.length).toBeGreaterThan(0);
    for (const ref of froms) expectPinned(ref, 'Dockerfile FROM');
    expect(froms[froms.length - 1]).toMatch(/^node:20\.[\d.]+-bookworm-slim(@|$)/);
  });

  test('runs as a non-root user', () => {
    const users = of('USER').map((u) => u.args.split(':')[0]);
    expect(users.length).toBeGreaterThan(0);
    expect(['root', '0']).not.toContain(users[users.length - 1]);
  });

  test('CMD, ENTRYPOINT and the compose commands of built services run files that exist and that the image contains', () => {
    const commands: string[][] = [...of('CMD'), ...of('ENTRYPOINT')].map((i) => argv(i.args));
    for (const svc of Object.values(services).filter((s) => s.build)) {
      if (svc.command) commands.push(argv(svc.command));
      if (svc.entrypoint) commands.push(argv(svc.entrypoint));
    }
    const scripts = commands.flatMap(scriptArgs);
    expect(scripts).toEqual(expect.arrayContaining(['src/gateway/main.ts', 'src/worker/main.ts']));
    const sources = copied();
    const inImage = (rel: string) =>
      sources.some((s) => s === '.' || rel === s || rel.startsWith(`${s.replace(/\/$/, '')}/`));
    for (const script of scripts) {
      expect({ script, exists: fs.existsSync(path.join(ROOT, script)) }).toEqual({ script, exists: true });
      // Everything the script loads from the repository (workflows, activities, ...) is copied.
      for (const dep of localClosure([path.join(ROOT, script)])) {
        const rel = path.relative(ROOT, dep);
        expect({ script, file: rel, copied: inImage(rel) }).toEqual({ script, file: rel, copied: true });
      }
    }
  });

  test('COPY sources exist and .dockerignore excludes none of them', () => {
    const ignored = dockerignore();
    for (const src of copied()) {
      expect({ src, exists: fs.existsSync(path.join(ROOT, src)) }).toEqual({ src, exists: true });
      expect(ignored).not.toContain(src);
      expect(ignored).not.toContain(`${src}/`);
    }
  });

  test('installs esbuild when the commands run through bin/register-ts.js (esbuild is a devDependency), and compiles the sources at build', () => {
    const pkg = JSON.parse(read(path.join(ROOT, 'package.json'))) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const usesLoader = [...of('CMD'), ...of('ENTRYPOINT')].some((i) =>
      argv(i.args).some((a) => a.endsWith('bin/register-ts.js')),
    );
    expect(usesLoader).toBe(true);
    // The processes run as a user who cannot write the compiled cache: it is filled at build.
    expect(of('RUN').some((r) => /\bnode bin\/register-ts\.js src workflows activities\b/.test(r.args))).toBe(true);
    if (pkg.dependencies?.esbuild) return;
    expect(pkg.devDependencies?.esbuild).toBeDefined();
    const installs = of('RUN').filter((r) => /\bnpm (ci|install|i)\b/.test(r.args));
    expect(installs.length).toBeGreaterThan(0);
    for (const r of installs) {
      expect(r.args).not.toMatch(/--omit[= ]dev|--production\b|--only[= ]prod/);
      expect(r.args).toMatch(/--include[= ]dev/); // survives NODE_ENV=production
    }
  });

  test('.dockerignore keeps node_modules, .git, local data and .env files out of the build context', () => {
    const ignored = dockerignore();
    for (const entry of ['node_modules', '.git', '.data', '.env']) expect(ignored).toContain(entry);
  });
});
