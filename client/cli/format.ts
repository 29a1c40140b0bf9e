// Plain-text layout for listings: aligned columns that fit the terminal, and
// the colors of task statuses.
import type { Output, Style } from './output';

const STATUS_STYLE: Record<string, Style> = {
  completed: 'green',
  failed: 'red',
  cancelled: 'yellow',
  running: 'cyan',
  queued: 'dim',
};
const SCHEDULE_STYLE: Record<string, Style> = { active: 'green', paused: 'yellow', done: 'dim' };

export function statusText(out: Output, status: string): string {
  const style = STATUS_STYLE[status];
  return style ? out.paint(style, status) : status;
}

/** A schedule's state (active, paused, done), colored. */
export function stateText(out: Output, state: string): string {
  const style = SCHEDULE_STYLE[state];
  return style ? out.paint(style, state) : state;
}

/** Visible length, ANSI codes not counted. */
const visible = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '').length;

/**
 * Columns padded to their widest cell; the last column is cut so a row fits
 * `width` (previews are long). Cells may carry color codes.
 */
export function table(headers: string[], rows: string[][], width: number): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => visible(r[i] ?? ''))));
  const render = (cells: string[]) => {
    const head = cells
      .slice(0, -1)
      .map((c, i) => c + ' '.repeat(widths[i] - visible(c) + 2))
      .join('');
    const room = Math.max(10, width - visible(head));
    const last = cells.at(-1) ?? '';
    return head + (visible(last) > room ? `${last.slice(0, room - 3)}...` : last);
  };
  return [render(headers), ...rows.map(render)].map((l) => l.trimEnd()).join('\n');
}

/** ISO time as `YYYY-MM-DD HH:MM:SS` (UTC), or `-`. */
export function when(iso: string | null | undefined): string {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') : '-';
}

/**
 * A schedule's times as a person reads them: a cron string with its zone
 * (`0 9 * * MON (Europe/Paris)`), a one-time schedule as `once: +5s` (seconds
 * after it was made) or `once: <the date-time given>`.
 */
export function scheduleWhen(s: { schedule: number | string; timezone: string | null }): string {
  if (s.timezone !== null) return `${s.schedule} (${s.timezone})`;
  return typeof s.schedule === 'number' ? `once: +${s.schedule}s` : `once: ${s.schedule}`;
}
