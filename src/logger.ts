// One pino logger for every process of the service. Secrets are redacted by
// path wherever they could appear in a logged object.
import pino, { Logger } from 'pino';

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
  'OPENAI_API_KEY',
  'API_KEYS',
  'PAYLOAD_KEYS',
  'CODEC_AUTH_TOKEN',
];

export function createLogger(opts: { level?: string; json?: boolean; name?: string } = {}): Logger {
  return pino({
    name: opts.name,
    level: opts.level ?? 'info',
    redact: { paths: REDACT, censor: '[redacted]' },
    ...(opts.json
      ? {}
      : {
          transport: undefined,
          formatters: { level: (label: string) => ({ level: label }) },
          timestamp: pino.stdTimeFunctions.isoTime,
        }),
  });
}
