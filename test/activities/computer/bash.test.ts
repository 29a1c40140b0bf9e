// The bash tool's pure parts: the timeout a call gets, its output files' names, the words of a
// kill. What bash itself does is in bash.e2e.test.ts.
import { bashLimits, bashTimeout, killedText, outputName } from '../../../activities/computer/bash';

const limits = bashLimits({
  WORKSPACE_MAX_BYTES: 1024 * 1024 * 1024,
  WORKSPACE_MAX_FILES: 10_000,
  BASH_TIMEOUT_DEFAULT_S: 120,
  BASH_TIMEOUT_MAX_S: 600,
  SANDBOX_MEMORY_MB: 1024,
  SANDBOX_MAX_PROCESSES: 256,
  SANDBOX_CPU_SECONDS: 600,
  SANDBOX_MAX_OUTPUT_BYTES: 64 * 1024 * 1024,
  BASH_OUTPUT_MODEL_BYTES: 30 * 1024,
});

test('the timeout: the default when none or nonsense is asked, at least 1 s, at most the maximum (clamped, said)', () => {
  expect([undefined, 'x', -3, 0, NaN, Infinity].map((t) => bashTimeout(t, limits))).toEqual(
    Array(6).fill({ seconds: 120 }),
  );
  expect(bashTimeout(0.2, limits)).toEqual({ seconds: 1 });
  expect(bashTimeout(30, limits)).toEqual({ seconds: 30 });
  expect(bashTimeout(601, limits)).toEqual({ seconds: 600, clampedFrom: 601 });
});

test("output files are named after the call's id: as it is when safe, else its safe characters and a hash", () => {
  expect(outputName('call_Ab-9.x')).toBe('call_Ab-9.x');
  const odd = ['task/1/2', 'task/1_2', '..', ''].map(outputName);
  expect(odd[0]).toMatch(/^task_1_2-[0-9a-f]{8}$/);
  expect(odd[1]).toBe('task/1_2'.replace('/', '_') + odd[1].slice(8));
  expect(new Set(odd).size).toBe(4);
  for (const name of odd) expect(name).toMatch(/^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/);
  expect(outputName('x'.repeat(500)).length).toBeLessThanOrEqual(89);
});

test('a kill, in words the model acts on', () => {
  expect(killedText('memory', limits, 120)).toBe('killed: it used more than 1024 MiB of memory');
  expect(killedText('processes', limits, 120)).toBe('killed: it tried to run more than 256 processes at once');
  expect(killedText('timeout', limits, 5)).toBe(
    'killed: it ran longer than its timeout of 5 s (a longer one may be asked, up to 600 s)',
  );
  expect(killedText('cpu', limits, 5)).toBe('killed: it used more than 600 s of CPU time');
  expect(killedText('output', limits, 5)).toMatch(/^killed: it wrote more than 64 MiB of output/);
  expect(killedText('disk', limits, 5)).toBe(
    'killed: the workspace is over its quota of 1073741824 bytes or 10000 files: delete files (rm) to make room',
  );
});
