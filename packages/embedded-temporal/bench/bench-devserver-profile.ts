/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): self time by function+file,
 * inclusive time by function, and self time by package/area, so a profile of the
 * dev server under bench-devserver.ts can be read without DevTools.
 *
 * Run: npx tsx bench/bench-devserver-profile.ts FILE.cpuprofile [--top N] [--filter SUBSTRING] [--skip-ms MS]
 * --filter limits the inclusive table to frames whose file contains SUBSTRING
 * (e.g. embedded-temporal/src/ to see which engine functions the time goes through).
 * --skip-ms drops the first MS of samples (server start-up: module loading, tsx
 * transpiling) so the tables describe the steady state.
 */
import * as fs from 'node:fs';
import type { CallFrame, CpuProfile, ProfileNode } from './bench-profile';

function shortFile(url: string): string {
  if (!url) return '';
  const file = url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('node_modules/');
  if (nm >= 0) return file.slice(nm + 'node_modules/'.length);
  // The engine's own files, as src/<area>/<file>.ts.
  const ds = file.indexOf('/embedded-temporal/src/');
  if (ds >= 0) return file.slice(ds + '/embedded-temporal/'.length);
  return file;
}

/** Coarse owner of a frame: where the time goes, by package or engine area. */
function area(frame: CallFrame): string {
  const name = frame.functionName;
  if (!frame.url) {
    if (name === '(garbage collector)' || name === '(idle)' || name === '(program)' || name === '(root)') return name;
    return '(native/builtin)';
  }
  const file = shortFile(frame.url);
  if (file.startsWith('node:')) return `node:${file.slice(5).split('/')[0]}`;
  if (file.startsWith('src/')) return file.split('/').slice(0, 2).join('/').replace(/\.ts$/, '');
  const parts = file.split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

function label(frame: CallFrame): string {
  const fn = frame.functionName || '(anonymous)';
  const file = shortFile(frame.url);
  return file ? `${fn}  ${file}:${frame.lineNumber + 1}` : fn;
}

function main(): void {
  const { file, top, filter, skipMs } = readArgs(process.argv.slice(2));
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  printTables(file, tally(profile, skipMs, filter), { skipMs, top, filter });
}

interface Args {
  file: string;
  top: number;
  filter?: string;
  skipMs: number;
}

function readArgs(args: string[]): Args {
  const file = args.find((a) => !a.startsWith('--'));
  if (!file) throw new Error('usage: bench-devserver-profile FILE.cpuprofile [--top N] [--filter SUBSTRING]');
  const topIdx = args.indexOf('--top');
  const top = topIdx >= 0 ? Number(args[topIdx + 1]) : 30;
  const filterIdx = args.indexOf('--filter');
  const filter = filterIdx >= 0 ? args[filterIdx + 1] : undefined;
  const skipIdx = args.indexOf('--skip-ms');
  const skipMs = skipIdx >= 0 ? Number(args[skipIdx + 1]) : 0;
  return { file, top, filter, skipMs };
}

/** Milliseconds by function and by area, self and inclusive, over the samples after the first `skipMs`. */
interface Tally {
  self: Map<string, number>;
  inclusive: Map<string, number>;
  areas: Map<string, number>;
  areasInclusive: Map<string, number>;
  total: number;
  idle: number;
}

function tally(profile: CpuProfile, skipMs: number, filter: string | undefined): Tally {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) byId.set(n.id, n);
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const t: Tally = {
    self: new Map(),
    inclusive: new Map(),
    areas: new Map(),
    areasInclusive: new Map(),
    total: 0,
    idle: 0,
  };
  let elapsed = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    // timeDeltas[i] is the gap before sample i; attribute it to that sample's frame.
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    elapsed += dt;
    if (elapsed < skipMs) continue;
    const leaf = byId.get(profile.samples[i]);
    if (!leaf) continue;
    t.total += dt;
    if (leaf.callFrame.functionName === '(idle)') t.idle += dt;
    const key = label(leaf.callFrame);
    t.self.set(key, (t.self.get(key) ?? 0) + dt);
    const a = area(leaf.callFrame);
    t.areas.set(a, (t.areas.get(a) ?? 0) + dt);
    // Each function (and area) counts once per sample even when recursive.
    const seen = new Set<string>();
    const seenAreas = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      if (!frame.url && frame.functionName === '(root)') continue;
      const fa = area(frame);
      if (!seenAreas.has(fa)) {
        seenAreas.add(fa);
        t.areasInclusive.set(fa, (t.areasInclusive.get(fa) ?? 0) + dt);
      }
      if (filter && !frame.url.includes(filter)) continue;
      const k = label(frame);
      if (seen.has(k)) continue;
      seen.add(k);
      t.inclusive.set(k, (t.inclusive.get(k) ?? 0) + dt);
    }
  }
  return t;
}

function printTables(file: string, t: Tally, { skipMs, top, filter }: Omit<Args, 'file'>): void {
  const { self, inclusive, areas, areasInclusive, total, idle } = t;
  const busy = total - idle;
  const pct = (ms: number, of: number) => `${((100 * ms) / of).toFixed(1)}%`.padStart(6);
  const print = (title: string, m: Map<string, number>, n: number, of: number) => {
    console.log(`\n${title}`);
    for (const [k, ms] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) {
      console.log(`  ${ms.toFixed(0).padStart(8)} ms  ${pct(ms, of)}  ${k}`);
    }
  };
  console.log(
    `${file}: ${skipMs ? `after the first ${skipMs} ms, ` : ''}${(total / 1000).toFixed(1)} s sampled, ${(idle / 1000).toFixed(1)} s idle, ${(busy / 1000).toFixed(1)} s busy; percentages are of busy time`,
  );
  print('self time by area', new Map([...areas].filter(([k]) => k !== '(idle)')), 25, busy);
  print(
    'inclusive time by area (samples with any frame of the area on the stack)',
    new Map([...areasInclusive].filter(([k]) => k !== '(idle)')),
    25,
    busy,
  );
  print(`self time by function (top ${top})`, new Map([...self].filter(([k]) => k !== '(idle)')), top, busy);
  print(
    `inclusive time by function${filter ? ` (frames in files containing "${filter}")` : ''} (top ${top})`,
    inclusive,
    top,
    busy,
  );
}

main();
