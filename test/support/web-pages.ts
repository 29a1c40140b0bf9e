// Pages of the tests' local web site that web_fetch reads (docs/web.md): an article inside a
// site's chrome, a PDF, a page larger than the byte cap, redirects to where the outbound policy
// must not go, a page only JavaScript fills, pages in other charsets. Routes for the tests' site
// (web-site.ts: startWebSite({ routes: WEB_FETCH_PAGES }), which also has /slow and
// /redirect-metadata).
import type http from 'node:http';
import { pdfFile } from './pdf-file';
import type { Route } from './web-site';

/** Words of the article's text, and words of the chrome around it that must not reach the model. */
export const ARTICLE_WORDS = ['barnacles', 'intertidal', 'cement'];
export const CHROME_WORDS = ['Subscribe now', 'Cookie settings', 'Sponsored', 'All rights reserved'];

const html = (res: http.ServerResponse, body: string, type = 'text/html; charset=utf-8') =>
  res.writeHead(200, { 'content-type': type }).end(body);

const ARTICLE = `<!doctype html><html><head><meta charset="utf-8"><title>How barnacles hold on</title></head><body>
<header><nav><a href="/">Home</a> <a href="/news">News</a> <a href="/subscribe">Subscribe now</a></nav></header>
<aside class="ad">Sponsored: the best wetsuits of the year. <a href="https://ads.example/click">Buy</a></aside>
<main><article>
<h1>How barnacles hold on</h1>
<p>Barnacles live in the intertidal zone, where waves hit them twice a day, and they never let go of their rock.</p>
<p>Their larvae glue themselves down head first with a protein cement that sets under water,
a trick chemists have tried to copy for surgical glues (<a href="/science/cement">the cement in detail</a>).</p>
<p>Once fixed, a barnacle spends the rest of its life kicking food into its mouth with its feet,
which is about as good a summary of a sedentary life as any biologist has written.</p>
<p>Researchers measure the cement's strength by pulling adult barnacles off glass plates with a spring scale,
and the numbers rival those of industrial adhesives of similar thickness.</p>
</article></main>
<aside><h3>Cookie settings</h3><p>We use cookies.</p></aside>
<footer>All rights reserved. Demo Sea News.</footer>
</body></html>`;

export const WEB_FETCH_PAGES: Readonly<Record<string, Route>> = {
  '/article': (_req, res) => html(res, ARTICLE),
  '/report.pdf': (_req, res) => {
    const pdf = pdfFile(
      [
        ['Tide report', 'High water at 06:12'],
        ['Page two', 'Low water at 12:30'],
      ],
      'Tide report',
    );
    res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf);
  },
  // 20 MB of HTML, sent in chunks: the reader must stop at its cap and say so.
  '/huge': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    const chunk = `<p>${'filler text '.repeat(8190)}</p>\n`; // ~98 KB
    let sent = 0;
    const more = () => {
      while (sent < 20 * 1024 * 1024) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end();
    };
    res.on('error', () => undefined);
    more();
  },
  '/redirect-metadata-name': (_req, res) => res.writeHead(302, { location: 'http://metadata.test/latest/' }).end(),
  '/redirect-private': (req, res) => {
    const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? 'http://10.0.0.1/';
    res.writeHead(302, { location: to }).end();
  },
  '/redirect-article': (_req, res) => res.writeHead(301, { location: '/article' }).end(),
  '/loop': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
  '/js-only': (_req, res) =>
    html(
      res,
      `<!doctype html><html><head><title>App</title></head><body><div id="root"></div>
<script>document.getElementById('root').innerHTML = '<p>Rendered by JavaScript: the octopus has three hearts.</p>';</script>
</body></html>`,
    ),
  // windows-1252 named by the header: curly quotes (0x93 0x94) and an e acute (0xE9).
  '/cp1252-header': (_req, res) =>
    res
      .writeHead(200, { 'content-type': 'text/html; charset=windows-1252' })
      .end(
        Buffer.concat([
          Buffer.from('<html><head><title>Caf'),
          Buffer.from([0xe9]),
          Buffer.from('</title></head><body><p>'),
          Buffer.from([0x93]),
          Buffer.from('Bonjour'),
          Buffer.from([0x94]),
          Buffer.from(', dit le caf'),
          Buffer.from([0xe9]),
          Buffer.from(' du port, ouvert depuis longtemps pour les marins du matin.</p></body></html>'),
        ]),
      ),
  // Shift_JIS named only by a meta tag.
  '/sjis-meta': (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end(
      Buffer.concat([
        Buffer.from('<html><head><meta charset="shift_jis"><title>sjis</title></head><body><p>'),
        // 潮 (tide) 見 (look) in Shift_JIS
        Buffer.from([0x92, 0xaa, 0x8c, 0xa9]),
        Buffer.from('</p></body></html>'),
      ]),
    ),
  '/data.json': (_req, res) => html(res, JSON.stringify({ tide: 'high', at: '06:12' }), 'application/json'),
  '/image.png': (_req, res) =>
    res
      .writeHead(200, { 'content-type': 'image/png' })
      .end(Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex')),
  '/not-found': (_req, res) =>
    res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body><p>No such page here.</p></body></html>'),
};
