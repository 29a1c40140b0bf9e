// An HTML page as the model should read it: the main content (Readability's pick, as a reader
// view shows it) in markdown or plain text, without the navigation, ads and scripts around it.
// Links keep absolute URLs (a relative one means nothing once out of the page), so the model
// can fetch them next; images are their alt text, since the model cannot see them here.
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { Readability } from '@mozilla/readability';
import TurndownService from 'turndown';

/**
 * Most characters of HTML read into markdown or text; the rest of a larger page is left out (said
 * at the end of the text). Measured: 10 MB of plain article took 8 s whole (parse 1 s, Readability
 * 4 s, turndown 3 s), and 3 MB of deeply nested <div>s a minute in Readability; cut to 3 MB, any
 * 10 MB page we tried took 2-4 s. The main content of a real page is in its first megabytes.
 */
export const HTML_MAX_CHARS = 3_000_000;
/**
 * Most elements handed to Readability, whose time grows with them and with the page's shape:
 * 20,000 in 1 MB of article take it 0.6 s, 36,000 in 1 MB of bare <div>s 4 s. A larger page is
 * shown whole, without its navigation and the like (pageBody).
 */
export const READABILITY_MAX_ELEMENTS = 30_000;
/** Deepest nesting kept: below it an element is its text (Readability and turndown recurse, and overflow the stack near 2,000). */
const MAX_DEPTH = 500;
/** An article with less text than this may be Readability missing the page: the body is tried too. */
const MIN_ARTICLE_CHARS = 250;

/** Never content: code, styling, embedded frames and drawings. */
const NEVER_CONTENT = 'script, style, noscript, template, iframe, frame, svg, canvas, object, embed, title, meta, link';
/** Around the content on most pages: dropped when the body is shown (no article found, or a page too large for Readability). */
const PAGE_CHROME = 'nav, header, footer, aside, form, dialog, [hidden], [aria-hidden="true"], [role="navigation"]';

/** The parts of linkedom's DOM used here (the repository compiles without the DOM library's types). */
interface DomElement {
  nodeName: string;
  textContent: string | null;
  parentNode: DomElement | null;
  children: ArrayLike<DomElement>;
  previousElementSibling: DomElement | null;
  getAttribute(name: string): string | null;
  querySelector(selectors: string): DomElement | null;
  querySelectorAll(selectors: string): ArrayLike<DomElement>;
  remove(): void;
}
interface DomDocument extends DomElement {
  head: DomElement & { appendChild(node: DomElement): void };
  body: DomElement;
  title: string;
}
type ParseHtml = (html: string) => { document: unknown };

export interface HtmlContent {
  title?: string;
  text: string;
}

let linkedom: Promise<ParseHtml> | undefined;

/**
 * linkedom's parseHTML, loaded on first use. Its CommonJS build requires packages that are ES
 * modules only (css-select 7, domutils...): Node (20.19 and later) loads those through require(),
 * which is what runs in the worker, but jest's module system refuses (before Node 24.9) and has
 * no import() for the code it runs. There the package is imported by Node's own loader, from a
 * script compiled outside jest's sandbox (pdf-text.ts loads pdf.js the same way, and says more).
 */
function loadParser(): Promise<ParseHtml> {
  linkedom ??= (async () => {
    const file = require.resolve('linkedom');
    try {
      return (require(file) as { parseHTML: ParseHtml }).parseHTML;
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'ERR_REQUIRE_ESM') throw err;
    }
    const script = new vm.Script('(url) => import(url)', {
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    const ns = await (script.runInThisContext() as (url: string) => Promise<any>)(pathToFileURL(file).href);
    return (ns.default ?? ns).parseHTML as ParseHtml;
  })().catch((err: unknown) => {
    linkedom = undefined;
    throw err;
  });
  return linkedom;
}

/** The readable content of the HTML page `html` fetched from `url`, in markdown or plain text. */
export async function htmlContent(html: string, url: string, format: 'markdown' | 'text'): Promise<HtmlContent> {
  const parseHTML = await loadParser();
  const source = capped(html);
  const { document, elements } = prepare(parseHTML, source);
  const base = baseUrl(document, url);
  const pageTitle = clean(document.title);
  const readable = elements <= READABILITY_MAX_ELEMENTS;
  const article = readable ? readableArticle(document) : undefined;
  let root = article?.root;
  if (!root || textLength(root) < MIN_ARTICLE_CHARS) {
    // Readability rearranges the document it reads: after it, the body comes from a fresh parse.
    const body = pageBody(readable ? prepare(parseHTML, source).document : document);
    if (!root || textLength(body) > textLength(root)) root = body;
  }
  const service = format === 'markdown' ? markdownService(base) : plainTextService();
  let text = service.turndown(root as unknown as TurndownService.Node).replace(/\n{3,}/g, '\n\n');
  if (source.length < html.length)
    text += `\n\n[Only the first ${mb(source.length)} of this page's ${mb(html.length)} of HTML were read into this text. Fetch it with format "raw" for the whole source.]`;
  return { title: clean(article?.title ?? '') || pageTitle || undefined, text };
}

/** The title of the HTML page `html` (its <title>), read without parsing the whole page. */
export async function htmlTitle(html: string): Promise<string | undefined> {
  const m = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html.slice(0, 200_000));
  if (!m) return undefined;
  const parseHTML = await loadParser();
  const { document } = parseHTML(`<html><head><title>${m[1]}</title></head><body></body></html>`);
  return clean((document as DomDocument).title) || undefined;
}

/** `html` cut to HTML_MAX_CHARS, before a tag (not in the middle of one). */
function capped(html: string): string {
  if (html.length <= HTML_MAX_CHARS) return html;
  const cut = html.lastIndexOf('<', HTML_MAX_CHARS);
  return html.slice(0, cut > 0 ? cut : HTML_MAX_CHARS);
}

function mb(chars: number): string {
  return `${(chars / 1_000_000).toFixed(1)} MB`;
}

/**
 * The page parsed into a complete document, and its count of elements. linkedom builds the tree
 * exactly as written, without the <html>, <head> and <body> a browser implies (a page without a
 * <body> tag has an empty body), so those tags are dropped and the document rebuilt around the
 * rest; its <title> goes back into <head>, where document.title (and Readability) look for it.
 */
function prepare(parseHTML: ParseHtml, html: string): { document: DomDocument; elements: number } {
  const htmlAttributes = /<html(\s[^>]*)>/i.exec(html.slice(0, 100_000))?.[1] ?? '';
  const inner = html.replace(/<!doctype[^>]*>|<\/?(?:html|head|body)(?=[\s/>])[^>]*>/gi, '');
  const parsed = parseHTML(`<!DOCTYPE html><html${htmlAttributes}><head></head><body>${inner}</body></html>`);
  const document = parsed.document as DomDocument;
  const title = Array.from(document.body.querySelectorAll('title')).find((t) => !insideSvg(t));
  if (title) document.head.appendChild(title);
  return { document, elements: flattenDeep(document.body) };
}

/** Makes each element nested deeper than MAX_DEPTH its text; returns how many elements `root` holds. */
function flattenDeep(root: DomElement): number {
  let elements = 0;
  const stack: Array<[DomElement, number]> = [[root, 0]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [node, depth] = next;
    elements++;
    if (depth >= MAX_DEPTH) node.textContent = node.textContent ?? '';
    else for (const child of Array.from(node.children)) stack.push([child, depth + 1]);
  }
  return elements;
}

function insideSvg(node: DomElement): boolean {
  for (let p = node.parentNode; p; p = p.parentNode) if (p.nodeName.toLowerCase() === 'svg') return true;
  return false;
}

/** The URL relative links resolve against: the page's <base href> if it has one, else its own. */
function baseUrl(document: DomDocument, url: string): string {
  const href = document.querySelector('base[href]')?.getAttribute('href');
  return (href && urlOf(href, url)?.href) || url;
}

/** Readability's article, or undefined when it finds none (or fails on the page: then the body is read). */
function readableArticle(document: DomDocument): { root: DomElement; title?: string } | undefined {
  try {
    // Classes kept: turndown reads a code block's language from them (class="language-sh").
    const reader = new Readability<DomElement>(document as any, {
      serializer: (node) => node as any,
      keepClasses: true,
    });
    const parsed = reader.parse();
    if (!parsed?.content) return undefined;
    stripAll(parsed.content, NEVER_CONTENT);
    return { root: parsed.content, title: parsed.title ?? undefined };
  } catch {
    return undefined;
  }
}

/** The page's body without what surrounds content on most pages. */
function pageBody(document: DomDocument): DomElement {
  stripAll(document.body, NEVER_CONTENT);
  stripAll(document.body, PAGE_CHROME);
  return document.body;
}

function stripAll(root: DomElement, selectors: string): void {
  for (const el of Array.from(root.querySelectorAll(selectors))) el.remove();
}

/** How much text a reader would see in `root` (scripts and styles already removed). */
function textLength(root: DomElement): number {
  return clean(root.textContent ?? '').length;
}

function clean(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `href` made absolute against `base`; undefined for a link that leads nowhere out of the page (javascript:). */
export function absoluteHref(href: string | null, base: string): string | undefined {
  const trimmed = href?.trim();
  if (!trimmed) return undefined;
  const url = urlOf(trimmed, base);
  if (!url || url.protocol === 'javascript:' || url.protocol === 'data:') return undefined;
  // Parentheses would end a markdown link's destination early.
  return url.href.replace(/\(/g, '%28').replace(/\)/g, '%29');
}

function urlOf(href: string, base: string): URL | undefined {
  try {
    return new URL(href, base);
  } catch {
    return undefined;
  }
}

/** An image's alt text: what the model gets instead of the picture. */
function altText(node: DomElement): string {
  return clean(node.getAttribute('alt') ?? '');
}

/** HTML to markdown: ATX headings, fenced code, `-` bullets, inline links with absolute URLs. */
function markdownService(base: string): TurndownService {
  const service = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
    strongDelimiter: '**',
    hr: '---',
  });
  // Only what would turn text into structure at a line's start: turndown's escaping of every _ and
  // * would show snake_case as snake\_case, noise for a reader that takes the markdown as text.
  service.escape = (text: string) => text.replace(/^(\s*)([#>]|[-+*](?=\s)|\d+\.(?=\s)|```|~~~)/gm, '$1\\$2');
  service.addRule('listItem', { filter: 'li', replacement: listItem() });
  service.addRule('link', {
    filter: (node) => node.nodeName === 'A' && node.getAttribute('href') !== null,
    replacement: (content, node) => {
      const text = content.replace(/\s*\n\s*/g, ' ').trim();
      const href = absoluteHref(node.getAttribute('href'), base);
      if (!text) return '';
      return href ? `[${text}](${href})` : text;
    },
  });
  service.addRule('image', { filter: 'img', replacement: (_content, node) => altText(node) });
  service.addRule('preformatted', {
    // A <pre> without a <code> in it (turndown fences only <pre><code>): its text as it is, fenced.
    filter: (node) => node.nodeName === 'PRE' && node.firstChild?.nodeName !== 'CODE',
    replacement: (_content, node) => `\n\n\`\`\`\n${(node.textContent ?? '').replace(/\n$/, '')}\n\`\`\`\n\n`,
  });
  addTableRules(service);
  return service;
}

/** A list item: `- ` or its number (turndown's own pads the marker to four columns), continuation lines indented. */
function listItem(): TurndownService.ReplacementFunction {
  // Each list's items numbered once (looking an item up among its siblings each time is quadratic).
  const numbers = new WeakMap<DomElement, Map<DomElement, number>>();
  return (content, node) => {
    const list = node.parentNode as DomElement | null;
    let marker = '- ';
    if (list?.nodeName === 'OL') {
      let byItem = numbers.get(list);
      if (!byItem) {
        const first = Number(list.getAttribute('start')) || 1;
        byItem = new Map(Array.from(list.children, (item, i) => [item, first + i]));
        numbers.set(list, byItem);
      }
      marker = `${byItem.get(node) ?? 1}. `;
    }
    const indent = ' '.repeat(marker.length);
    const lines = content.replace(/^\n+|\n+$/g, '').split('\n');
    return `${marker}${lines.map((line, i) => (i && line ? indent + line : line)).join('\n')}\n`;
  };
}

/** Plain text: the same blocks as the markdown, without its marks (no #, **, links' URLs). */
function plainTextService(): TurndownService {
  const service = new TurndownService();
  service.escape = (text: string) => text;
  const item = listItem();
  service.addRule('plain', {
    filter: () => true,
    replacement: (content, node: any) => {
      const name: string = node.nodeName;
      if (name === 'BR') return '\n';
      if (name === 'IMG') return altText(node);
      if (name === 'PRE') return `\n\n${(node.textContent ?? '').replace(/\n$/, '')}\n\n`;
      if (name === 'LI') return item(content, node, service.options);
      if ((name === 'UL' || name === 'OL') && node.parentNode?.nodeName === 'LI') return `\n${content}`;
      if (name === 'TD' || name === 'TH') return `${cellText(content)}\t`;
      if (name === 'TR') return `\n${content.replace(/\t$/, '')}\n`;
      if (name === 'HR') return '\n\n';
      return node.isBlock ? `\n\n${content}\n\n` : content;
    },
  });
  return service;
}

/** GFM tables for data tables (rows of cells); a layout table (one holding tables) stays blocks. */
function addTableRules(service: TurndownService): void {
  const dataTables = new WeakMap<DomElement, boolean>();
  const isDataTable = (table: DomElement): boolean => {
    let data = dataTables.get(table);
    if (data === undefined) dataTables.set(table, (data = !table.querySelector('table')));
    return data;
  };
  const isData = (node: DomElement): boolean => {
    const table = closest(node, 'TABLE');
    return !!table && isDataTable(table);
  };
  service.addRule('tableCell', {
    filter: (node) => (node.nodeName === 'TD' || node.nodeName === 'TH') && isData(node),
    replacement: (content) => `| ${cellText(content).replace(/\|/g, '\\|')} `,
  });
  service.addRule('tableRow', {
    filter: (node) => node.nodeName === 'TR' && isData(node),
    replacement: (content, node) => {
      const row = `${content}|\n`;
      if (!isFirstRow(node)) return row;
      const cells = Array.from(node.children as ArrayLike<DomElement>).filter((c) => /^T[DH]$/.test(c.nodeName));
      return `\n${row}|${' --- |'.repeat(Math.max(cells.length, 1))}\n`;
    },
  });
  service.addRule('tableSection', {
    filter: (node) => /^(THEAD|TBODY|TFOOT)$/.test(node.nodeName) && isData(node),
    replacement: (content) => content,
  });
  service.addRule('table', {
    filter: (node) => node.nodeName === 'TABLE' && isDataTable(node),
    replacement: (content) => `\n\n${content.trim()}\n\n`,
  });
}

/** Whether `row` is its table's first row (the one the header separator goes under). */
function isFirstRow(row: DomElement): boolean {
  if (previousOf(row, 'TR')) return false;
  const section = row.parentNode;
  if (!section || section.nodeName === 'TABLE') return true;
  return !previousOf(section, 'THEAD') && !previousOf(section, 'TBODY') && !previousOf(section, 'TFOOT');
}

function previousOf(node: DomElement, name: string): boolean {
  for (let s = node.previousElementSibling; s; s = s.previousElementSibling) if (s.nodeName === name) return true;
  return false;
}

function closest(node: DomElement, name: string): DomElement | undefined {
  for (let p = node.parentNode; p; p = p.parentNode) if (p.nodeName === name) return p;
  return undefined;
}

/** A table cell's content on one line. */
function cellText(content: string): string {
  return content.replace(/\s*\n\s*/g, ' ').trim();
}
