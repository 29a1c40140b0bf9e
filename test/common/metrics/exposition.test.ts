// Merging the gateway's exposition with the worker's: one HELP and TYPE per
// family, every sample of both under it, families in first-seen order.
import { Counter, Histogram, Registry } from 'prom-client';
import { mergeExpositions } from '../../../src/common/metrics/exposition';

const GATEWAY = `# HELP process_cpu_seconds_total Total CPU time.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total{process="gateway"} 1.5

# HELP aes_http_requests_total HTTP requests.
# TYPE aes_http_requests_total counter
aes_http_requests_total{method="GET",route="/tasks/:id",status_class="2xx",process="gateway"} 3
`;

const WORKER = `# HELP process_cpu_seconds_total Total CPU time.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total{process="worker"} 7

# HELP aes_step_duration_seconds Step durations.
# TYPE aes_step_duration_seconds histogram
aes_step_duration_seconds_bucket{le="0.1",kind="tool_call",process="worker"} 1
aes_step_duration_seconds_bucket{le="+Inf",kind="tool_call",process="worker"} 1
aes_step_duration_seconds_sum{kind="tool_call",process="worker"} 0.02
aes_step_duration_seconds_count{kind="tool_call",process="worker"} 1
`;

const typeLines = (text: string) => text.split('\n').filter((l) => l.startsWith('# TYPE'));

test('a family both processes have appears once, with both samples under its one HELP and TYPE', () => {
  const merged = mergeExpositions([GATEWAY, WORKER]);
  expect(merged.split('\n').slice(0, 4)).toEqual([
    '# HELP process_cpu_seconds_total Total CPU time.',
    '# TYPE process_cpu_seconds_total counter',
    'process_cpu_seconds_total{process="gateway"} 1.5',
    'process_cpu_seconds_total{process="worker"} 7',
  ]);
  expect(typeLines(merged)).toEqual([
    '# TYPE process_cpu_seconds_total counter',
    '# TYPE aes_http_requests_total counter',
    '# TYPE aes_step_duration_seconds histogram',
  ]);
});

test("a histogram's _bucket, _sum and _count samples stay with their family, after its TYPE", () => {
  const merged = mergeExpositions([GATEWAY, WORKER]).split('\n');
  const type = merged.indexOf('# TYPE aes_step_duration_seconds histogram');
  expect(merged.slice(type + 1, type + 5).map((l) => l.split('{')[0])).toEqual([
    'aes_step_duration_seconds_bucket',
    'aes_step_duration_seconds_bucket',
    'aes_step_duration_seconds_sum',
    'aes_step_duration_seconds_count',
  ]);
});

test('samples without a TYPE line, other comments and blank lines', () => {
  expect(mergeExpositions(['# a comment\nup 1\n\n', 'up{process="worker"} 0\n'])).toBe(
    'up 1\nup{process="worker"} 0\n',
  );
  expect(mergeExpositions(['', ''])).toBe('');
});

test("two real registries' texts, with the same metric names, merge into a valid exposition", async () => {
  const texts = await Promise.all(
    ['gateway', 'worker'].map(async (process) => {
      const registry = new Registry();
      registry.setDefaultLabels({ process });
      new Counter({ name: 'aes_x_total', help: 'x', registers: [registry] }).inc(2);
      new Histogram({ name: 'aes_h_seconds', help: 'h', buckets: [1], registers: [registry] }).observe(0.5);
      return registry.metrics();
    }),
  );
  const merged = mergeExpositions(texts);
  expect(typeLines(merged)).toEqual(['# TYPE aes_x_total counter', '# TYPE aes_h_seconds histogram']);
  expect(merged).toContain('aes_x_total{process="gateway"} 2\naes_x_total{process="worker"} 2\n');
  expect(merged.match(/^aes_h_seconds_count/gm)).toHaveLength(2);
  // Each family's lines are contiguous: no sample of one family after another family's TYPE.
  const families = merged
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.replace(/(_bucket|_sum|_count)?[{ ].*$/, ''));
  expect(families).toEqual([...families].sort((a, b) => families.indexOf(a) - families.indexOf(b)));
});
