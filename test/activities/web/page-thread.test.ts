// The worker's page thread: pages made readable off the main thread, one at a time, the same as
// in process; an unreadable page's error crosses as the model's error; a page slower than the time
// limit ends the thread and its call (an error the model reads), and the next page gets a fresh
// thread; close() fails what is left.
import { PageThread } from '../../../activities/web/page-thread/page-thread';
import { pageContent, PageContentError, type PageInput } from '../../../activities/web/page-content';
import { pdfFile } from '../../support/pdf-file';

jest.setTimeout(30_000);
const threads: PageThread[] = [];
afterEach(async () => void (await Promise.all(threads.splice(0).map((t) => t.close()))));
const thread = (timeoutMs = 20_000) => {
  const t = new PageThread({ timeoutMs });
  threads.push(t);
  return t;
};

const html = (body: string): PageInput => ({
  bytes: Buffer.from(`<html><head><title>T</title></head><body>${body}</body></html>`),
  contentType: 'text/html; charset=utf-8',
  url: 'https://example.org/a',
  format: 'markdown',
});
const ARTICLE = html(
  `<nav>Home News</nav><article><h1>T</h1>${'<p>Barnacles glue themselves to rocks with a protein cement that sets under water. </p>'.repeat(6)}<p>See <a href="/more">more</a>.</p></article><footer>All rights reserved</footer>`,
);

test('a page is converted in the thread as in process; several at once each get their own', async () => {
  const t = thread();
  const pdf: PageInput = {
    bytes: pdfFile([['Tide report', 'High water at 06:12']]),
    contentType: 'application/pdf',
    url: 'https://example.org/r.pdf',
    format: 'markdown',
  };
  const [a, b, c] = await Promise.all([t.convert(ARTICLE), t.convert(pdf), t.convert({ ...ARTICLE, format: 'raw' })]);
  expect(a).toEqual(await pageContent(ARTICLE));
  expect(a).toMatchObject({ kind: 'html', text: expect.stringContaining('[more](https://example.org/more)') });
  expect(b).toMatchObject({ kind: 'pdf', pages: 1, text: expect.stringContaining('High water at 06:12') });
  expect(c).toMatchObject({ kind: 'html', text: expect.stringContaining('<footer>') });
});

test("an unreadable page's error comes back as the model's error", async () => {
  const broken: PageInput = {
    bytes: Buffer.from('%PDF-1.7 garbage'),
    contentType: 'application/pdf',
    url: 'https://example.org/x.pdf',
    format: 'markdown',
  };
  await expect(thread().convert(broken)).rejects.toThrow(PageContentError);
});

test('a page slower than the time limit is given up (the thread ends); the next page gets a fresh thread', async () => {
  const t = thread();
  // Megabytes of nested markup: far more than 30 ms of Readability and turndown.
  const heavy = html('<div><p>word </p>'.repeat(60_000) + '</div>'.repeat(60_000));
  const slow = t.convert(heavy, 30).catch((err: Error) => err);
  const queued = t.convert(ARTICLE);
  const err = await slow;
  expect(err).toBeInstanceOf(PageContentError);
  expect((err as Error).message).toMatch(/took longer than 0\.03 s to convert/);
  // Queued behind it, it ran on a fresh thread.
  expect(await queued).toEqual(await pageContent(ARTICLE));
});

test('close() fails the pages still waiting, and later calls', async () => {
  const t = thread();
  const pending = t.convert(ARTICLE).catch((err: Error) => err);
  await t.close();
  expect(await pending).toEqual(new Error('the page thread is closed'));
  await expect(t.convert(ARTICLE)).rejects.toThrow(/closed/);
});
