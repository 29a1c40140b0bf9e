// Which IP addresses an outbound call made on a user's behalf must not reach
// (they lead into our own host or network: loopback, private, link-local —
// the cloud metadata service at 169.254.169.254 —, unique-local, ...), and the
// CIDR matching of OUTBOUND_ALLOWLIST. Addresses are parsed into bigints here
// rather than checked with net.BlockList: the policy needs the range's name
// for its message, and an IPv4-mapped IPv6 address (::ffff:127.0.0.1, which
// the URL parser writes ::ffff:7f00:1) must be judged by its IPv4.
import { isIPv4, isIPv6 } from 'node:net';

/** An address range (a bare address is a /32 or /128). */
export interface Cidr {
  readonly family: 4 | 6;
  readonly base: bigint;
  readonly bits: number;
}

interface Ip {
  readonly family: 4 | 6;
  readonly value: bigint;
}

const WIDTH = { 4: 32, 6: 128 } as const;
const MAPPED_PREFIX = 0xffffn; // ::ffff:0:0/96, the upper 96 bits of a mapped address
const NAT64_PREFIX = 0x64ff9bn << 64n; // 64:ff9b::/96, upper 96 bits
const LOW32 = 0xffffffffn;

function parseV4(s: string): bigint {
  return s.split('.').reduce((acc, part) => (acc << 8n) | BigInt(part), 0n);
}

/** Only for strings net.isIPv6 accepted: expands `::` and a dotted IPv4 tail. */
function parseV6(s: string): bigint {
  let text = s.split('%')[0]; // a zone (fe80::1%eth0) names an interface, not part of the address
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = parseV4(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const zeros = tail === undefined ? [] : Array<string>(8 - h.length - t.length).fill('0');
  return [...h, ...zeros, ...t].reduce((acc, g) => (acc << 16n) | BigInt(`0x${g}`), 0n);
}

/** The address as written (brackets allowed), without unmapping; undefined if it is none. */
function parseRaw(s: string): Ip | undefined {
  const text = s.replace(/^\[(.*)\]$/, '$1');
  if (isIPv4(text)) return { family: 4, value: parseV4(text) };
  if (isIPv6(text)) return { family: 6, value: parseV6(text) };
  return undefined;
}

/** The address, an IPv4-mapped IPv6 one as its IPv4 (that is where a connection to it goes). */
function parseIp(s: string): Ip | undefined {
  const ip = parseRaw(s);
  if (ip?.family === 6 && ip.value >> 32n === MAPPED_PREFIX) return { family: 4, value: ip.value & LOW32 };
  return ip;
}

function masked(family: 4 | 6, value: bigint, bits: number): bigint {
  const shift = BigInt(WIDTH[family] - bits);
  return (value >> shift) << shift;
}

/** `10.0.0.0/8`, `fd00::/8`, `192.168.1.7` (= /32), `::1` (= /128); undefined when it is none. Host bits are ignored. */
export function parseCidr(s: string): Cidr | undefined {
  const [addr, bitsText, extra] = s.trim().split('/');
  const ip = parseRaw(addr);
  if (!ip || extra !== undefined || (bitsText !== undefined && !/^\d{1,3}$/.test(bitsText))) return undefined;
  let bits = bitsText === undefined ? WIDTH[ip.family] : Number(bitsText);
  if (bits > WIDTH[ip.family]) return undefined;
  let { family, value } = ip;
  // ::ffff:10.0.0.0/104 means 10.0.0.0/8: addresses are matched unmapped.
  if (family === 6 && bits >= 96 && value >> 32n === MAPPED_PREFIX) {
    family = 4;
    value &= LOW32;
    bits -= 96;
  }
  return { family, base: masked(family, value, bits), bits };
}

function within(cidr: Cidr, ip: Ip): boolean {
  return cidr.family === ip.family && masked(ip.family, ip.value, cidr.bits) === cidr.base;
}

/** Whether `ip` (an address string; ::ffff:a.b.c.d counts as a.b.c.d) lies in `cidr`. False for a non-address. */
export function cidrContains(cidr: Cidr, ip: string): boolean {
  const parsed = parseIp(ip);
  return parsed !== undefined && within(cidr, parsed);
}

const table = (rows: [string, string][]) => rows.map(([c, name]) => [parseCidr(c) as Cidr, name] as const);

// First match wins (0.0.0.0/32 before 0.0.0.0/8).
const V4 = table([
  ['0.0.0.0/32', 'unspecified'],
  ['0.0.0.0/8', 'reserved'], // "this network"
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'], // incl. the metadata service 169.254.169.254
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'], // IETF protocol assignments
  ['192.0.2.0/24', 'reserved'], // documentation
  ['192.88.99.0/24', 'reserved'], // former 6to4 relay anycast
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'], // benchmarking
  ['198.51.100.0/24', 'reserved'], // documentation
  ['203.0.113.0/24', 'reserved'], // documentation
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'], // incl. broadcast 255.255.255.255
]);

const V6 = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'reserved'], // deprecated site-local
  ['ff00::/8', 'multicast'],
  ['2001:db8::/32', 'reserved'], // documentation
]);

const GLOBAL_UNICAST = parseCidr('2000::/3') as Cidr;

/** The IPv4 address a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address leads to. */
function embeddedV4(value: bigint): bigint | undefined {
  if (value >> 32n === NAT64_PREFIX) return value & LOW32;
  if (value >> 112n === 0x2002n) return (value >> 80n) & LOW32;
  return undefined;
}

function classify(ip: Ip): string | undefined {
  const named = (ip.family === 4 ? V4 : V6).find(([cidr]) => within(cidr, ip));
  if (named) return named[1];
  if (ip.family === 4) return undefined;
  const v4 = embeddedV4(ip.value);
  if (v4 !== undefined) return classify({ family: 4, value: v4 });
  // Everything outside 2000::/3 is unassigned or special-purpose: nothing public lives there.
  return within(GLOBAL_UNICAST, ip) ? undefined : 'reserved';
}

/**
 * The short name of the blocked range `ip` lies in ('loopback', 'private',
 * 'link-local', 'unique-local', 'unspecified', 'multicast', 'reserved',
 * 'carrier-grade NAT'), or undefined for a public address. Throws for a
 * string that is no IP address.
 */
export function blockedRange(ip: string): string | undefined {
  const parsed = parseIp(ip);
  if (!parsed) throw new TypeError(`not an IP address: ${ip}`);
  return classify(parsed);
}
