// Logging for the dev server: pino, shaped like the Temporal CLI's slog output so
// tools reading the CLI's logs read ours. --log-format json gives one JSON object
// per line ({"time","level":"INFO","msg",...fields}); pretty/text gives slog's
// key=value text lines. --log-level never silences everything.
import pino, { Logger } from 'pino';
import { Writable } from 'node:stream';

export type { Logger };

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

export interface LoggerOptions {
  format?: string;
  level?: string;
  /** Where lines go; default stderr (stdout stays free for the CLI's banner). */
  destination?: { write(chunk: string): unknown };
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const level = opts.level === 'never' ? 'silent' : opts.level && LEVELS.has(opts.level) ? opts.level : 'info';
  const out = opts.destination ?? process.stderr;
  const options: pino.LoggerOptions = {
    level,
    base: undefined,
    messageKey: 'msg',
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
    formatters: { level: (label) => ({ level: label.toUpperCase() }) },
  };
  if (opts.format === 'json') return pino(options, out as pino.DestinationStream);
  return pino(options, textStream(out));
}

/** One slog-style text line per record: time=... level=... msg=... key=value... */
function textStream(out: { write(chunk: string): unknown }): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      const line = chunk.toString('utf8');
      try {
        out.write(formatTextLine(JSON.parse(line)));
      } catch {
        out.write(line);
      }
      cb();
    },
  });
}

export function formatTextLine(rec: Record<string, unknown>): string {
  const { time, level, msg, ...rest } = rec;
  const parts = [`time=${String(time)}`, `level=${String(level)}`, `msg=${quote(String(msg ?? ''))}`];
  for (const [k, v] of Object.entries(rest)) {
    if (v === undefined) continue;
    parts.push(`${k}=${quote(typeof v === 'string' ? v : JSON.stringify(v))}`);
  }
  return parts.join(' ') + '\n';
}

// slog quotes a value when it is empty or has spaces, quotes, '=' or control characters.
function quote(s: string): string {
  return s === '' || /[\s"=\\]|[\u0000-\u001f]/.test(s) ? JSON.stringify(s) : s;
}
