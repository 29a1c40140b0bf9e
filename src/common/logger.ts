// One pino logger for every process of the service. Secrets are redacted by
// path wherever they could appear in a logged object. Records are JSON lines
// (LOG_FORMAT=json, and always under `npm start`, whose launcher renders them)
// or readable single lines (pretty).
import { Writable } from 'node:stream';
import pino, { Logger } from 'pino';
import { LogFormat, prettyRecord } from './log-lines';

export type { Logger };

const REDACT = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.apiKey',
  '*.token',
  '*.accessToken',
  'callback.headers',
  '*.callback.headers',
  'webhook.headers',
  '*.webhook.headers',
  'OPENAI_API_KEY',
  'API_KEYS',
  'PAYLOAD_KEYS',
  'CODEC_AUTH_TOKEN',
  'METRICS_TOKEN',
  'WEB_SEARCH_API_KEY',
];

export interface LoggerOptions {
  level?: string;
  /** Default json: a process's output is for machines first (npm start, log shippers). */
  format?: LogFormat;
  name?: string;
  /** Where lines go; default stdout. */
  destination?: { write(chunk: string): unknown };
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const out = opts.destination ?? process.stdout;
  const options: pino.LoggerOptions = {
    name: opts.name,
    level: opts.level ?? 'info',
    redact: { paths: REDACT, censor: '[redacted]' },
    base: { pid: process.pid },
    formatters: { level: (label: string) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (opts.format === 'pretty')
    return pino(options, prettyStream(out, process.stdout.isTTY === true && !process.env.NO_COLOR));
  return opts.destination ? pino(options, opts.destination as pino.DestinationStream) : pino(options);
}

function prettyStream(out: { write(chunk: string): unknown }, color: boolean): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        try {
          out.write(`${prettyRecord(JSON.parse(line), { color })}\n`);
        } catch {
          out.write(`${line}\n`);
        }
      }
      cb();
    },
  });
}
