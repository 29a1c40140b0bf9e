// `npm run bench:devserver` against the real dev server: which engines it runs, how it pairs
// their figures, and that its own code starts the real server, reads the Go process's RSS
// and stops it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { failedCase, type CaseResult } from '../../bench/bench-devserver-cases';
import type { Engine, Mode } from '../../bench/bench-devserver-options';
import { parseOptions } from '../../bench/bench-devserver-options';
import { compareEngines, comparisonRows, goalVerdicts } from '../../bench/bench-devserver-report';
import { ServerProcess, launchCommand, liveServers } from '../../bench/bench-devserver-server';
import { realTemporalCli } from '../support/real-temporal';

describe('--engines', () => {
  it('runs both engines unless told otherwise, the embedded one first', () => {
    expect(parseOptions([], {}).engines).toEqual(['embedded', 'temporal-cli']);
    expect(parseOptions(['--engines', 'temporal-cli,embedded'], {}).engines).toEqual(['embedded', 'temporal-cli']);
    expect(parseOptions(['--engines=embedded'], {}).engines).toEqual(['embedded']);
  });

  it('reads BENCH_ENGINES, and the flag wins over it', () => {
    expect(parseOptions([], { BENCH_ENGINES: 'temporal-cli' }).engines).toEqual(['temporal-cli']);
    expect(parseOptions(['--engines', 'embedded'], { BENCH_ENGINES: 'temporal-cli' }).engines).toEqual(['embedded']);
  });

  it('refuses an engine it does not know', () => {
    expect(() => parseOptions(['--engines', 'embedded,temporal'], {})).toThrow(/unknown engine temporal/);
  });
});

function result(
  engine: Engine,
  mode: Mode,
  concurrency: number,
  perSecond: number,
  p50Ms: number,
  p99Ms: number,
  peakRssMiB: number,
): CaseResult {
  return {
    ...failedCase(engine, mode, concurrency, 100, 'unused'),
    completed: 100,
    perSecond,
    p50Ms,
    p99Ms,
    peakRssMiB,
    note: '',
  };
}

describe('the comparison', () => {
  const results = [
    result('embedded', 'memory', 1, 40, 20, 30, 100),
    result('temporal-cli', 'memory', 1, 10, 100, 120, 200),
    result('embedded', 'file', 100, 150, 600, 900, 150),
    result('temporal-cli', 'file', 100, 200, 500, 800, 300),
  ];

  it('pairs each mode and concurrency, ratio = embedded / real', () => {
    const rows = compareEngines(results);
    expect(rows.map((r) => [r.mode, r.concurrency])).toEqual([
      ['memory', 1],
      ['file', 100],
    ]);
    expect(rows[0].perSecond).toEqual({ embedded: 40, real: 10, ratio: 4 });
    expect(rows[1].p99Ms.ratio).toBeCloseTo(1.125);
    expect(comparisonRows(rows)).toEqual([
      [
        'persistence',
        'conc',
        'wf/s emb / real',
        'x',
        'p50 ms emb / real',
        'x',
        'p99 ms emb / real',
        'x',
        'peak RSS MiB emb / real',
        'x',
      ],
      ['memory', '1', '40 / 10', '4.00', '20.0 / 100.0', '0.20', '30.0 / 120.0', '0.25', '100 / 200', '0.50'],
      ['file', '100', '150 / 200', '0.75', '600.0 / 500.0', '1.20', '900.0 / 800.0', '1.13', '150 / 300', '0.50'],
    ]);
  });

  it('says per mode whether the embedded throughput reached the real one', () => {
    const goal = goalVerdicts(compareEngines(results));
    expect(goal.map((g) => [g.mode, g.met])).toEqual([
      ['memory', true],
      ['file', false],
    ]);
    expect(goal[1].line).toBe('embedded wf/s >= real, persistence (file) (goal): conc 100 0.75x -> NOT MET');
  });

  it('does not call the goal met when one engine has no figure', () => {
    const rows = compareEngines([results[2], { ...results[3], perSecond: NaN }]);
    expect(rows[0].perSecond.ratio).toBeNaN();
    expect(goalVerdicts(rows)[0]).toMatchObject({ met: undefined, line: expect.stringMatching(/-> UNKNOWN/) });
  });
});

describe('the real dev server under the bench', () => {
  const spec = () => ({ engine: 'temporal-cli' as const, bin: realTemporalCli(), nodeFlags: [], probePath: '' });

  it('is started with the arguments the bench documents', () => {
    const cmd = launchCommand({ ...spec(), bin: '/x/temporal' }, 7000, '/tmp/t.db');
    expect(cmd).toEqual({
      file: '/x/temporal',
      args: [
        'server',
        'start-dev',
        '--headless',
        '--port',
        '7000',
        '--log-level',
        'warn',
        '--db-filename',
        '/tmp/t.db',
        '--ip',
        '127.0.0.1',
      ],
    });
  });

  it('starts with a db file, reports the Go process own peak RSS and stops', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-devserver-test-'));
    const server = await ServerProcess.start(spec(), path.join(dir, 'real.db'));
    try {
      // The pid is the server binary itself, not a wrapper whose RSS would say nothing.
      expect(fs.readlinkSync(`/proc/${server.pid}/exe`)).toBe(fs.realpathSync(spec().bin));
      const mem = server.memory();
      expect(mem.hwm).toBeGreaterThan(20 * 1024 * 1024);
      expect(mem.hwm).toBeGreaterThanOrEqual(mem.rss);
      expect(server.dbBytes()).toBeGreaterThan(0);
      // No probe in a Go process: the heap figure is missing rather than made up.
      expect((await server.heap()).heapUsed).toBeNaN();
    } finally {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(fs.existsSync(`/proc/${server.pid}`)).toBe(false);
    expect(liveServers.size).toBe(0);
  });
});
