import { blockedRange, cidrContains, parseCidr, type Cidr } from '../../../src/common/outbound/address-ranges';

describe('blockedRange', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.5.5.5', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.1.1', 'carrier-grade NAT'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'], // how the URL parser writes the same address
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.1.2.3', 'private'],
    ['64:ff9b::a00:1', 'private'], // NAT64 of 10.0.0.1
    ['2002:7f00:1::', 'loopback'], // 6to4 of 127.0.0.1
    ['::127.0.0.1', 'reserved'], // deprecated IPv4-compatible form
    ['4000::1', 'reserved'],
  ])('%s is %s', (ip, range) => {
    expect(blockedRange(ip)).toBe(range);
  });

  test.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '169.255.0.1',
    '2606:4700::1',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('%s is public', (ip) => {
    expect(blockedRange(ip)).toBeUndefined();
  });

  test('a string that is no address throws', () => {
    expect(() => blockedRange('example.com')).toThrow(TypeError);
  });
});

describe('parseCidr and cidrContains', () => {
  const cidr = (s: string) => parseCidr(s) as Cidr;

  test('IPv4 ranges and bare addresses', () => {
    expect(cidrContains(cidr('10.20.0.0/16'), '10.20.3.4')).toBe(true);
    expect(cidrContains(cidr('10.20.0.0/16'), '10.21.0.1')).toBe(false);
    expect(cidrContains(cidr('127.0.0.1'), '127.0.0.1')).toBe(true);
    expect(cidrContains(cidr('127.0.0.1'), '127.0.0.2')).toBe(false);
    expect(cidrContains(cidr('0.0.0.0/0'), '203.0.113.9')).toBe(true);
    expect(cidrContains(cidr('10.1.2.3/8'), '10.9.9.9')).toBe(true); // host bits ignored
  });

  test('IPv6 ranges; IPv4-mapped addresses match their IPv4', () => {
    expect(cidrContains(cidr('fd00::/8'), 'fd12::1')).toBe(true);
    expect(cidrContains(cidr('fd00::/8'), 'fe80::1')).toBe(false);
    expect(cidrContains(cidr('::1'), '::1')).toBe(true);
    expect(cidrContains(cidr('[::1]'), '::1')).toBe(true);
    expect(cidrContains(cidr('127.0.0.0/8'), '::ffff:127.0.0.1')).toBe(true);
    expect(cidrContains(cidr('::ffff:10.0.0.0/104'), '10.3.3.3')).toBe(true);
    expect(cidrContains(cidr('10.0.0.0/8'), 'fd00::1')).toBe(false);
    expect(cidrContains(cidr('10.0.0.0/8'), 'not-an-ip')).toBe(false);
  });

  test.each(['example.com', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/', '10.0.0.0/8/8', '10.0.0.0/x', '300.1.1.1', ''])(
    '"%s" is no CIDR',
    (s) => {
      expect(parseCidr(s)).toBeUndefined();
    },
  );
});
