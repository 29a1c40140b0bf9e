// The outbound policy: every HTTP call made on a user's behalf (MCP servers,
// later webhook callbacks) goes through it, so a user cannot make the service
// reach into its own host or network (SSRF: the cloud metadata service,
// Redis, the Temporal frontend, ...). A URL is checked when submitted
// (checkUrl) and again when its socket connects (lookup), because a name may
// resolve to a public address first and to 127.0.0.1 a second later (DNS
// rebinding): the socket only ever connects to an address that was checked.
import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { domainToASCII } from 'node:url';
import { blockedRange, cidrContains, parseCidr, type Cidr } from './address-ranges';

/** A URL or address the policy refuses; the message names what and why, never credentials, query or headers. */
export class OutboundRefusedError extends Error {
  override readonly name = 'OutboundRefusedError';
  constructor(
    message: string,
    /** What was refused: 'invalid-url', 'scheme', 'credentials', 'blocked-address' or 'unresolvable'. */
    readonly reason: string,
  ) {
    super(message);
  }
}

/** A name could not be resolved for now (EAI_AGAIN, a timeout): not a refusal, the caller decides. */
export class OutboundLookupError extends Error {
  override readonly name = 'OutboundLookupError';
  constructor(
    message: string,
    readonly code: string | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** An OUTBOUND_ALLOWLIST entry that is no host name, IP address or CIDR. */
export class AllowlistError extends Error {
  override readonly name = 'AllowlistError';
}

export interface Allowlist {
  /** Lower-case ASCII host names, matched exactly against a URL's host name. */
  readonly hosts: ReadonlySet<string>;
  /** Matched against resolved addresses and IP-literal hosts. */
  readonly cidrs: readonly Cidr[];
}

export type Resolver = (host: string) => Promise<{ address: string; family: 4 | 6 }[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), as sockets use it. */
export const systemResolver: Resolver = async (host) =>
  (await dns.promises.lookup(host, { all: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/;

/** Comma-separated host names, IP addresses and CIDRs; blanks are ignored. Throws an AllowlistError naming a bad entry. */
export function parseAllowlist(s: string): Allowlist {
  const hosts = new Set<string>();
  const cidrs: Cidr[] = [];
  for (const entry of s
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const cidr = parseCidr(entry);
    const host = cidr ? '' : domainToASCII(entry); // also lower-cases; '' when invalid
    if (cidr) cidrs.push(cidr);
    else if (HOST_NAME.test(host) && !/^[\d.]+$/.test(host)) hosts.add(host);
    else
      throw new AllowlistError(
        `allowlist entry "${entry}" is not a host name, IP address or CIDR (e.g. mcp.internal, 10.0.0.5, 10.20.0.0/16, fd00::/8)`,
      );
  }
  return { hosts, cidrs };
}

/** What a message may show of a URL: no credentials, query or fragment. */
export function showUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

const article = (word: string) => (/^(?:[aeio]|un(?!i))/.test(word) ? 'an' : 'a');

/** The URL, or an OutboundRefusedError that does not echo an unparsable one (it may hold anything). */
export function parseOutboundUrl(input: string | URL): URL {
  try {
    return new URL(input);
  } catch {
    throw new OutboundRefusedError('the outbound URL is not a valid absolute URL', 'invalid-url');
  }
}

const UNRESOLVABLE = new Set(['ENOTFOUND', 'ENODATA']);

export class OutboundPolicy {
  readonly allowlist: Allowlist;

  constructor(
    allowlist: Allowlist | string,
    private readonly resolver: Resolver = systemResolver,
  ) {
    this.allowlist = typeof allowlist === 'string' ? parseAllowlist(allowlist) : allowlist;
  }

  /**
   * Refuses (OutboundRefusedError) a URL that is not http(s), carries
   * credentials, or whose host is, or resolves to any, blocked address not
   * allowlisted. A temporary DNS failure rejects with OutboundLookupError.
   */
  async checkUrl(input: string | URL): Promise<void> {
    const url = parseOutboundUrl(input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      // Only the scheme is shown: the rest of a javascript: or data: URL is its payload.
      throw new OutboundRefusedError(
        `${url.protocol} URLs are refused: outbound calls may only use http or https`,
        'scheme',
      );
    }
    if (url.username || url.password) {
      throw new OutboundRefusedError(
        `${showUrl(url)} carries credentials (user:password@), which would leak into logs; send them in a header instead`,
        'credentials',
      );
    }
    await this.resolveChecked(url.hostname.replace(/^\[(.*)\]$/, '$1'), showUrl(url));
  }

  /**
   * For a connection that is not a URL fetch (a database): resolves `host`, checks
   * every address, and answers the first one to connect to (so a second lookup cannot
   * answer another: DNS rebinding). `subject` names the connection in messages and must
   * not hold credentials.
   */
  async checkHost(host: string, subject: string): Promise<string> {
    const all = await this.resolveChecked(host.replace(/^\[(.*)\]$/, '$1'), subject);
    return all[0].address;
  }

  /** Throws OutboundRefusedError when `address` (which `host` resolved to) is blocked and neither is allowlisted. */
  checkAddress(host: string, address: string): void {
    this.refuseBlocked(host.toLowerCase(), address, host);
  }

  /**
   * A dns.lookup for net/tls/undici's `connect` option: resolves with the
   * policy's resolver and answers only addresses it checked, or an
   * OutboundRefusedError when any of them is blocked (DNS rebinding).
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.resolveChecked(hostname, hostname).then(
      (all) => process.nextTick(() => this.answer(hostname, options, all, callback)),
      (err: Error) => process.nextTick(callback, err, ''),
    );
  };

  private answer(
    hostname: string,
    options: dns.LookupOptions,
    all: dns.LookupAddress[],
    callback: Parameters<LookupFunction>[2],
  ): void {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const wanted = family ? all.filter((a) => a.family === family) : all;
    if (wanted.length === 0)
      return callback(
        Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }),
        '',
      );
    if (options.all) return callback(null, wanted);
    callback(null, wanted[0].address, wanted[0].family);
  }

  /** Every address `host` resolves to, each checked; `subject` names the call in messages. */
  private async resolveChecked(host: string, subject: string): Promise<dns.LookupAddress[]> {
    const name = host.toLowerCase();
    const family = isIP(name);
    const all = family ? [{ address: name, family }] : await this.resolve(name, subject);
    for (const a of all) this.refuseBlocked(name, a.address, subject);
    return all;
  }

  private async resolve(host: string, subject: string): Promise<dns.LookupAddress[]> {
    let all: dns.LookupAddress[];
    try {
      all = await this.resolver(host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (!code || !UNRESOLVABLE.has(code)) {
        throw new OutboundLookupError(`${subject}: resolving ${host} failed for now (${code ?? String(err)})`, code, {
          cause: err,
        });
      }
      all = [];
    }
    if (all.length === 0)
      throw new OutboundRefusedError(`${subject}: ${host} does not resolve (no address for this name)`, 'unresolvable');
    return all;
  }

  private refuseBlocked(host: string, address: string, subject: string): void {
    if (this.allowlist.hosts.has(host) || this.allowlist.cidrs.some((c) => cidrContains(c, address))) return;
    const range = blockedRange(address);
    if (range === undefined) return;
    throw new OutboundRefusedError(
      `${subject} resolves to ${address}, ${article(range)} ${range} address; outbound calls may only reach public addresses (add the host or a CIDR to OUTBOUND_ALLOWLIST to allow it)`,
      'blocked-address',
    );
  }
}

export function policyFromEnv(config: { OUTBOUND_ALLOWLIST: string }): OutboundPolicy {
  return new OutboundPolicy(config.OUTBOUND_ALLOWLIST);
}
