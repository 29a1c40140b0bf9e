// The console's colours (console/src/styles.css) hold the contrast docs/console.md promises: text
// of at least 4.5:1 (WCAG AA) on the page and panel backgrounds, in the light and the dark scheme,
// and the buttons' text on their colour.
import fs from 'node:fs';
import path from 'node:path';

const css = fs.readFileSync(path.join(__dirname, '../../console/src/styles.css'), 'utf8');

/** The custom properties of the first block after `marker` (`:root {` or the dark media query). */
function palette(marker: string): Record<string, string> {
  const start = css.indexOf(marker);
  const body = css.slice(css.indexOf('{', start + marker.length - 1) + 1, css.indexOf('}', start));
  return Object.fromEntries([...body.matchAll(/--([\w-]+):\s*(#[0-9a-f]{6})/gi)].map((m) => [m[1], m[2]]));
}

const luminance = (hex: string) => {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
  const lin = (c: number) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
};
const contrast = (a: string, b: string) => {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
};

const light = palette(':root {');
const dark = { ...light, ...palette('@media (prefers-color-scheme: dark) {\n  :root {') };

test.each([
  ['light', light],
  ['dark', dark],
])('%s: every text colour on both backgrounds, and button text on the accent, at least 4.5:1', (_name, p) => {
  expect(Object.keys(p)).toEqual(expect.arrayContaining(['bg', 'panel', 'fg', 'muted', 'accent', 'accent-fg']));
  const low: string[] = [];
  for (const text of ['fg', 'muted', 'accent', 'danger', 'ok', 'warn', 'run']) {
    for (const bg of ['bg', 'panel']) {
      const ratio = contrast(p[text], p[bg]);
      if (ratio < 4.5) low.push(`${text} on ${bg}: ${ratio.toFixed(2)}`);
    }
  }
  if (contrast(p['accent-fg'], p.accent) < 4.5) low.push('accent-fg on accent');
  expect(low).toEqual([]);
});

test('the dark scheme really differs (a parse that found nothing would compare light with light)', () => {
  expect(dark.bg).not.toBe(light.bg);
  expect(dark.fg).not.toBe(light.fg);
});
