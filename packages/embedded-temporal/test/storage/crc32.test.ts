import { crc32 } from '../../src/storage/crc32';

describe('crc32', () => {
  it('matches the published CRC-32/ISO-HDLC check values', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(crc32(Buffer.alloc(0))).toBe(0);
    expect(crc32(Buffer.from('The quick brown fox jumps over the lazy dog'))).toBe(0x414fa339);
    expect(crc32(Buffer.alloc(32, 0))).toBe(0x190a55ad);
    expect(crc32(Buffer.alloc(32, 0xff))).toBe(0xff6cab0b);
  });

  it('checksums a sub-range without copying', () => {
    const data = Buffer.from('xx123456789yy');
    expect(crc32(data, 2, 11)).toBe(0xcbf43926);
  });
});
