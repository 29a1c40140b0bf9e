import { waitUntil } from './wait-until';

test('resolves as soon as a sync condition holds', async () => {
  let reads = 0;
  await expect(waitUntil('the third read', () => ++reads >= 3, { stepMs: 1 })).resolves.toBe(true);
  expect(reads).toBe(3);
});

test('returns the value read: truthy by default, or the one a predicate accepts', async () => {
  let n = 0;
  await expect(waitUntil('a value', async () => (++n >= 2 ? { id: 'x' } : undefined), { stepMs: 1 })).resolves.toEqual({
    id: 'x',
  });
  let m = 0;
  await expect(
    waitUntil(
      'm to reach 4',
      () => ++m,
      (v) => v === 4,
      { stepMs: 1 },
    ),
  ).resolves.toBe(4);
});

test('times out with what was awaited and the last value seen', async () => {
  let n = 0;
  const err: Error = await waitUntil(
    'the task to complete',
    () => ({ status: 'running', n: ++n }),
    (v) => v.status === 'completed',
    { timeoutMs: 200, stepMs: 20 },
  ).catch((e) => e);
  expect(err).toBeInstanceOf(Error);
  expect(err.message).toMatch(
    /^waitUntil: timed out after \d+ ms \(of 200\) waiting for the task to complete; \d+ read\(s\)/,
  );
  expect(err.message).toContain(`last value: { status: 'running', n: ${n} }`);
  expect(err.message).not.toContain('last error');
});

test('an async condition that throws keeps being polled, and the timeout reports its last error', async () => {
  let n = 0;
  const recovers = await waitUntil(
    'the service to answer',
    async () => {
      if (++n < 3) throw new Error(`refused ${n}`);
      return 'up';
    },
    { stepMs: 1 },
  );
  expect(recovers).toBe('up');
  expect(n).toBe(3);

  let m = 0;
  const err: Error = await waitUntil(
    'the service to answer',
    async () => {
      throw new Error(`connection refused #${++m}`);
    },
    { timeoutMs: 150, stepMs: 10 },
  ).catch((e) => e);
  expect(err.message).toContain('waiting for the service to answer');
  expect(err.message).toContain(`last error: Error: connection refused #${m}`);
  expect(err.message).not.toContain('last value');
  expect((err as Error & { cause?: Error }).cause?.message).toBe(`connection refused #${m}`);
});

test('a predicate that throws is one more try; the last value read is reported with its error', async () => {
  const err: Error = await waitUntil(
    'a body with items',
    () => ({ items: null }),
    (v: { items: null | string[] }) => v.items!.length > 0,
    { timeoutMs: 100, stepMs: 10 },
  ).catch((e) => e);
  expect(err.message).toContain('last value: { items: null }');
  expect(err.message).toMatch(/last error: TypeError/);
});

test('a read that never answers does not hold the wait past its deadline', async () => {
  const t0 = Date.now();
  const err: Error = await waitUntil('a read that hangs', () => new Promise<boolean>(() => undefined), {
    timeoutMs: 100,
  }).catch((e) => e);
  expect(err.message).toContain('waiting for a read that hangs');
  expect(err.message).toContain('the last read had not answered');
  // Not a speed claim: without the race the wait would never end (jest's timeout would fail it).
  expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
});

test('giveUpIf ends the wait at once with its reason, before the deadline', async () => {
  let reads = 0;
  let exited = false;
  const err: Error = await waitUntil(
    'the banner',
    () => {
      if (++reads === 3) exited = true;
      return false;
    },
    { timeoutMs: 60_000, stepMs: 1, giveUpIf: () => (exited ? 'the process exited (code 1)' : undefined) },
  ).catch((e) => e);
  expect(err.message).toMatch(
    /^waitUntil: gave up after \d+ ms waiting for the banner: the process exited \(code 1\); 3 read\(s\); last value: false$/,
  );
});

test('refuses a wait that does not say what it waits for', async () => {
  await expect(waitUntil('', () => true)).rejects.toThrow(/say what is awaited/);
});
