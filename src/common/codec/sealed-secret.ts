// A secret kept inside a Temporal payload (a datastore's connection details)
// is sealed on its own with the payload codec before it goes in: the history
// then shows only ciphertext even to someone who decodes it (the Web UI through
// the codec endpoint, `temporal workflow show` with the keys). Only the worker
// that connects, and the gateway that checks a registration, unseal it.
import { defaultPayloadConverter, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

const PREFIX = 'sealed:v1:';
const ProtoPayload = temporal.api.common.v1.Payload;

export class SealedSecretError extends Error {}

export async function sealSecret(codec: PayloadCodec, value: unknown): Promise<string> {
  const [payload] = await codec.encode([defaultPayloadConverter.toPayload(value)]);
  return PREFIX + Buffer.from(ProtoPayload.encode(payload).finish()).toString('base64');
}

export function isSealed(text: unknown): text is string {
  return typeof text === 'string' && text.startsWith(PREFIX);
}

/** The sealed value. Throws SealedSecretError (never quoting the text) when it is not one this codec opens. */
export async function unsealSecret<T>(codec: PayloadCodec, sealed: string): Promise<T> {
  if (!isSealed(sealed)) throw new SealedSecretError('not a sealed secret');
  try {
    const payload = ProtoPayload.decode(Buffer.from(sealed.slice(PREFIX.length), 'base64'));
    const [plain] = await codec.decode([payload]);
    return defaultPayloadConverter.fromPayload<T>(plain);
  } catch (err) {
    throw new SealedSecretError(
      `a sealed secret could not be opened (${(err as Error).name}): were the payload keys changed?`,
    );
  }
}
