/**
 * FarmHash Fingerprint32 (the "mk" variant of Google's FarmHash, 32-bit output).
 *
 * The real Temporal scheduler derives jitter from this exact fingerprint of the
 * nominal time (plus a per-schedule seed), so computing the same function here
 * lets the dev server produce the same jittered times as a real cluster for the
 * same seed. Written from the published algorithm; verified in tests against the
 * reference golden values and against jitter values from Temporal's own tests.
 *
 * All arithmetic is on unsigned 32-bit integers: Math.imul for wrapping
 * multiplication and `>>> 0` to normalise after additions.
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** Little-endian 32-bit read, as FarmHash defines its input words. */
function fetch32(s: Uint8Array, i: number): number {
  return (s[i] | (s[i + 1] << 8) | (s[i + 2] << 16) | (s[i + 3] << 24)) >>> 0;
}

/** Rotate right. */
function rot(v: number, shift: number): number {
  return shift === 0 ? v >>> 0 : ((v >>> shift) | (v << (32 - shift))) >>> 0;
}

/** Murmur3 finaliser: spreads every input bit over the whole word. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Murmur3-style combination of a word into a running hash. */
function mur(a: number, h: number): number {
  a = Math.imul(a, C1);
  a = rot(a, 17);
  a = Math.imul(a, C2);
  h ^= a;
  h = rot(h, 19);
  return (Math.imul(h, 5) + 0xe6546b64) >>> 0;
}

function len0to4(s: Uint8Array): number {
  let b = 0;
  let c = 9;
  for (let i = 0; i < s.length; i++) {
    // The reference treats bytes as signed chars, which matters for bytes >= 0x80.
    const v = (s[i] << 24) >> 24;
    b = (Math.imul(b, C1) + v) >>> 0;
    c ^= b;
  }
  return fmix(mur(b, mur(s.length, c >>> 0)));
}

function len5to12(s: Uint8Array): number {
  const len = s.length;
  let a = len;
  let b = len * 5;
  let c = 9;
  const d = b;
  a = (a + fetch32(s, 0)) >>> 0;
  b = (b + fetch32(s, len - 4)) >>> 0;
  c = (c + fetch32(s, (len >>> 1) & 4)) >>> 0;
  return fmix(mur(c, mur(b, mur(a, d))));
}

function len13to24(s: Uint8Array): number {
  const len = s.length;
  let a = fetch32(s, (len >>> 1) - 4);
  const b = fetch32(s, 4);
  const c = fetch32(s, len - 8);
  const d = fetch32(s, len >>> 1);
  const e = fetch32(s, 0);
  const f = fetch32(s, len - 4);
  let h = (Math.imul(d, C1) + len) >>> 0;
  a = (rot(a, 12) + f) >>> 0;
  h = (mur(c, h) + a) >>> 0;
  a = (rot(a, 3) + c) >>> 0;
  h = (mur(e, h) + a) >>> 0;
  a = (rot((a + f) >>> 0, 12) + d) >>> 0;
  h = (mur(b, h) + a) >>> 0;
  return fmix(h);
}

/** One "mix in a word" step used by the long-input path. */
function step(h: number, word: number): number {
  h ^= word;
  h = rot(h >>> 0, 19);
  return (Math.imul(h, 5) + 0xe6546b64) >>> 0;
}

function scramble(word: number): number {
  return Math.imul(rot(Math.imul(word, C1) >>> 0, 17), C2) >>> 0;
}

export function fingerprint32(s: Uint8Array): number {
  const len = s.length;
  if (len <= 4) return len0to4(s);
  if (len <= 12) return len5to12(s);
  if (len <= 24) return len13to24(s);

  let h = len;
  let g = Math.imul(C1, len) >>> 0;
  let f = g;
  const a0 = scramble(fetch32(s, len - 4));
  const a1 = scramble(fetch32(s, len - 8));
  const a2 = scramble(fetch32(s, len - 16));
  const a3 = scramble(fetch32(s, len - 12));
  const a4 = scramble(fetch32(s, len - 20));
  h = step(step(h, a0), a2);
  g = step(step(g, a1), a3);
  f = (rot((f + a4) >>> 0, 19) + 113) >>> 0;

  let iters = Math.floor((len - 1) / 20);
  let p = 0;
  do {
    const a = fetch32(s, p);
    const b = fetch32(s, p + 4);
    const c = fetch32(s, p + 8);
    const d = fetch32(s, p + 12);
    const e = fetch32(s, p + 16);
    h = (h + a) >>> 0;
    g = (g + b) >>> 0;
    f = (f + c) >>> 0;
    h = (mur(d, h) + e) >>> 0;
    g = (mur(c, g) + a) >>> 0;
    f = (mur((b + Math.imul(e, C1)) >>> 0, f) + d) >>> 0;
    f = (f + g) >>> 0;
    g = (g + f) >>> 0;
    p += 20;
  } while (--iters !== 0);

  g = Math.imul(rot(g, 11), C1) >>> 0;
  g = Math.imul(rot(g, 17), C1) >>> 0;
  f = Math.imul(rot(f, 11), C1) >>> 0;
  f = Math.imul(rot(f, 17), C1) >>> 0;
  h = rot((h + g) >>> 0, 19);
  h = (Math.imul(h, 5) + 0xe6546b64) >>> 0;
  h = Math.imul(rot(h, 17), C1) >>> 0;
  h = rot((h + f) >>> 0, 19);
  h = (Math.imul(h, 5) + 0xe6546b64) >>> 0;
  h = Math.imul(rot(h, 17), C1) >>> 0;
  return h;
}
