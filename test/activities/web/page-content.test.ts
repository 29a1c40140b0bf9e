// What the model reads of a fetched response (activities/web/page-content.ts): an article page's
// main content as markdown with absolute links, none of the navigation, ads, sidebar or footer
// around it; the same as plain text, or the source; a page that is only a script gives nothing;
// legacy encodings; JSON and CSV as they are; images as binary; PDFs' text, and a broken or
// truncated PDF as an error the model can read.
import { PageContentError, pageContent, type PageInput } from '../../../activities/web/page-content';
import { pdfFile } from '../../support/pdf-file';

const URL_OF_PAGE = 'https://news.example.com/2024/05/bridges.html';

const ARTICLE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>How Engineers Make Bridges Stand Up | The Example Times</title>
  <style>.menu { color: red } body { font-family: sans-serif }</style>
  <script>window.trackingId = "UA-SECRET-TRACKER";</script>
</head>
<body>
  <nav class="menu"><ul><li><a href="/">Homepage</a></li><li><a href="/politics">Politics</a></li><li><a href="/sports">Sports</a></li></ul></nav>
  <div class="ad-banner" id="ad-top">Advertisement: Buy Zephyrcola today, the fizziest drink</div>
  <main>
    <article>
      <h1>How Engineers Make Bridges Stand Up</h1>
      <p>Bridges carry enormous loads every day, and engineers design them with
        <a href="/wiki/truss">truss structures</a> that spread the weight across many members.
        The oldest surviving examples are centuries old and still carry traffic.</p>
      <p>Suspension bridges hang their deck from cables strung between towers. The cables are
        anchored at each end, and the <a href="../glossary.html#tension">tension</a> in them holds
        the deck up against gravity and the wind that pushes on it from the side.</p>
      <p>Arch bridges turn the load into compression, which stone and concrete resist very well.
        Read more in <a href="https://other.example.org/arches?x=1">the arch survey</a>, or
        <a href="javascript:void(0)">share this story</a> with a friend who likes engineering.</p>
      <img src="/img/bridge.jpg" alt="A steel bridge at dusk">
    </article>
  </main>
  <aside class="sidebar"><h3>Trending</h3><ul><li><a href="/t/1">Celebrity gossip roundup</a></li><li><a href="/t/2">Weather tomorrow</a></li></ul></aside>
  <footer class="site-footer"><p>Copyright Example Times. <a href="/privacy">Privacy policy</a>. Unsubscribe anytime.</p></footer>
  <script>document.write("INLINE-SCRIPT-TEXT");</script>
</body>
</html>`;

const CHROME_WORDS = [
  'Homepage',
  'Politics',
  'Zephyrcola',
  'Advertisement',
  'Celebrity',
  'Trending',
  'Copyright',
  'Privacy',
];

function html(
  body: string | Uint8Array,
  extra: Partial<PageInput> = {},
): Promise<ReturnType<typeof pageContent> extends Promise<infer T> ? T : never> {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return pageContent({
    bytes,
    contentType: 'text/html; charset=utf-8',
    url: URL_OF_PAGE,
    format: 'markdown',
    ...extra,
  });
}

describe('HTML', () => {
  test('markdown: the article, its links absolute, none of the page chrome', async () => {
    const content = await html(ARTICLE);
    expect(content.kind).toBe('html');
    if (content.kind !== 'html') return;
    expect(content.charset).toBe('utf-8');
    expect(content.title).toBe('How Engineers Make Bridges Stand Up');
    const md = content.text;
    expect(md).toContain('Bridges carry enormous loads every day');
    expect(md).toContain('Suspension bridges hang their deck');
    expect(md).toContain('Arch bridges turn the load into compression');
    expect(md).toContain('[truss structures](https://news.example.com/wiki/truss)');
    expect(md).toContain('[tension](https://news.example.com/2024/glossary.html#tension)');
    expect(md).toContain('[the arch survey](https://other.example.org/arches?x=1)');
    // A javascript: link is its text; an image its alt text.
    expect(md).toContain('share this story');
    expect(md).not.toContain('javascript:');
    expect(md).toContain('A steel bridge at dusk');
    expect(md).not.toContain('bridge.jpg');
    for (const word of [...CHROME_WORDS, 'UA-SECRET', 'INLINE-SCRIPT', 'font-family']) expect(md).not.toContain(word);
    // Paragraphs are separated by a blank line.
    expect(md).toMatch(/traffic\.\n\nSuspension/);
  });

  test('text: the same content without markdown', async () => {
    const content = await html(ARTICLE, { format: 'text' });
    if (content.kind !== 'html') throw new Error(`kind ${content.kind}`);
    const text = content.text;
    expect(content.title).toBe('How Engineers Make Bridges Stand Up');
    expect(text).toContain('engineers design them with truss structures that spread the weight');
    expect(text).toMatch(/still carry traffic\.\n\nSuspension bridges/);
    expect(text).not.toMatch(/\]\(|https:|[*#]/);
    expect(text).not.toMatch(/ {2}|\n{3}/);
    for (const word of [...CHROME_WORDS, 'UA-SECRET', 'INLINE-SCRIPT']) expect(text).not.toContain(word);
  });

  test('text: list markers and numbers kept, table cells apart, line breaks kept', async () => {
    const page =
      '<ol start="3"><li>three</li><li>four<ul><li>nested</li></ul></li></ol>' +
      '<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table><p>line<br>break</p>';
    const content = await html(page, { format: 'text' });
    expect(content).toMatchObject({
      kind: 'html',
      text: '3. three\n4. four\n   - nested\n\na\tb\nc\td\n\nline\nbreak',
    });
  });

  test('raw: the decoded source as it came', async () => {
    const content = await html(ARTICLE, { format: 'raw' });
    expect(content).toEqual({
      kind: 'html',
      title: 'How Engineers Make Bridges Stand Up | The Example Times',
      text: ARTICLE,
      charset: 'utf-8',
    });
  });

  test('a page that is only a JavaScript shell gives (nearly) nothing, and none of its script', async () => {
    const shell =
      '<!doctype html><html><head><title>App</title><script src="/app.js"></script></head>' +
      '<body><div id=root></div><script>window.__DATA__ = {"user": "SHELL-SCRIPT-DATA"}; render(document.getElementById("root"));</script>' +
      '<noscript>You need to enable JavaScript to run this app.</noscript></body></html>';
    const content = await html(shell);
    if (content.kind !== 'html') throw new Error(`kind ${content.kind}`);
    expect(content.title).toBe('App');
    expect(content.text.trim().length).toBeLessThan(20);
    expect(content.text).not.toMatch(/SHELL-SCRIPT|render|enable JavaScript/);
  });

  test('a page without <html>, <head> or <body> tags is read all the same', async () => {
    const bare =
      '<title>Bare page</title><h1>Notes</h1><p>First note with a <a href="b.html">link</a>.</p><script>x()</script>';
    const content = await html(bare, { url: 'https://example.com/dir/a.html' });
    expect(content).toMatchObject({ kind: 'html', title: 'Bare page' });
    if (content.kind !== 'html') return;
    expect(content.text).toContain('First note with a [link](https://example.com/dir/b.html).');
    expect(content.text).not.toContain('x()');
  });

  test('a short page Readability finds no article in: its body, without nav, header, footer and scripts', async () => {
    const page = `<html><head><title>Status</title></head><body>
      <header>SITE-HEADER</header><nav>NAV-LINKS</nav>
      <div><h2>All systems operational</h2><span>Last checked <a href="/log">a minute ago</a>.</span></div>
      <form><input name=q><button>SEARCH-BUTTON</button></form><footer>SITE-FOOTER</footer><script>SCRIPT()</script>
    </body></html>`;
    const content = await html(page, { url: 'https://status.example.com/' });
    if (content.kind !== 'html') throw new Error(`kind ${content.kind}`);
    expect(content.text).toContain('All systems operational');
    expect(content.text).toContain('[a minute ago](https://status.example.com/log)');
    expect(content.text).not.toMatch(/SITE-HEADER|NAV-LINKS|SEARCH-BUTTON|SITE-FOOTER|SCRIPT/);
  });

  test('a page nested thousands deep is read (its deepest parts as text), not a stack overflow', async () => {
    const deep = `<html><body>${'<div><span>level</span>'.repeat(3000)}<p>The bottom of the page.</p>${'</div>'.repeat(3000)}</body></html>`;
    const content = await html(deep);
    if (content.kind !== 'html') throw new Error(`kind ${content.kind}`);
    expect(content.text).toContain('The bottom of the page.');
  });

  test('markdown: headings ATX, code fenced, lists with -, tables as rows of cells, <base href> honoured', async () => {
    const page = `<html><head><title>Guide</title><base href="https://docs.example.com/v2/"></head><body><article>
      <h2>Install the tool</h2>
      <p>Run the installer from the <a href="download">download page</a> and follow the steps that it prints on the screen for your system.</p>
      <pre><code class="language-sh">npm install --save example
example --init</code></pre>
      <ul><li>First item of the list</li><li>Second item with <strong>bold</strong></li></ul>
      <table><tr><th>Option</th><th>Meaning</th></tr><tr><td>--init</td><td>creates a config | file</td></tr></table>
      <p>That is all there is to it: the tool now runs in the background and checks for updates every day.</p>
    </article></body></html>`;
    const content = await html(page);
    if (content.kind !== 'html') throw new Error(`kind ${content.kind}`);
    const md = content.text;
    expect(md).toContain('## Install the tool');
    expect(md).toContain('[download page](https://docs.example.com/v2/download)');
    expect(md).toContain('```sh\nnpm install --save example\nexample --init\n```');
    expect(md).toMatch(/^- First item of the list$/m);
    expect(md).toContain('- Second item with **bold**');
    expect(md).toContain('| Option | Meaning |\n| --- | --- |\n| --init | creates a config \\| file |');
  });
});

describe('HTML encodings', () => {
  const latinPage = (meta: string) =>
    Buffer.concat([
      Buffer.from(`<html><head>${meta}<title>Caf`, 'latin1'),
      Buffer.from([0xe9]),
      Buffer.from('</title></head><body><p>', 'latin1'),
      Buffer.from([0x93]),
      Buffer.from('Cr', 'latin1'),
      Buffer.from([0xe8]),
      Buffer.from('me br', 'latin1'),
      Buffer.from([0xfb]),
      Buffer.from('l', 'latin1'),
      Buffer.from([0xe9, 0x94]),
      Buffer.from(' is a dessert.</p></body></html>', 'latin1'),
    ]);

  test('windows-1252 from the header', async () => {
    const content = await html(latinPage(''), { contentType: 'text/html; charset=windows-1252' });
    expect(content).toMatchObject({ kind: 'html', charset: 'windows-1252', title: 'Café' });
    if (content.kind === 'html') expect(content.text).toContain('\u201cCrème brûlé\u201d is a dessert.');
  });

  test('iso-8859-1 from a <meta charset>, the header naming none', async () => {
    const content = await html(latinPage('<meta charset="iso-8859-1">'), { contentType: 'text/html' });
    expect(content).toMatchObject({ kind: 'html', charset: 'windows-1252', title: 'Café' });
    if (content.kind === 'html') expect(content.text).toContain('\u201cCrème brûlé\u201d');
  });

  test('shift_jis from the header', async () => {
    const page = Buffer.concat([
      Buffer.from('<html><head><title>', 'latin1'),
      Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]), // 日本語
      Buffer.from('</title></head><body><p>', 'latin1'),
      Buffer.from([0x82, 0xb1, 0x82, 0xf1, 0x82, 0xc9, 0x82, 0xbf, 0x82, 0xcd]), // こんにちは
      Buffer.from('</p></body></html>', 'latin1'),
    ]);
    const content = await html(page, { contentType: 'text/html; charset=Shift_JIS' });
    expect(content).toMatchObject({ kind: 'html', charset: 'shift_jis', title: '日本語', text: 'こんにちは' });
  });

  test('a UTF-8 byte order mark', async () => {
    const page = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<p>Grüße</p>', 'utf8')]);
    const content = await html(page, { contentType: 'text/html; charset=iso-8859-1' });
    expect(content).toMatchObject({ kind: 'html', charset: 'utf-8', text: 'Grüße' });
  });
});

describe('other types', () => {
  const read = (body: string | Uint8Array, contentType: string | undefined, extra: Partial<PageInput> = {}) =>
    pageContent({
      bytes: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
      contentType,
      url: 'https://api.example.com/x',
      format: 'markdown',
      ...extra,
    });

  test('JSON is passed through, as are +json types', async () => {
    const json = '{"name": "café", "items": [1, 2]}';
    expect(await read(json, 'application/json')).toEqual({ kind: 'json', text: json, charset: 'utf-8' });
    expect(await read(json, 'application/problem+json; charset=utf-8')).toMatchObject({ kind: 'json', text: json });
  });

  test('CSV, plain text, XML and JavaScript are text, whatever the format asked', async () => {
    const csv = 'name,city\nAda,London\n';
    expect(await read(csv, 'text/csv', { format: 'text' })).toEqual({ kind: 'text', text: csv, charset: 'utf-8' });
    expect(await read('<rss><item/></rss>', 'application/rss+xml')).toMatchObject({ kind: 'text' });
    expect(await read('let x = 1;', 'application/javascript')).toMatchObject({ kind: 'text', text: 'let x = 1;' });
  });

  test('a PNG is binary, with its extension', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    expect(await read(png, 'image/png')).toEqual({ kind: 'binary', mediaType: 'image/png', extension: 'png' });
    expect(await read(png, undefined)).toEqual({ kind: 'binary', mediaType: 'image/png', extension: 'png' });
    expect(await read(png, 'application/octet-stream')).toEqual({
      kind: 'binary',
      mediaType: 'image/png',
      extension: 'png',
    });
  });

  test('extensions of other binary types', async () => {
    const blob = Buffer.from([0, 1, 2, 0xff]);
    const ext = async (type: string) => ((await read(blob, type)) as { extension: string }).extension;
    expect(await ext('image/jpeg')).toBe('jpg');
    expect(await ext('application/zip')).toBe('zip');
    expect(await ext('application/gzip')).toBe('gz');
    expect(await ext('image/jxl')).toBe('jxl');
    expect(await ext('application/x-something-odd')).toBe('bin');
    expect(await read(blob, undefined)).toEqual({
      kind: 'binary',
      mediaType: 'application/octet-stream',
      extension: 'bin',
    });
  });

  test('no Content-Type: HTML, JSON and text are told from their bytes', async () => {
    expect(await read('\n  <!DOCTYPE html><html><body><p>Sniffed page</p></body></html>', undefined)).toMatchObject({
      kind: 'html',
      text: 'Sniffed page',
    });
    expect(await read('[1, 2, 3]', undefined)).toMatchObject({ kind: 'json', text: '[1, 2, 3]' });
    expect(await read('just some words ✓', undefined)).toMatchObject({ kind: 'text', text: 'just some words ✓' });
  });
});

describe('PDF', () => {
  const TWO_PAGES = pdfFile(
    [
      ['Quarterly report', 'Revenue grew (a lot) this quarter.'],
      ['Second page heading', 'Costs fell in every region.'],
    ],
    'Q3 Report',
  );
  const readPdf = (bytes: Uint8Array, extra: Partial<PageInput> = {}) =>
    pageContent({
      bytes,
      contentType: 'application/pdf',
      url: 'https://example.com/q3.pdf',
      format: 'markdown',
      ...extra,
    });

  test("every page's text, pages apart, the page count and the title", async () => {
    const content = await readPdf(TWO_PAGES);
    expect(content).toEqual({
      kind: 'pdf',
      title: 'Q3 Report',
      pages: 2,
      text: 'Quarterly report\nRevenue grew (a lot) this quarter.\n\nSecond page heading\nCosts fell in every region.',
    });
  });

  test('a PDF is found by its signature when the type is missing or generic; the bytes given stay whole', async () => {
    const bytes = new Uint8Array(TWO_PAGES);
    expect(await readPdf(bytes, { contentType: undefined })).toMatchObject({ kind: 'pdf', pages: 2 });
    expect(await readPdf(bytes, { contentType: 'application/octet-stream' })).toMatchObject({ kind: 'pdf' });
    expect(bytes.byteLength).toBe(TWO_PAGES.length);
  });

  test('a PDF without a title', async () => {
    const content = await readPdf(pdfFile([['Only page']]));
    expect(content).toEqual({ kind: 'pdf', pages: 1, text: 'Only page' });
  });

  test('a garbage %PDF- file is an error that says the PDF could not be read', async () => {
    const garbage = Buffer.from('%PDF-1.7\nthis is not really a PDF at all\n%%EOF\n');
    const err = await readPdf(garbage).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PageContentError);
    expect((err as Error).message).toMatch(/^The PDF could not be read: the file is damaged, or is not a PDF\./);
  });

  test('a PDF cut at the size cap: the error says it was cut, so is incomplete', async () => {
    const cut = TWO_PAGES.subarray(0, Math.floor(TWO_PAGES.length / 3));
    const err = await readPdf(cut, { truncated: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PageContentError);
    expect((err as Error).message).toMatch(
      /^The PDF could not be read: the response was cut at the size cap, so the file is incomplete/,
    );
  });
});
