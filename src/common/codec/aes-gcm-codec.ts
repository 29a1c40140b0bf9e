// The Temporal payload codec of the service: AES-256-GCM over each whole
// Payload (its metadata too, so even a value's type and encoding stay private).
// Every Temporal client and worker of the service uses it, so what Temporal
// stores (history, memos, query results, failures) is ciphertext; the keys
// never leave the service's processes.
//
// An encrypted payload: metadata `encoding: binary/encrypted` and
// `encryption-key-id: <id>`; data = 12-byte random IV + ciphertext + 16-byte tag,
// the ciphertext being the original Payload in protobuf wire format.
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { PayloadKey } from './keys';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const ProtoPayload = temporal.api.common.v1.Payload;

/** A payload this codec cannot decrypt (unknown key id, wrong key, damaged data). Never names key material. */
export class PayloadDecryptionError extends Error {}

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const text = (b: Uint8Array | null | undefined) => (b ? Buffer.from(b).toString('utf8') : undefined);

export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly encryptWith: { id: string; key: KeyObject; idBytes: Uint8Array };
  private readonly byId: Map<string, KeyObject>;

  /** `keys[0]` encrypts; every key decrypts what it encrypted (rotation: put the new key first). */
  constructor(keys: readonly PayloadKey[]) {
    if (!keys.length) throw new Error('AesGcmPayloadCodec needs at least one key');
    // KeyObjects: the raw bytes are not kept in plain Buffers on this object, and never print.
    this.byId = new Map(keys.map((k) => [k.id, createSecretKey(k.key)]));
    this.encryptWith = { id: keys[0].id, key: this.byId.get(keys[0].id)!, idBytes: utf8(keys[0].id) };
  }

  /** Ids of the keys it can decrypt with, the encrypting one first. */
  get keyIds(): string[] {
    return [...this.byId.keys()];
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.encrypt(p));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.decrypt(p));
  }

  private encrypt(payload: Payload): Payload {
    const plain = ProtoPayload.encode(payload).finish();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.encryptWith.key, iv);
    const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: { [METADATA_ENCODING_KEY]: utf8(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: this.encryptWith.idBytes },
      data: new Uint8Array(sealed.buffer, sealed.byteOffset, sealed.byteLength),
    };
  }

  private decrypt(payload: Payload): Payload {
    // Payloads written before encryption (or by another codec's peers) pass through.
    if (text(payload.metadata?.[METADATA_ENCODING_KEY]) !== ENCRYPTED_ENCODING) return payload;
    const id = text(payload.metadata?.[KEY_ID_METADATA]);
    if (!id) throw new PayloadDecryptionError(`an encrypted payload has no ${KEY_ID_METADATA}`);
    const key = this.byId.get(id);
    if (!key) {
      throw new PayloadDecryptionError(
        `a payload is encrypted with key id "${id}", which is not among PAYLOAD_KEYS (${this.keyIds.join(', ')}): add that key back (after the new one) to read it`,
      );
    }
    const data = payload.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES)
      throw new PayloadDecryptionError(`an encrypted payload (key id "${id}") is truncated`);
    const sealed = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      plain = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(
        `a payload with key id "${id}" does not decrypt: the key under that id differs from the one that encrypted it, or the data was altered`,
      );
    }
    // A plain object: the decoded message's absent fields read from its
    // prototype (an empty `data` there is an Array, not bytes).
    return ProtoPayload.toObject(ProtoPayload.decode(plain)) as Payload;
  }
}
