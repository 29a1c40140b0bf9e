// Static checks of temporal-docker/Dockerfile (Docker does not run here): its base images
// are pinned, and it copies what the compose file's commands run (compose-files.ts reads both).
import fs from 'node:fs';
import path from 'node:path';
import {
  ROOT,
  DIR,
  read,
  services,
  expectPinned,
  dockerfileInstructions,
  argv,
  scriptArgs,
  localClosure,
} from './compose-files';

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
