// The outbound policy against a fake resolver: nothing here touches DNS or the network.
import type { LookupAddress } from 'node:dns';
import {
  OutboundLookupError,
  OutboundPolicy,
  OutboundRefusedError,
  parseAllowlist,
  policyFromEnv,
  type Resolver,
} from '../../../src/common/outbound/policy';

type Answer = string[] | string | (() => string[]); // addresses, an error code, or a function of the call
const family = (a: string) => (a.includes(':') ? 6 : 4);

/** A resolver answering from a table; an unknown name is ENOTFOUND. */
function fakeResolver(table: Record<string, Answer>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    const answer = table[host] ?? 'ENOTFOUND';
    if (typeof answer === 'string') throw Object.assign(new Error(`getaddrinfo ${answer} ${host}`), { code: answer });
    const addresses = typeof answer === 'function' ? answer() : answer;
    return addresses.map((address) => ({ address, family: family(address) as 4 | 6 }));
  };
  return Object.assign(resolve, { calls });
}

const noDns = fakeResolver({});

async function refusal(policy: OutboundPolicy, url: string): Promise<OutboundRefusedError> {
  const err = await policy.checkUrl(url).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboundRefusedError);
  return err as OutboundRefusedError;
}

describe('checkUrl with an empty allowlist', () => {
  const policy = new OutboundPolicy('', noDns);

  test.each([
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.1.1/',
    'http://127.0.0.1:8080/mcp',
    'http://127.5.5.5/',
    'http://0.0.0.0/',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/',
    'http://[fe80::1]/',
    'http://[fd12::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://100.64.1.1/',
    'http://2130706433/', // 127.0.0.1 as one number: the URL parser normalizes it
    'http://0x7f.1/',
  ])('refuses the IP literal %s', async (url) => {
    expect((await refusal(policy, url)).reason).toBe('blocked-address');
  });

  test.each(['http://8.8.8.8/', 'https://[2606:4700::1]/mcp', 'https://1.1.1.1:8443/x?y=1'])(
    'allows the public address %s',
    async (url) => {
      await expect(policy.checkUrl(url)).resolves.toBeUndefined();
    },
  );

  test('the message names the URL, the address and its range, and how to allow it', async () => {
    expect((await refusal(policy, 'http://169.254.169.254/')).message).toBe(
      'http://169.254.169.254/ resolves to 169.254.169.254, a link-local address; outbound calls may only reach public addresses (add the host or a CIDR to OUTBOUND_ALLOWLIST to allow it)',
    );
    expect((await refusal(policy, 'http://0.0.0.0/')).message).toContain('an unspecified address');
    expect((await refusal(policy, 'http://[fd12::1]/')).message).toContain('a unique-local address');
  });

  test.each([
    'ftp://example.com/file',
    'file:///etc/passwd',
    'javascript:alert(document.cookie)',
    'data:text/plain,secret-payload',
  ])('refuses the scheme of %s without echoing the rest', async (url) => {
    const err = await refusal(policy, url);
    expect(err.reason).toBe('scheme');
    expect(err.message).toMatch(/^[a-z]+: URLs are refused/);
    expect(err.message).not.toMatch(/passwd|cookie|secret-payload|example/);
  });

  test('refuses credentials in the URL, showing neither them nor the query', async () => {
    const err = await refusal(policy, 'https://alice:hunter2@8.8.8.8/mcp?token=abc#frag');
    expect(err.reason).toBe('credentials');
    expect(err.message).toContain('https://8.8.8.8/mcp');
    expect(err.message).not.toMatch(/alice|hunter2|token|abc|frag/);
  });

  test('refuses a string that is no URL without echoing it', async () => {
    const err = await refusal(policy, 'not a url with secret');
    expect(err.reason).toBe('invalid-url');
    expect(err.message).not.toContain('secret');
  });

  test('the query string never reaches a refusal message', async () => {
    expect((await refusal(policy, 'http://10.0.0.1/path?api_key=s3cret')).message).not.toContain('s3cret');
  });
});

describe('checkUrl resolving names', () => {
  const resolver = fakeResolver({
    'public.test': ['93.184.216.34', '2606:2800:220:1::1'],
    'loop.test': ['127.0.0.1'],
    'mixed.test': ['93.184.216.34', '10.1.2.3'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'flaky.test': 'EAI_AGAIN',
    'slow.test': 'ETIMEOUT',
    'empty.test': [],
  });
  const policy = new OutboundPolicy('', resolver);

  test('a name resolving to public addresses only is allowed', async () => {
    await expect(policy.checkUrl('https://PUBLIC.test/mcp')).resolves.toBeUndefined();
    expect(resolver.calls).toContain('public.test');
  });

  test('a name resolving to loopback is refused, naming the address', async () => {
    const err = await refusal(policy, 'http://loop.test/');
    expect(err.message).toMatch(/^http:\/\/loop\.test\/ resolves to 127\.0\.0\.1, a loopback address/);
  });

  test('a name resolving to a public and a private address is refused (any blocked address)', async () => {
    expect((await refusal(policy, 'http://mixed.test/')).message).toContain('10.1.2.3, a private address');
  });

  test('an IPv4-mapped answer is judged by its IPv4', async () => {
    expect((await refusal(policy, 'http://mapped.test/')).message).toContain('a loopback address');
  });

  test('a name that does not resolve is refused', async () => {
    for (const url of ['http://nowhere.test/', 'http://empty.test/']) {
      const err = await refusal(policy, url);
      expect(err.reason).toBe('unresolvable');
      expect(err.message).toContain('does not resolve');
    }
  });

  test('a temporary DNS failure is no refusal: OutboundLookupError, for the caller to decide', async () => {
    for (const [url, code] of [
      ['http://flaky.test/', 'EAI_AGAIN'],
      ['http://slow.test/', 'ETIMEOUT'],
    ]) {
      const err = await policy.checkUrl(url).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OutboundLookupError);
      expect(err).not.toBeInstanceOf(OutboundRefusedError);
      expect((err as OutboundLookupError).code).toBe(code);
    }
  });
});

describe('the allowlist', () => {
  const resolver = fakeResolver({
    'mcp.internal': ['10.20.0.5'],
    'other.internal': ['10.20.0.5'],
    'v6.internal': ['fd00::5'],
    'two.internal': ['10.20.0.5', '192.168.0.9'],
  });

  test('by host name, exactly and case-insensitively', async () => {
    const policy = new OutboundPolicy('MCP.internal', resolver);
    await expect(policy.checkUrl('http://mcp.internal:3000/mcp')).resolves.toBeUndefined();
    await refusal(policy, 'http://other.internal/');
    await refusal(policy, 'http://sub.mcp.internal/');
  });

  test('by IP address, for literals and resolved addresses', async () => {
    const policy = new OutboundPolicy('127.0.0.1, 10.20.0.5', resolver);
    await expect(policy.checkUrl('http://127.0.0.1:9000/')).resolves.toBeUndefined();
    await expect(policy.checkUrl('http://[::ffff:127.0.0.1]:9000/')).resolves.toBeUndefined();
    await expect(policy.checkUrl('http://other.internal/')).resolves.toBeUndefined();
    await refusal(policy, 'http://127.0.0.2/');
  });

  test('by CIDR, IPv4 and IPv6; every resolved address must be allowed', async () => {
    const policy = new OutboundPolicy('10.20.0.0/16,fd00::/8', resolver);
    await expect(policy.checkUrl('http://10.20.9.9/')).resolves.toBeUndefined();
    await expect(policy.checkUrl('http://mcp.internal/')).resolves.toBeUndefined();
    await expect(policy.checkUrl('http://v6.internal/')).resolves.toBeUndefined();
    await expect(policy.checkUrl('http://[fd99::1]/')).resolves.toBeUndefined();
    await refusal(policy, 'http://10.21.0.1/');
    expect((await refusal(policy, 'http://two.internal/')).message).toContain('192.168.0.9');
  });

  test('does not lift the scheme and credentials rules', async () => {
    const policy = new OutboundPolicy('mcp.internal,0.0.0.0/0', resolver);
    expect((await refusal(policy, 'ftp://mcp.internal/')).reason).toBe('scheme');
    expect((await refusal(policy, 'http://a:b@mcp.internal/')).reason).toBe('credentials');
  });

  test('parseAllowlist: host names, addresses and CIDRs; blanks ignored; a bad entry named', () => {
    const list = parseAllowlist(' mcp.internal, ,127.0.0.1,10.0.0.0/8,[::1],fd00::/8,Host_1.Example. ');
    expect([...list.hosts]).toEqual(['mcp.internal', 'host_1.example.']);
    expect(list.cidrs).toHaveLength(4);
    expect(parseAllowlist('')).toEqual({ hosts: new Set(), cidrs: [] });
    for (const bad of [
      'http://mcp.internal',
      'mcp.internal:8080',
      '10.0.0.0/33',
      '*.internal',
      '300.1.1.1',
      'fd00::/200',
      'a b',
    ]) {
      expect(() => parseAllowlist(`127.0.0.1,${bad}`)).toThrow(`"${bad}"`);
    }
  });

  test('policyFromEnv reads OUTBOUND_ALLOWLIST', async () => {
    const policy = policyFromEnv({ OUTBOUND_ALLOWLIST: '127.0.0.1' });
    await expect(policy.checkUrl('http://127.0.0.1:1/')).resolves.toBeUndefined();
    await expect(policy.checkUrl('http://10.0.0.1/')).rejects.toBeInstanceOf(OutboundRefusedError);
  });
});

describe('checkAddress', () => {
  test('throws for a blocked address unless the host or the address is allowlisted', () => {
    const policy = new OutboundPolicy('mcp.internal,10.9.0.0/16', noDns);
    expect(() => policy.checkAddress('x.test', '169.254.169.254')).toThrow(
      /^x\.test resolves to 169\.254\.169\.254, a link-local address/,
    );
    expect(() => policy.checkAddress('x.test', '8.8.8.8')).not.toThrow();
    expect(() => policy.checkAddress('MCP.internal', '10.1.1.1')).not.toThrow();
    expect(() => policy.checkAddress('x.test', '10.9.1.1')).not.toThrow();
  });
});

describe('lookup (the socket’s resolver: DNS rebinding)', () => {
  type Result = { err: NodeJS.ErrnoException | null; address?: string | LookupAddress[]; family?: number };
  const lookup = (policy: OutboundPolicy, host: string, options: object) =>
    new Promise<Result>((resolve) =>
      policy.lookup(host, options, (err, address, family) => resolve({ err, address, family })),
    );

  test('a name that resolved to a public address at checkUrl and to 127.0.0.1 at connect is refused', async () => {
    let calls = 0;
    const resolver = fakeResolver({ 'rebind.test': () => (++calls === 1 ? ['93.184.216.34'] : ['127.0.0.1']) });
    const policy = new OutboundPolicy('', resolver);
    await expect(policy.checkUrl('http://rebind.test/')).resolves.toBeUndefined();
    const { err } = await lookup(policy, 'rebind.test', {});
    expect(err).toBeInstanceOf(OutboundRefusedError);
    expect(err?.message).toMatch(/^rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
  });

  test('answers checked addresses in either form net asks for (one, or all for autoSelectFamily)', async () => {
    const policy = new OutboundPolicy('', fakeResolver({ 'public.test': ['93.184.216.34', '2606:2800:220:1::1'] }));
    expect(await lookup(policy, 'public.test', {})).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    expect(await lookup(policy, 'public.test', { family: 6 })).toEqual({
      err: null,
      address: '2606:2800:220:1::1',
      family: 6,
    });
    expect(await lookup(policy, 'public.test', { all: true })).toEqual({
      err: null,
      address: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ],
      family: undefined,
    });
  });

  test('refuses when any answer is blocked; allowlisted hosts and addresses pass', async () => {
    const resolver = fakeResolver({ 'mixed.test': ['93.184.216.34', '10.0.0.7'], 'mcp.internal': ['10.0.0.7'] });
    expect((await lookup(new OutboundPolicy('', resolver), 'mixed.test', { all: true })).err).toBeInstanceOf(
      OutboundRefusedError,
    );
    expect((await lookup(new OutboundPolicy('mcp.internal', resolver), 'mcp.internal', {})).address).toBe('10.0.0.7');
    expect((await lookup(new OutboundPolicy('10.0.0.0/8', resolver), 'mixed.test', {})).address).toBe('93.184.216.34');
  });

  test('resolver failures reach the socket as errors', async () => {
    const policy = new OutboundPolicy('', fakeResolver({ 'flaky.test': 'EAI_AGAIN' }));
    expect((await lookup(policy, 'flaky.test', {})).err).toBeInstanceOf(OutboundLookupError);
    expect((await lookup(policy, 'nowhere.test', {})).err).toBeInstanceOf(OutboundRefusedError);
  });
});
