// The README's examples as runnable pieces: its ```bash and ```ts blocks, each
// with what it expects. A block is skipped only with a written reason
// (`<!-- readme-test: skip (why) -->` on the line before it); a bash block's
// output may be checked with `<!-- readme-test: expect TEXT -->` before the
// block showing that output.
import fs from 'node:fs';

export interface Example {
  lang: 'bash' | 'ts';
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  skip?: string;
  expect?: string;
}

const FENCE = /^```(\w*)\s*$/;
const SKIP = /^<!-- readme-test: skip \((.+)\) -->$/;
const EXPECT = /^<!-- readme-test: expect (.+) -->$/;

export function readmeExamples(file: string): Example[] {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !FENCE.test(lines[end])) end++;
    const before = i > 0 ? lines[i - 1].trim() : '';
    const lang = open[1];
    if (lang === 'bash' || lang === 'ts') {
      const skip = SKIP.exec(before)?.[1];
      out.push({ lang, line: i + 1, code: lines.slice(i + 1, end).join('\n'), ...(skip && { skip }) });
    } else {
      const expected = EXPECT.exec(before)?.[1];
      const last = out[out.length - 1];
      if (expected && last?.lang === 'bash') last.expect = expected;
    }
    i = end;
  }
  return out;
}

/** The example aimed at a service on other ports than the README's defaults. */
export function retarget(code: string, ports: { gateway: number; demoMcp: number; demoWeb: number }): string {
  return code
    .replace(/(localhost|127\.0\.0\.1):8080/g, `127.0.0.1:${ports.gateway}`)
    .replace(/127\.0\.0\.1:8790/g, `127.0.0.1:${ports.demoMcp}`)
    .replace(/127\.0\.0\.1:8791/g, `127.0.0.1:${ports.demoWeb}`);
}
