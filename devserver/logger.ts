// Logging for the dev server: pino, in the format the Temporal CLI was asked for
// (--log-format json|pretty, --log-level debug|info|warn|error).
import pino, { Logger } from 'pino';
import { Writable } from 'node:stream';

export type { Logger };

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);
const LABELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** One line per record, human readable; no extra dependency for pretty printing. */
function prettyStream(out: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      try {
        const rec = JSON.parse(chunk.toString('utf8'));
        const { time, level, msg, pid: _pid, hostname: _host, ...rest } = rec;
        const extras = Object.entries(rest)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(' ');
        out.write(`${new Date(time).toISOString()} ${LABELS[level] ?? level} ${msg}${extras ? ' ' + extras : ''}\n`);
      } catch {
        out.write(chunk);
      }
      cb();
    },
  });
}

export function createLogger(opts: { format?: string; level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  const level = opts.level && LEVELS.has(opts.level) ? opts.level : 'info';
  const out = opts.destination ?? process.stderr;
  const base = { base: { component: 'temporal-dev' }, level };
  if (opts.format === 'json') return pino(base, out as pino.DestinationStream);
  return pino(base, prettyStream(out));
}
