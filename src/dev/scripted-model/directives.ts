// Parses the `[[name key=value ...]]` directives that pick a script (see SCRIPTS.md).
// The scanner is hand-written rather than a regex so that JSON values such as
// args={"a":[[1]]} or quoted strings containing "]]" survive intact.

export const DIRECTIVE_NAMES = [
  'echo',
  'say',
  'tool',
  'think',
  'slow',
  'fail',
  'drop',
  'hang',
  'json',
  'long',
] as const;
export type DirectiveName = (typeof DIRECTIVE_NAMES)[number];

export interface Directive {
  name: DirectiveName;
  /** Raw parameter values; a bare flag (`[[tool parallel]]`) has the value "true". */
  params: Record<string, string>;
}

export interface ParsedText {
  directives: Directive[];
  /** The text with recognised directives removed and whitespace tidied. */
  text: string;
}

const KNOWN = new Set<string>(DIRECTIVE_NAMES);

/** Reads a JSON-style quoted string starting at `i`; returns its value and the index after it. */
function readQuoted(src: string, i: number): { value: string; end: number } | undefined {
  const quote = src[i];
  let j = i + 1;
  while (j < src.length && src[j] !== quote) j += src[j] === '\\' ? 2 : 1;
  if (j >= src.length) return undefined;
  const raw = src.slice(i, j + 1);
  if (quote === '"') {
    try {
      return { value: JSON.parse(raw) as string, end: j + 1 };
    } catch {
      return { value: raw.slice(1, -1), end: j + 1 };
    }
  }
  return { value: raw.slice(1, -1), end: j + 1 };
}

/** Reads a balanced {...} or [...] value (JSON), honouring strings inside it. */
function readBalanced(src: string, i: number): { value: string; end: number } | undefined {
  let depth = 0;
  let j = i;
  while (j < src.length) {
    const c = src[j];
    if (c === '"') {
      const q = readQuoted(src, j);
      if (!q) return undefined;
      j = q.end;
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return { value: src.slice(i, j + 1), end: j + 1 };
    }
    j++;
  }
  return undefined;
}

/** Parses one directive body starting right after `[[`; returns undefined when malformed. */
function readDirective(
  src: string,
  start: number,
): { directive: { name: string; params: Record<string, string> }; end: number } | undefined {
  let i = start;
  const skipSpace = () => {
    while (i < src.length && /\s/.test(src[i])) i++;
  };
  skipSpace();
  const nameMatch = /^[A-Za-z_][\w-]*/.exec(src.slice(i));
  if (!nameMatch) return undefined;
  const name = nameMatch[0].toLowerCase();
  i += nameMatch[0].length;
  const params: Record<string, string> = {};
  for (;;) {
    skipSpace();
    if (i >= src.length) return undefined;
    if (src.startsWith(']]', i)) return { directive: { name, params }, end: i + 2 };
    const keyMatch = /^[A-Za-z_][\w-]*/.exec(src.slice(i));
    if (!keyMatch) return undefined;
    const key = keyMatch[0].toLowerCase();
    i += keyMatch[0].length;
    if (src[i] !== '=') {
      params[key] = 'true';
      continue;
    }
    i++;
    const c = src[i];
    let read: { value: string; end: number } | undefined;
    if (c === '"' || c === "'") read = readQuoted(src, i);
    else if (c === '{' || c === '[') read = readBalanced(src, i);
    else {
      let j = i;
      while (j < src.length && !/\s/.test(src[j]) && !src.startsWith(']]', j)) j++;
      read = { value: src.slice(i, j), end: j };
    }
    if (!read) return undefined;
    params[key] = read.value;
    i = read.end;
  }
}

/** Extracts the known directives from a message; unknown or malformed ones stay in the text. */
export function parseDirectives(src: string): ParsedText {
  const directives: Directive[] = [];
  let text = '';
  let i = 0;
  while (i < src.length) {
    const open = src.indexOf('[[', i);
    if (open < 0) break;
    const parsed = readDirective(src, open + 2);
    if (parsed && KNOWN.has(parsed.directive.name)) {
      directives.push(parsed.directive as Directive);
      text += src.slice(i, open) + ' ';
      i = parsed.end;
    } else {
      text += src.slice(i, open + 2);
      i = open + 2;
    }
  }
  text += src.slice(i);
  return {
    directives,
    text: text
      .replace(/[ \t]+/g, ' ')
      .replace(/ *\n */g, '\n')
      .trim(),
  };
}

/**
 * Parses the `x-scripted-model` header: either directives in brackets, or one
 * bare directive body (`tool name=lookup`) for convenience on the command line.
 */
export function parseHeaderDirectives(header: string | undefined): Directive[] {
  if (!header || !header.trim()) return [];
  const src = header.includes('[[') ? header : `[[${header.trim()}]]`;
  return parseDirectives(src).directives;
}

/** Message directives win; header directives fill in the kinds the message does not mention. */
export function mergeDirectives(fromMessage: Directive[], fromHeader: Directive[]): Directive[] {
  const named = new Set(fromMessage.map((d) => d.name));
  return [...fromMessage, ...fromHeader.filter((d) => !named.has(d.name))];
}

export function findDirective(ds: Directive[], name: DirectiveName): Directive | undefined {
  return ds.find((d) => d.name === name);
}

/** Integer parameter with a default; bad or negative values fall back to the default. */
export function intParam(d: Directive | undefined, key: string, dflt: number): number {
  const raw = d?.params[key];
  if (raw === undefined) return dflt;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : dflt;
}
