// Memory of the stack's processes from /proc (Linux): VmRSS now and VmHWM,
// the kernel's own peak-RSS watermark, which cannot miss a short spike the
// way sampling can.
import fs from 'node:fs';

export interface Mem {
  rssKiB?: number;
  hwmKiB?: number;
}

export function readMem(pid: number | undefined): Mem {
  if (!pid) return {};
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => {
      const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
      return m ? Number(m[1]) : undefined;
    };
    return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
  } catch {
    return {}; // the process is gone
  }
}

/** Samples VmRSS of each pid every `everyMs` and keeps the maximum seen. */
export class RssSampler {
  readonly peakKiB: Record<string, number> = {};
  private timer?: NodeJS.Timeout;

  constructor(private readonly pids: Record<string, number | undefined>) {}

  start(everyMs = 250): void {
    const sample = () => {
      for (const [name, pid] of Object.entries(this.pids)) {
        const rss = readMem(pid).rssKiB;
        if (rss !== undefined) this.peakKiB[name] = Math.max(this.peakKiB[name] ?? 0, rss);
      }
    };
    sample();
    this.timer = setInterval(sample, everyMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
