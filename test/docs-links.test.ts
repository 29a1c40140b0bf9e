// The repository describes its own contract (issue 35): every link of the README and
// docs/ leads to a file of the repository, none to a web page or a folder outside it,
// and every link to a heading (#anchor) to one its page has.
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..');
const pages = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

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

/** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, text] of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const plain = text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const base = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

test.each(pages)('%s links only to anchors that its target pages have', (page) => {
  const from = path.dirname(path.join(ROOT, page));
  const missing = linkTargets(fs.readFileSync(path.join(ROOT, page), 'utf8')).filter((target) => {
    const [file, anchor] = target.split('#');
    if (anchor === undefined || /^[a-z][a-z0-9+.-]*:/i.test(target)) return false;
    const target_ = file ? path.resolve(from, file) : path.join(ROOT, page);
    if (!target_.endsWith('.md') || !fs.existsSync(target_)) return false; // the test above
    return !anchors(fs.readFileSync(target_, 'utf8')).has(anchor);
  });
  expect(missing).toEqual([]);
});

test('the link reader finds links, so the test above can fail', () => {
  expect(linkTargets('see [the spec](../shared/SPEC.md) and [x](https://example.com "t"), not `[a](b)`')).toEqual([
    '../shared/SPEC.md',
    'https://example.com',
  ]);
});

test("the anchor reader makes GitHub's anchors, so the test above can fail", () => {
  expect([
    ...anchors(
      "# The API\n## Running the agent: `POST /`\n```\n# not a heading\n```\n## Agentbase's SDKs\n## Workflows (DAGs)\n## Errors\n### Errors",
    ),
  ]).toEqual(['the-api', 'running-the-agent-post-', 'agentbases-sdks', 'workflows-dags', 'errors', 'errors-1']);
});
