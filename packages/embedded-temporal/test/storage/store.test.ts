import * as fs from 'node:fs';
import * as path from 'node:path';
import { FileStore, MemoryStore, type Mutation, type RecoveredEntry } from '../../src/storage/store';
import { range, scratchDir } from './helpers';

const newPath = scratchDir('store');
const b = (text: string): Buffer => Buffer.from(text, 'utf8');

/** Readable form of a recovered state map for assertions. */
function show(state: Map<string, RecoveredEntry>): Record<string, { value?: string; appends: string[] }> {
  const out: Record<string, { value?: string; appends: string[] }> = {};
  for (const [key, entry] of state) {
    out[key] = { appends: entry.appends.map(String) };
    if (entry.value !== undefined) out[key].value = String(entry.value);
  }
  return out;
}

/** The compaction input an engine would derive from its state: a snapshot, taken now. */
function liveOf(state: Map<string, RecoveredEntry>): Mutation[] {
  const out: Mutation[] = [];
  for (const [key, entry] of state) {
    if (entry.value !== undefined) out.push({ op: 'put', key, value: entry.value });
    for (const value of entry.appends) out.push({ op: 'append', key, value });
  }
  return out;
}

async function reopen(file: string, opts = {}): Promise<Map<string, RecoveredEntry>> {
  const { store, state } = await FileStore.open(file, opts);
  await store.close();
  return state;
}

describe('FileStore', () => {
  it('replays put / append / delete semantics in order', async () => {
    const file = newPath();
    const { store, state } = await FileStore.open(file);
    expect(state.size).toBe(0);
    await store.write([
      { op: 'put', key: 'wf/1', value: b('v1') },
      { op: 'append', key: 'wf/1', value: b('e1') },
      { op: 'append', key: 'wf/1', value: b('e2') },
      { op: 'append', key: 'only-appends', value: b('x') },
      { op: 'put', key: 'gone', value: b('soon') },
      { op: 'append', key: 'gone', value: b('soon-too') },
    ]);
    await store.write([
      { op: 'put', key: 'wf/1', value: b('v2') }, // replaces the value, keeps the appends
      { op: 'append', key: 'wf/1', value: b('e3') },
      { op: 'delete', key: 'gone' }, // drops value and appends
      { op: 'delete', key: 'never-existed' },
      { op: 'put', key: 'reborn', value: b('r1') },
      { op: 'delete', key: 'reborn' },
      { op: 'append', key: 'reborn', value: b('after-delete') },
      { op: 'put', key: 'empty-value', value: Buffer.alloc(0) },
      { op: 'put', key: 'ünïcødé 🔑', value: Buffer.from([0, 255, 10]) },
    ]);
    await store.close();

    const recovered = await reopen(file);
    expect(show(recovered)).toEqual({
      'wf/1': { value: 'v2', appends: ['e1', 'e2', 'e3'] },
      'only-appends': { appends: ['x'] },
      reborn: { appends: ['after-delete'] },
      'empty-value': { value: '', appends: [] },
      'ünïcødé 🔑': { value: '\u0000\ufffd\n', appends: [] },
    });
    expect(recovered.get('ünïcødé 🔑')?.value).toEqual(Buffer.from([0, 255, 10]));
    expect('value' in recovered.get('only-appends')!).toBe(false);
  });

  it('copies values at write() time so the engine may reuse its buffers', async () => {
    const file = newPath();
    const { store } = await FileStore.open(file);
    const scratch = b('first');
    const pending = store.write([{ op: 'put', key: 'k', value: scratch }]);
    scratch.write('XXXXX');
    await pending;
    await store.close();
    expect(show(await reopen(file))).toEqual({ k: { value: 'first', appends: [] } });
  });

  it('makes each batch all-or-nothing when the crash tears its record', async () => {
    const file = newPath();
    const { store } = await FileStore.open(file);
    await store.write([
      { op: 'put', key: 'a', value: b('a1') },
      { op: 'append', key: 'a', value: b('h1') },
    ]);
    const beforeLast = store.sizeBytes;
    await store.write([
      { op: 'put', key: 'a', value: b('a2') },
      { op: 'append', key: 'a', value: b('h2') },
      { op: 'delete', key: 'b' },
      { op: 'put', key: 'c', value: Buffer.alloc(100, 1) },
    ]);
    await store.close();
    const image = fs.readFileSync(file);

    for (let cut = beforeLast; cut < image.length; cut++) {
      const torn = path.join(path.dirname(file), `torn-${cut}.log`);
      fs.writeFileSync(torn, image.subarray(0, cut));
      expect(show(await reopen(torn))).toEqual({ a: { value: 'a1', appends: ['h1'] } });
    }
    expect(show(await reopen(file))).toEqual({
      a: { value: 'a2', appends: ['h1', 'h2'] },
      c: { value: '\u0001'.repeat(100), appends: [] },
    });
  });

  it('resolves concurrent writes in call order and group-commits them', async () => {
    const file = newPath();
    const { store } = await FileStore.open(file);
    const resolved: number[] = [];
    const writes = range(0, 200).map((i) =>
      store.write([{ op: 'append', key: `k${i % 10}`, value: b(String(i)) }]).then(() => resolved.push(i)),
    );
    // An empty batch still settles after everything issued before it.
    const barrier = store.write([]).then(() => resolved.push(-1));
    await Promise.all([...writes, barrier]);
    expect(resolved).toEqual([...range(0, 200), -1]);
    expect(store.stats.syncs).toBeLessThan(20);
    await store.close();
    const state = await reopen(file);
    expect(state.get('k3')?.appends.map(String)).toEqual(range(0, 20).map((i) => String(i * 10 + 3)));
  });

  it('rejects malformed mutations without writing anything', async () => {
    const file = newPath();
    const { store } = await FileStore.open(file);
    const size = store.sizeBytes;
    const bad = [
      [{ op: 'put', key: 'k', value: 'not a buffer' }],
      [{ op: 'append', key: 'k' }],
      [{ op: 'upsert', key: 'k', value: b('v') }],
      [{ op: 'delete', key: 42 }],
      [{ op: 'put', key: 'ok', value: b('fine') }, null],
    ] as unknown as Mutation[][];
    for (const batch of bad) await expect(store.write(batch)).rejects.toThrow(TypeError);
    expect(store.sizeBytes).toBe(size);
    await store.close();
    expect((await reopen(file)).size).toBe(0);
  });

  it('compacts to exactly the live state and keeps writes issued during compaction', async () => {
    const file = newPath();
    const { store } = await FileStore.open(file);
    // Shadow state maintained the way an engine would.
    const shadow = new Map<string, RecoveredEntry>();
    const apply = (batch: Mutation[]): Promise<void> => {
      for (const m of batch) {
        if (m.op === 'delete') shadow.delete(m.key);
        else {
          const entry = shadow.get(m.key) ?? { appends: [] };
          shadow.set(m.key, entry);
          if (m.op === 'put') entry.value = m.value;
          else entry.appends.push(m.value);
        }
      }
      return store.write(batch);
    };
    const pending: Promise<void>[] = [];
    for (let i = 0; i < 3000; i++) {
      const key = `wf/${i % 50}`;
      pending.push(apply([{ op: 'put', key, value: b(`state-${i}`) }]));
      if (i % 3 === 0) pending.push(apply([{ op: 'append', key, value: b(`event-${i}`) }]));
      if (i % 97 === 0) pending.push(apply([{ op: 'delete', key }]));
    }
    await Promise.all(pending);
    const before = store.sizeBytes;

    let compacted = false;
    const compacting = store.compact(liveOf(shadow)).then(() => (compacted = true));
    const during = apply([
      { op: 'append', key: 'wf/1', value: b('after-compact') },
      { op: 'put', key: 'new', value: b('n') },
    ]);
    // A write issued during the compaction is durable without waiting for it.
    await during;
    expect(compacted).toBe(false);
    await compacting;
    expect(store.shouldCompact()).toBe(false);
    expect(store.sizeBytes).toBeLessThan(before / 3);
    await store.close();

    expect(show(await reopen(file))).toEqual(show(shadow));
  });

  it('splits a large compaction into several records that replay identically', async () => {
    const file = newPath();
    const { store } = await FileStore.open(file, { fsync: false });
    const live: Mutation[] = range(0, 40).map((i) => ({ op: 'put', key: `big/${i}`, value: Buffer.alloc(100_000, i) }));
    await store.compact(live);
    expect(store.stats.rewrites).toBe(1);
    await store.close();
    const state = await reopen(file, { fsync: false });
    expect(state.size).toBe(40);
    expect(state.get('big/39')?.value).toEqual(Buffer.alloc(100_000, 39));
  });

  it('asks for compaction only when the file is big and mostly garbage', async () => {
    const file = newPath();
    const opts = { fsync: false, compactMinBytes: 10_000, compactRatio: 2 };
    const { store } = await FileStore.open(file, opts);
    const value = Buffer.alloc(100, 7);
    let i = 0;
    while (store.sizeBytes <= 10_000) {
      await store.write([{ op: 'put', key: 'k', value }]);
      i++;
    }
    expect(store.shouldCompact()).toBe(true);
    await store.compact([{ op: 'put', key: 'k', value }]);
    expect(store.shouldCompact()).toBe(false);
    await store.close();

    // Growth is judged against the last compaction, so doubling the file asks again (amortised cost).
    const { store: growing } = await FileStore.open(file, opts);
    for (let k = 0; k < 120; k++) await growing.write([{ op: 'put', key: `k${k}`, value }]);
    expect(growing.sizeBytes).toBeGreaterThan(10_000);
    expect(growing.shouldCompact()).toBe(true);
    await growing.close();

    // A freshly opened file that is all live data is not a candidate: its size is the baseline.
    const { store: reopened } = await FileStore.open(file, opts);
    expect(reopened.shouldCompact()).toBe(false);
    await reopened.close();
    expect(i).toBeGreaterThan(50);
  });

  it('rejects work after close', async () => {
    const { store } = await FileStore.open(newPath());
    await store.close();
    await expect(store.write([{ op: 'delete', key: 'k' }])).rejects.toThrow(/closed/);
    await expect(store.write([])).rejects.toThrow(/closed/);
    await expect(store.compact([])).rejects.toThrow(/closed/);
  });

  it('reports a record that is intact but not a valid batch', async () => {
    const file = newPath();
    const { AppendLog } = await import('../../src/storage/append-log');
    const { log } = await AppendLog.open(file);
    await log.append(b('not a batch'));
    await log.close();
    await expect(FileStore.open(file)).rejects.toThrow(/record 0 is not a valid batch/);
    // The failed open released the file.
    const again = await AppendLog.open(file);
    await again.log.close();
  });
});

describe('MemoryStore', () => {
  it('resolves immediately, never asks to compact, and validates like FileStore', async () => {
    const store = new MemoryStore();
    await store.write([{ op: 'put', key: 'k', value: b('v') }]);
    await store.compact([{ op: 'put', key: 'k', value: b('v') }]);
    expect(store.shouldCompact()).toBe(false);
    await expect(store.write([{ op: 'put', key: 'k' } as unknown as Mutation])).rejects.toThrow(TypeError);
    await store.close();
    await expect(store.write([])).rejects.toThrow(/closed/);
  });
});
