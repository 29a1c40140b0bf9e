// The data converter every Temporal client and worker of the service is built
// with (gateway, its start thread, worker, CLIs): the AES-256-GCM payload codec
// over the keys in force, and the failure converter that hands messages and
// stack traces to that codec too.
//
// The keys in force: PAYLOAD_KEYS, else the key file `npm start` keeps in
// DATA_DIR (so the CLIs and a hand-started gateway or worker on the same
// machine read the same key), else nothing: the process refuses to start
// rather than write readable data. Only the launcher ever creates that file.
import path from 'node:path';
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import { ConfigError, type Config } from '../config';
import { AesGcmPayloadCodec } from './aes-gcm-codec';
import { parsePayloadKeys, payloadKeyFile, PayloadKeysError, readPayloadKeyFile } from './keys';

/** Module of the failure converter, loaded by path (the workflow sandbox loads it too). */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

type KeyConfig = Pick<Config, 'PAYLOAD_KEYS' | 'DATA_DIR'>;

/** The PAYLOAD_KEYS value in force (see the file comment). Throws ConfigError naming PAYLOAD_KEYS. */
export function payloadKeysInForce(config: KeyConfig): string {
  if (config.PAYLOAD_KEYS) return config.PAYLOAD_KEYS;
  const file = path.resolve(payloadKeyFile(config.DATA_DIR));
  const fromFile = readPayloadKeyFile(file);
  if (fromFile === undefined) {
    throw new ConfigError([
      {
        variable: 'PAYLOAD_KEYS',
        message: `not set, and there is no key file at ${file} (npm start creates one): set PAYLOAD_KEYS=<id>:<base64 of 32 random bytes>, e.g. k1:$(openssl rand -base64 32), the same on every gateway and worker`,
      },
    ]);
  }
  try {
    parsePayloadKeys(fromFile);
  } catch (err) {
    if (err instanceof PayloadKeysError)
      throw new ConfigError([{ variable: 'PAYLOAD_KEYS', message: `the key file ${file}: ${err.message}` }]);
    throw err;
  }
  return fromFile;
}

/** The codec over a PAYLOAD_KEYS value (already validated by the config schema or payloadKeysInForce). */
export function codecFromKeys(keys: string): AesGcmPayloadCodec {
  return new AesGcmPayloadCodec(parsePayloadKeys(keys));
}

/** The service's codec over the keys in force. Throws ConfigError when there are none. */
export function payloadCodec(config: KeyConfig): AesGcmPayloadCodec {
  return codecFromKeys(payloadKeysInForce(config));
}

/** A Client's or Worker's dataConverter around `codec`. */
export function codecDataConverter(codec: PayloadCodec): DataConverter {
  return { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH };
}

/** The service's data converter over the keys in force. Throws ConfigError when there are none. */
export function dataConverter(config: KeyConfig): DataConverter {
  return codecDataConverter(payloadCodec(config));
}
