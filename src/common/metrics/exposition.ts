// Prometheus text format (0.0.4) merged from several processes: the gateway's
// own registry and the texts of METRICS_INCLUDE_URLS (the worker's). Each
// metric family must appear once, with its HELP and TYPE once and all of its
// samples together (Prometheus refuses a second TYPE line for a name), so the
// texts are regrouped by family rather than concatenated. The samples stay
// distinct series because each process labels its own (`process`).

interface Family {
  name: string;
  help?: string;
  type?: string;
  samples: string[];
}

/** Suffixes of the samples a histogram or summary family `x` writes as `x_<suffix>`. */
const SAMPLE_SUFFIXES = ['_bucket', '_sum', '_count', '_total', '_created', '_info'];

const sampleName = (line: string) => /^[^{\s]+/.exec(line)?.[0] ?? line;

function belongsTo(family: string, name: string): boolean {
  return name === family || SAMPLE_SUFFIXES.some((s) => name === family + s);
}

/** Adds one exposition's families to `out` (in order of first appearance). */
function collectFamilies(text: string, out: Map<string, Family>): void {
  const family = (name: string) => {
    let f = out.get(name);
    if (!f) out.set(name, (f = { name, samples: [] }));
    return f;
  };
  let current: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (!line) continue;
    const meta = /^#\s+(HELP|TYPE)\s+(\S+)/.exec(line);
    if (meta) {
      const f = family(meta[2]);
      // The first text's HELP and TYPE win: the gateway's own come first.
      if (meta[1] === 'HELP') f.help ??= line;
      else f.type ??= line;
      current = meta[2];
      continue;
    }
    if (line.startsWith('#')) continue; // any other comment
    const name = sampleName(line);
    const owner = current !== undefined && belongsTo(current, name) ? current : name;
    current = owner;
    family(owner).samples.push(line);
  }
}

/** One exposition with every family of `texts` once. */
export function mergeExpositions(texts: readonly string[]): string {
  const families = new Map<string, Family>();
  for (const text of texts) collectFamilies(text, families);
  const lines: string[] = [];
  for (const f of families.values()) {
    if (f.help) lines.push(f.help);
    if (f.type) lines.push(f.type);
    lines.push(...f.samples);
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}
