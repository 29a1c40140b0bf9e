// Builds the web console (console/src, a Preact single-page app) into console/dist with esbuild:
// one JavaScript and one CSS file, named by their content's hash (the gateway serves them as
// immutable), and the index.html that loads them. A build is skipped when nothing it reads has
// changed since the last one (a hash of the sources kept in dist/build.json), so `npm start` and
// `npm test`, which both call it, pay for it once. `node -r ./bin/register-ts.js console/build.ts`
// builds from the command line.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const ROOT = path.resolve(__dirname, '..');
/** Where the gateway finds the built console. */
export const CONSOLE_DIST = path.join(__dirname, 'dist');
/** What a build reads (the lock file: the bundled packages' versions): a change in any makes the next call build again. */
const INPUTS = [
  path.join(__dirname, 'src'),
  path.join(ROOT, 'client'),
  __filename,
  path.join(ROOT, 'package-lock.json'),
];
const BUILD_VERSION = 1;

export interface ConsoleBuild {
  /** The files of assets/, with their sizes: raw and gzip-compressed. */
  assets: { file: string; bytes: number; gzipBytes: number }[];
  /** Whether this call built (false: the last build was still current). */
  built: boolean;
}

function filesUnder(p: string): string[] {
  if (!fs.statSync(p).isDirectory()) return [p];
  return fs
    .readdirSync(p, { withFileTypes: true })
    .flatMap((e) => filesUnder(path.join(p, e.name)))
    .sort();
}

/** The hash of every input file's path and content. */
function sourceHash(): string {
  const h = crypto.createHash('sha256').update(String(BUILD_VERSION));
  for (const f of INPUTS.flatMap(filesUnder)) h.update(path.relative(ROOT, f)).update(fs.readFileSync(f));
  return h.digest('hex');
}

function readBuild(): { hash: string; assets: ConsoleBuild['assets'] } | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(CONSOLE_DIST, 'build.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

const INDEX = (js: string, css: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Agent console</title>
<link rel="stylesheet" href="/console/assets/${css}">
<script type="module" src="/console/assets/${js}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The console needs JavaScript.</noscript>
</body>
</html>
`;

/** Builds the console unless the last build is current; `force` builds anyway. */
export async function buildConsole(opts: { force?: boolean } = {}): Promise<ConsoleBuild> {
  const hash = sourceHash();
  const last = readBuild();
  if (!opts.force && last?.hash === hash && fs.existsSync(path.join(CONSOLE_DIST, 'index.html'))) {
    return { assets: last.assets, built: false };
  }
  // Loaded here: a gateway that only serves a built console never loads esbuild.
  const esbuild = await import('esbuild');
  const staging = `${CONSOLE_DIST}.tmp-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: [path.join(__dirname, 'src', 'main.tsx')],
    bundle: true,
    format: 'esm',
    target: ['chrome110', 'firefox110', 'safari16'],
    minify: true,
    sourcemap: false,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: path.join(staging, 'assets'),
    entryNames: 'console-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const outputs = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
  const js = outputs.find((f) => f.endsWith('.js'));
  const css = outputs.find((f) => f.endsWith('.css'));
  if (!js || !css) throw new Error(`console build: expected a .js and a .css output, got ${outputs.join(', ')}`);
  fs.writeFileSync(path.join(staging, 'index.html'), INDEX(js, css));
  const assets = outputs.map((file) => {
    const bytes = fs.readFileSync(path.join(staging, 'assets', file));
    return { file, bytes: bytes.length, gzipBytes: zlib.gzipSync(bytes, { level: 9 }).length };
  });
  fs.writeFileSync(path.join(staging, 'build.json'), JSON.stringify({ hash, assets }, null, 2));
  // Swapped in whole: a gateway serving the old build never sees half of the new one.
  const old = `${CONSOLE_DIST}.old-${process.pid}`;
  try {
    if (fs.existsSync(CONSOLE_DIST)) fs.renameSync(CONSOLE_DIST, old);
    fs.renameSync(staging, CONSOLE_DIST);
  } catch (err) {
    // Another process swapped its build in between (the same sources: the same files).
    if (!fs.existsSync(path.join(CONSOLE_DIST, 'index.html'))) throw err;
  } finally {
    fs.rmSync(old, { recursive: true, force: true });
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return { assets, built: true };
}

if (require.main === module) {
  buildConsole({ force: process.argv.includes('--force') }).then(
    (b) => {
      const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
      for (const a of b.assets) process.stdout.write(`${a.file}  ${kb(a.bytes)} (${kb(a.gzipBytes)} gzip)\n`);
      process.stdout.write(b.built ? 'console built into console/dist\n' : 'console/dist is current\n');
    },
    (err: Error) => {
      process.stderr.write(`console build failed: ${err.message}\n`);
      process.exit(1);
    },
  );
}
