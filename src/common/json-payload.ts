// A Temporal payload read as the JSON the SDK's default converter wrote (search attributes, memos),
// without loading the SDK: the gateway and its /metrics read them from visibility listings.
/** A search attribute or plain payload as JSON: undefined when it has none or is not JSON. */
export function decodePayload(p: { data?: Uint8Array | null } | null | undefined): unknown {
  if (!p?.data?.length) return undefined;
  try {
    return JSON.parse(Buffer.from(p.data).toString('utf8'));
  } catch {
    return undefined;
  }
}
