import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DocumentStore } from '../../../src/common/datastores/documents';
import { DatastoreConnectionError } from '../../../src/common/datastores/types';

let dir: string;
let file: string;
let store: DocumentStore;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'documents-'));
  file = path.join(dir, 'kb.sqlite');
  store = DocumentStore.open(file);
});

afterEach(() => {
  store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const ids = (hits: { id: string }[]) => hits.map((h) => h.id);

describe('DocumentStore', () => {
  it('adds, finds and removes a document', () => {
    const content = 'Customers may return any item within 30 days of delivery.';
    const info = store.add({ title: 'Returns policy', content });
    expect(info).toMatchObject({ title: 'Returns policy', format: 'text', chars: content.length });
    expect(info.id).toMatch(/^doc_[0-9a-f]{24}$/);
    expect(new Date(info.created_at).toISOString()).toBe(info.created_at);
    expect(store.get(info.id)).toEqual(info);
    expect(store.count()).toBe(1);

    expect(ids(store.search('return within days', 5))).toEqual([info.id]);
    expect(store.search('shipping', 5)).toEqual([]);

    expect(store.remove(info.id)).toBe(true);
    expect(store.remove(info.id)).toBe(false);
    expect(store.search('return', 5)).toEqual([]);
    expect(store.get(info.id)).toBeUndefined();
    expect(store.count()).toBe(0);
  });

  it('replaces a document with the same id', () => {
    store.add({ id: 'faq-1', title: 'Old', content: 'about pineapples' });
    const info = store.add({ id: 'faq-1', title: 'New', content: 'about mangoes' });
    expect(info).toMatchObject({ id: 'faq-1', title: 'New' });
    expect(store.count()).toBe(1);
    expect(store.search('pineapples', 5)).toEqual([]);
    expect(ids(store.search('mangoes', 5))).toEqual(['faq-1']);
  });

  it('refuses ids outside the pattern with a TypeError', () => {
    for (const id of ['', 'has space', 'a/b', 'x'.repeat(129), 'ünï']) {
      expect(() => store.add({ id, content: 'x' })).toThrow(TypeError);
    }
    expect(() => store.add({ id: 'ok', content: 'x', format: 'pdf' as never })).toThrow(/format/);
    expect(store.add({ id: 'A-z_0.9:x', content: 'x' }).id).toBe('A-z_0.9:x');
  });

  it('ranks a title match above a single mention in a long body', () => {
    const filler = 'lorem ipsum dolor sit amet consectetur adipiscing elit '.repeat(40);
    store.add({
      id: 'body',
      title: 'General notes',
      content: `${filler} the warranty is mentioned once here. ${filler}`,
    });
    store.add({ id: 'title', title: 'Warranty', content: 'Coverage lasts two years from the date of purchase.' });
    const hits = store.search('warranty', 5);
    expect(ids(hits)).toEqual(['title', 'body']);
    expect(hits[0].score).toBeGreaterThan(hits[1].score);
    expect(hits[1].score).toBeGreaterThan(0);
  });

  it('wraps matches in the snippet with [ and ]', () => {
    const filler = 'word '.repeat(50);
    store.add({ id: 's', title: 'Shipping', content: `${filler} parcels ship from Rotterdam every weekday ${filler}` });
    const [hit] = store.search('Rotterdam', 1);
    expect(hit.snippet).toContain('[Rotterdam]');
    expect(hit.snippet.split(/\s+/).length).toBeLessThanOrEqual(14);
  });

  it.each([
    '"',
    '""',
    '*',
    'NEAR(',
    'NEAR(a b',
    'AND OR',
    'AND',
    '-',
    ':',
    'title:x',
    '^a',
    'a + b',
    '(',
    ')',
    "'",
    '{a b}',
    'a* OR -b',
    '   ',
    '',
  ])('never throws on hostile search text %p', (text) => {
    store.add({ id: 'n', title: 'near and or', content: 'a b title x' });
    expect(() => store.search(text, 5)).not.toThrow();
  });

  it('finds words in hostile text and returns [] without any', () => {
    store.add({ id: 'n', title: 'and', content: 'near or not' });
    expect(ids(store.search('NEAR(', 5))).toEqual(['n']);
    expect(ids(store.search('AND OR', 5))).toEqual(['n']);
    expect(store.search('"*:-', 5)).toEqual([]);
  });

  it('searches JSON documents by their string values and keeps the original', () => {
    const content = JSON.stringify({
      sku: 'KB-77',
      name: 'Espresso machine',
      specs: { boiler: 'brass', watts: 1450 },
      tags: ['kitchen', 'coffee'],
    });
    const info = store.add({ id: 'p1', title: 'Product', format: 'json', content });
    expect(info).toMatchObject({ format: 'json', chars: content.length });
    expect(ids(store.search('brass', 5))).toEqual(['p1']);
    expect(ids(store.search('coffee', 5))).toEqual(['p1']);
    // Keys and syntax are not indexed.
    expect(store.search('specs', 5)).toEqual([]);
    expect(() => store.add({ format: 'json', content: '{not json' })).toThrow(TypeError);
  });

  it('takes markdown as is', () => {
    store.add({ id: 'md', format: 'markdown', content: '# Heading\n\n* **bold** item about llamas' });
    expect(store.search('llamas bold', 5)[0]).toMatchObject({ id: 'md' });
  });

  it('lists by id, page by page', () => {
    for (const id of ['c', 'a', 'e', 'b', 'd']) store.add({ id, content: id });
    const first = store.list({ limit: 2 });
    expect(ids(first)).toEqual(['a', 'b']);
    expect(ids(store.list({ limit: 2, after: 'b' }))).toEqual(['c', 'd']);
    expect(ids(store.list({ limit: 2, after: 'd' }))).toEqual(['e']);
    expect(store.list({ limit: 2, after: 'e' })).toEqual([]);
    expect(first[0]).toEqual({ id: 'a', title: '', format: 'text', chars: 1, created_at: expect.any(String) });
  });

  it('limits search results', () => {
    for (let i = 0; i < 10; i++) store.add({ id: `d${i}`, content: `apple number ${i}` });
    expect(store.search('apple', 3)).toHaveLength(3);
    expect(store.search('apple', 0)).toEqual([]);
  });

  it('lets a read-only reader see what is added after it opened', () => {
    const reader = DocumentStore.open(file, { readonly: true });
    try {
      expect(reader.count()).toBe(0);
      store.add({ id: 'late', title: 'Late arrival', content: 'added while the reader was open' });
      expect(reader.count()).toBe(1);
      expect(ids(reader.search('arrival', 5))).toEqual(['late']);
      expect(() => reader.add({ content: 'no' })).toThrow();
      const writer = DocumentStore.open(file);
      writer.add({ id: 'later', content: 'from a second writer' });
      writer.close();
      expect(ids(reader.search('second writer', 5))).toEqual(['later']);
    } finally {
      reader.close();
    }
  });

  it('refuses to open a missing file read-only', () => {
    expect(() => DocumentStore.open(path.join(dir, 'absent.sqlite'), { readonly: true })).toThrow(
      DatastoreConnectionError,
    );
  });
});
