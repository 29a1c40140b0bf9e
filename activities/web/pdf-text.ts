// The text of a PDF, page by page, read with pdf.js in this thread: no rendering, no fonts loaded
// for display, nothing evaluated. What the model gets is the words; layout, images and fonts
// are left behind.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';
import type * as Pdfjs from 'pdfjs-dist';

type PdfjsModule = typeof Pdfjs;

const PDFJS_ENTRY = 'pdfjs-dist/legacy/build/pdf.mjs';

/** A PDF pdf.js cannot open; the message says why, in pdf.js's words. */
export class UnreadablePdfError extends Error {
  override readonly name = 'UnreadablePdfError';
  constructor(
    message: string,
    /** The PDF asks for a password. */
    readonly encrypted = false,
  ) {
    super(message);
  }
}

export interface PdfText {
  title?: string;
  /** Every page's text, pages separated by a blank line. */
  text: string;
  pages: number;
}

let loading: Promise<PdfjsModule> | undefined;

/** pdf.js, loaded on first use (it is an ES module of 2 MB, and most runs never read a PDF). */
function loadPdfjs(): Promise<PdfjsModule> {
  loading ??= importPdfjs().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

/**
 * pdf.js ships as ES modules only, and this repository is CommonJS. Node (20.19 and later)
 * loads an ES module without top-level await through require(), which is what runs in the
 * worker. jest's own module system refuses that (before Node 24.9; its createRequire and
 * process.getBuiltinModule are its own too), and has no import() for the code it runs without
 * --experimental-vm-modules (a `new Function` import() fails the same way), so there the module
 * is imported by Node's own loader, from a script compiled outside jest's sandbox (vm's
 * USE_MAIN_CONTEXT_DEFAULT_LOADER; Node prints an ExperimentalWarning for it once).
 */
async function importPdfjs(): Promise<PdfjsModule> {
  const file = require.resolve(PDFJS_ENTRY);
  try {
    return require(file) as PdfjsModule;
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_REQUIRE_ESM') throw err;
  }
  const script = new vm.Script('(specifier) => import(specifier)', {
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const importer = script.runInThisContext() as (specifier: string) => Promise<PdfjsModule>;
  return importer(pathToFileURL(file).href);
}

/** The folder of the pdfjs-dist package, ending in a separator (pdf.js reads its data files from there). */
function packageFolder(): string {
  return path.dirname(require.resolve('pdfjs-dist/package.json')) + path.sep;
}

/** The text of the PDF `bytes`, its page count and its title; throws UnreadablePdfError for a PDF pdf.js cannot open. */
export async function pdfText(bytes: Uint8Array): Promise<PdfText> {
  const pdfjs = await loadPdfjs();
  const folder = packageFolder();
  const task = pdfjs.getDocument({
    // A Uint8Array of its own: pdf.js refuses a Buffer, and may take over (detach) the buffer it
    // is given, which the caller still reads (to save the file, say).
    data: new Uint8Array(bytes),
    // Character maps: the text of CJK fonts that use them is not readable without.
    cMapUrl: `${folder}cmaps${path.sep}`,
    cMapPacked: true,
    // Metrics of the 14 standard fonts, read by text extraction for fonts a PDF does not embed.
    standardFontDataUrl: `${folder}standard_fonts${path.sep}`,
    useSystemFonts: false,
    disableFontFace: true,
    isEvalSupported: false,
    useWorkerFetch: false,
    isOffscreenCanvasSupported: false,
    isImageDecoderSupported: false,
    // Errors only: pdf.js's warnings about odd but readable files would go to the worker's stdout.
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  });
  let doc: Pdfjs.PDFDocumentProxy;
  try {
    doc = await task.promise;
  } catch (err) {
    await task.destroy().catch(() => undefined);
    const { name, message } = err as { name?: string; message?: string };
    throw new UnreadablePdfError(message || String(err), name === 'PasswordException');
  }
  try {
    const pages: string[] = [];
    let failed = 0;
    for (let n = 1; n <= doc.numPages; n++) {
      const text = await pageText(doc, n);
      if (text === undefined) failed++;
      // A page that fails (a broken object in a file pdf.js otherwise repaired) says so in place of its text.
      pages.push(text ?? `[Page ${n} could not be read.]`);
    }
    if (failed && failed === doc.numPages) throw new UnreadablePdfError('none of its pages could be read');
    return { title: await titleOf(doc), text: pages.join('\n\n').trim(), pages: doc.numPages };
  } finally {
    await task.destroy().catch(() => undefined);
  }
}

/** The text of page `n`, lines as pdf.js finds them; undefined if the page cannot be read. */
async function pageText(doc: Pdfjs.PDFDocumentProxy, n: number): Promise<string | undefined> {
  try {
    const page = await doc.getPage(n);
    const content = await page.getTextContent();
    let text = '';
    for (const item of content.items) {
      if (!('str' in item)) continue;
      text += item.str;
      if (item.hasEOL) text += '\n';
    }
    page.cleanup();
    return text
      .replace(/[ \t]+\n/g, '\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  } catch {
    return undefined;
  }
}

/** The document's title: its Info dictionary's, else its XMP metadata's. */
async function titleOf(doc: Pdfjs.PDFDocumentProxy): Promise<string | undefined> {
  try {
    const { info, metadata } = await doc.getMetadata();
    const fromInfo = (info as { Title?: unknown } | undefined)?.Title;
    const title = typeof fromInfo === 'string' && fromInfo.trim() ? fromInfo : metadata?.get('dc:title');
    return title?.replace(/\s+/g, ' ').trim() || undefined;
  } catch {
    return undefined;
  }
}
