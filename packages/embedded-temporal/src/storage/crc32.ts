/**
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) — the same checksum as
 * zlib/gzip/PNG, so log files can be checked with standard tools. Node 20 has no
 * zlib.crc32, hence this table-driven implementation.
 */

const TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 of `data[start, end)`; the range form avoids allocating subarrays on hot paths. */
export function crc32(data: Uint8Array, start = 0, end = data.length): number {
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) crc = TABLE[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
