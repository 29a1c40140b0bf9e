import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { AppendLog } from '../../src/storage/append-log';
import { numberOf, range, scratchDir } from './helpers';

const newPath = scratchDir('append-log-crash');
const FIXTURE = path.join(__dirname, 'fixtures', 'crash-appender.js');

interface RunResult {
  startedAt: number;
  acknowledged: number[];
}

/** Runs the appender child, SIGKILLs it `killAfterMs` after it reports ready, returns what it acknowledged. */
function runAndKill(file: string, killAfterMs: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FIXTURE, file, '32'], {
      cwd: path.join(__dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let startedAt = -1;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (startedAt < 0) {
        const ready = /^ready (\d+)\n/.exec(stdout);
        if (ready) {
          startedAt = Number(ready[1]);
          setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        }
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (signal !== 'SIGKILL') {
        reject(new Error(`appender exited on its own (code ${code}): ${stderr}`));
        return;
      }
      // Only complete lines count; a partial last line was never fully reported.
      const lines = stdout.split('\n').slice(1, -1);
      resolve({ startedAt, acknowledged: lines.map(Number) });
    });
  });
}

describe('AppendLog crash safety', () => {
  it('keeps every acknowledged record across repeated SIGKILLs, in order and without gaps', async () => {
    const file = newPath();
    let expectedNext = 0;
    for (let round = 0; round < 3; round++) {
      const { startedAt, acknowledged } = await runAndKill(file, 300);
      expect(startedAt).toBe(expectedNext);
      expect(acknowledged.length).toBeGreaterThan(0);

      const { log, records } = await AppendLog.open(file);
      const numbers = records.map(numberOf);
      // Numbers are assigned in append-call order, so the durable log must be exactly 0..last.
      expect(numbers).toEqual(range(0, numbers.length));
      const present = new Set(numbers);
      const lost = acknowledged.filter((n) => !present.has(n));
      expect(lost).toEqual([]);
      for (const record of records.slice(-50)) {
        const n = numberOf(record);
        expect(record.length).toBe(4 + (n % 300));
        expect(record.subarray(4).every((b) => b === (n & 0xff))).toBe(true);
      }
      await log.close();
      expectedNext = numbers.length;
    }
  });
});
