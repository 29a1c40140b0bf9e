// The repository describes its own contract (issue 35): every link of the README and
// docs/ leads to a file of the repository, none to a web page or a folder outside it.
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const pages = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Markdown link targets of a page (inline links; code spans and fences left out). */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(\s*([^)\s]+)[^)]*\)/g)].map((m) => m[1]);
}

test.each(pages)('%s links only to files of the repository', (page) => {
  const from = path.dirname(path.join(ROOT, page));
  const leaving = linkTargets(fs.readFileSync(path.join(ROOT, page), 'utf8')).filter((target) => {
    if (target.startsWith('#')) return false;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return true; // http:, https:, mailto: ...
    const file = path.resolve(from, target.split('#')[0]);
    return !file.startsWith(ROOT + path.sep) || !fs.existsSync(file);
  });
  expect(leaving).toEqual([]);
});

test('the link reader finds links, so the test above can fail', () => {
  expect(linkTargets('see [the spec](../shared/SPEC.md) and [x](https://example.com "t"), not `[a](b)`')).toEqual(['../shared/SPEC.md', 'https://example.com']);
});
