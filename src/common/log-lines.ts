// How a log record looks to a person: one line, time, process, level, message,
// then the record's fields as key=value. Used by a process logging in the
// `pretty` format and by `npm start`, which shows every process's JSON lines
// this way (or as JSON with the process named, for LOG_FORMAT=json).

export type LogFormat = 'pretty' | 'json';

/**
 * Fields every record has that the line already shows, or that say little to a
 * reader of one deployment (the Temporal SDK's namespace, task queue and
 * component, on each of its lines); the JSON format keeps them all.
 */
const SHOWN = new Set([
  'time',
  'level',
  'msg',
  'name',
  'pid',
  'hostname',
  'sdk',
  'sdkComponent',
  'namespace',
  'taskQueue',
]);
const NUMERIC_LEVELS: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};
const COLORS: Record<string, string> = { trace: '90', debug: '90', info: '32', warn: '33', error: '31', fatal: '35' };
const MAX_VALUE_CHARS = 300;

export interface RenderOptions {
  /** The process the line came from (npm start names each); default the record's `name`. */
  proc?: string;
  color?: boolean;
}

function levelOf(v: unknown): string {
  if (typeof v === 'number') return NUMERIC_LEVELS[v] ?? String(v);
  return typeof v === 'string' ? v.toLowerCase() : 'info';
}

function timeOf(v: unknown): string {
  const d = typeof v === 'number' || typeof v === 'string' ? new Date(v) : new Date();
  return Number.isNaN(d.getTime()) ? String(v) : d.toISOString().slice(11, 23);
}

function valueOf(key: string, v: unknown): string {
  if (key === 'err' && v && typeof v === 'object' && 'message' in v)
    return quote(String((v as { message: unknown }).message), /[\s"=]/);
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  const cut = s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}…` : s;
  // JSON values read as they are unless a space would split them; a string is quoted when it could be misread.
  return typeof v === 'string' ? quote(cut, /[\s"=]/) : quote(cut, /\s/);
}

function quote(s: string, needs: RegExp): string {
  return s === '' || needs.test(s) ? JSON.stringify(s) : s;
}

/** One record as a readable line (no newline). */
export function prettyRecord(rec: Record<string, unknown>, opts: RenderOptions = {}): string {
  const level = levelOf(rec.level);
  const proc = (opts.proc ?? (typeof rec.name === 'string' ? rec.name : '')).padEnd(8);
  const label = level.toUpperCase().padEnd(5);
  const shownLevel = opts.color ? `\u001b[${COLORS[level] ?? '0'}m${label}\u001b[0m` : label;
  const fields = Object.entries(rec)
    .filter(([k, v]) => !SHOWN.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${valueOf(k, v)}`);
  return [timeOf(rec.time), proc, shownLevel, String(rec.msg ?? ''), ...fields].join(' ').trimEnd();
}

/**
 * A line a process wrote, as `npm start` shows it. JSON records are rendered
 * in `format` (JSON keeps the record, with `proc` added); any other line
 * (a process's own text, a stack trace) is shown as it is, after the process.
 */
export function renderLine(line: string, proc: string, format: LogFormat, color = false): string {
  let rec: unknown;
  if (line.startsWith('{')) {
    try {
      rec = JSON.parse(line);
    } catch {
      rec = undefined;
    }
  }
  if (!rec || typeof rec !== 'object' || Array.isArray(rec)) return `${proc.padEnd(8)} | ${line}`;
  if (format === 'json') return JSON.stringify({ proc, ...(rec as Record<string, unknown>) });
  return prettyRecord(rec as Record<string, unknown>, { proc, color });
}
