// The package's TypeScript loader, for its launcher (bin/temporal-dev) when nothing loaded .ts
// files before it: a copy of the repository's bin/register-ts.js (which says why esbuild and not
// tsx), so that the package runs on its own; keep the two alike. Each .ts file is compiled by
// esbuild on its first load and kept, compiled, in the node_modules/.cache/register-ts beside the
// esbuild it uses (the repository's cache, in the workspace).
//
// `node bin/register-ts.js <folder>...` compiles every .ts file under the folders into the cache.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const CACHE_DIR = path.join(path.dirname(require.resolve('esbuild/package.json')), '..', '.cache', 'register-ts');
// Part of every cache key: a change to how this file compiles must not reuse what it compiled before.
const LOADER_VERSION = 1;
const OPTIONS = {
  loader: 'ts',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'inline',
  tsconfigRaw: { compilerOptions: { esModuleInterop: true } },
};

let esbuild;
let salt;

/** The compiled code of `file`, from the cache when its source was compiled before. */
function compiled(file, source) {
  salt ??= `${LOADER_VERSION}\0${require('esbuild/package.json').version}\0${JSON.stringify(OPTIONS)}`;
  const key = crypto
    .createHash('sha256')
    .update(salt)
    .update('\0')
    .update(file)
    .update('\0')
    .update(source)
    .digest('hex')
    .slice(0, 40);
  const cached = path.join(CACHE_DIR, `${key}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // not compiled yet
  }
  esbuild ??= require('esbuild');
  const { code } = esbuild.transformSync(source, { ...OPTIONS, sourcefile: file });
  try {
    fs.mkdirSync(CACHE_DIR, { recursive: true });
    // Whole or not at all: processes and their threads starting together may compile the same file.
    const tmp = `${cached}.${process.pid}.${require('node:worker_threads').threadId}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, cached);
  } catch {
    // a cache that cannot be written is passed over
  }
  return code;
}

/** Compiles every .ts file under `dirs` into the cache; the number of files. */
function warm(dirs) {
  let n = 0;
  for (const dir of dirs) {
    for (const rel of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      const file = path.resolve(dir, rel);
      if (!file.endsWith('.ts') || file.endsWith('.d.ts') || file.includes(`${path.sep}node_modules${path.sep}`))
        continue;
      compiled(file, fs.readFileSync(file, 'utf8'));
      n++;
    }
  }
  return n;
}

if (require.main === module) {
  const n = warm(process.argv.slice(2));
  process.stdout.write(
    `register-ts: ${n} files compiled into ${path.relative(process.cwd(), CACHE_DIR) || CACHE_DIR}\n`,
  );
} else if (!require.extensions['.ts']) {
  process.setSourceMapsEnabled(true);
  require.extensions['.ts'] = function loadTypeScript(module, filename) {
    module._compile(compiled(filename, fs.readFileSync(filename, 'utf8')), filename);
  };
}
