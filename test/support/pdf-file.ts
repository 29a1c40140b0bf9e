// A small, valid PDF written from scratch, for tests that need one to read: each page is lines of
// Helvetica text, the document's Info dictionary carries the title. Every object is where the
// cross-reference table says it is, so a reader opens it without repairing it (pdf.js would
// repair a wrong table silently, and a test would not notice the file was broken).

/** A PDF string literal: Latin-1 bytes, with the characters that end or escape a string escaped. */
function literal(text: string): string {
  const latin1 = Array.from(text, (c) => (c.charCodeAt(0) <= 0xff ? c : '?')).join('');
  return `(${latin1.replace(/[\\()]/g, (c) => `\\${c}`).replace(/\r?\n/g, ' ')})`;
}

/** A text string for the Info dictionary: a literal if Latin-1 holds it, else UTF-16BE with a BOM. */
function textString(text: string): string {
  if (/^[\u0020-\u007e\u00a0-\u00ff]*$/.test(text)) return literal(text);
  const utf16 = Buffer.from(`\ufeff${text}`, 'utf16le').swap16();
  return `<${utf16.toString('hex').toUpperCase()}>`;
}

/** The content stream of one page: its lines top to bottom, 14 points apart, from the top left margin. */
function pageStream(lines: string[]): string {
  const shown = lines.map((line, i) => `${i === 0 ? '' : 'T* '}${literal(line)} Tj`);
  return ['BT', '/F1 12 Tf', '14 TL', '72 720 Td', ...shown, 'ET'].join('\n');
}

/**
 * A PDF of `pages` (each a list of text lines), titled `title` if given. Object numbers: 1 the
 * catalog, 2 the page tree, 3 the font, then each page and its content stream, then the Info
 * dictionary.
 */
export function pdfFile(pages: string[][], title?: string): Buffer {
  const objects: string[] = [];
  const pageRefs = pages.map((_, i) => `${4 + 2 * i} 0 R`);
  objects.push('<< /Type /Catalog /Pages 2 0 R >>');
  objects.push(`<< /Type /Pages /Kids [${pageRefs.join(' ')}] /Count ${pages.length} >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  pages.forEach((lines, i) => {
    const stream = Buffer.from(pageStream(lines), 'latin1');
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`,
    );
    objects.push(`<< /Length ${stream.length} >>\nstream\n${stream.toString('latin1')}\nendstream`);
  });
  const info = objects.push(`<< ${title !== undefined ? `/Title ${textString(title)} ` : ''}/Producer (pdf-file) >>`);
  return assemble(objects, info);
}

/** The file: header, the objects numbered from 1, the cross-reference table with their byte offsets, the trailer. */
function assemble(objects: string[], info: number): Buffer {
  // The second line's high bytes tell tools the file is binary (the PDF specification's advice).
  let body = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xrefAt = Buffer.byteLength(body, 'latin1');
  // Each entry is exactly 20 bytes, its end of line two characters (space and newline).
  const entries = offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`);
  body +=
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${entries.join('')}` +
    `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info ${info} 0 R >>\n` +
    `startxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
