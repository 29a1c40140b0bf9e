// Static checks of temporal-docker/ (Docker does not run here): the compose file
// agrees with the service's configuration schema (src/common/config.ts) and with the
// repository (files its commands run), images are pinned, and references between
// services resolve. The Dockerfile's checks are in dockerfile.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../src/common/config';
import {
  ROOT,
  DIR,
  read,
  compose,
  services,
  DEFAULTS,
  SCHEMA_VARIABLES,
  APP_SERVICES,
  interpolate,
  REQUIRED_HOST_ENV,
  environmentOf,
  portsOf,
  imageTag,
  expectPinned,
  dependsOn,
  argv,
} from './compose-files';

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

  test('the gateway publishes the port src/common/config.ts defaults to, and listens on all interfaces in its container', () => {
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

  test.each(APP_SERVICES)('%s: sets only variables src/common/config.ts knows', (name) => {
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
