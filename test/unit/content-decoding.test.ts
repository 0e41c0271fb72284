import { describe, expect, it } from 'vitest';
import { LimitExceededError, ProtocolError } from '../../src/errors.js';
import { decodeReadResult } from '../../src/mcp/content-decoding.js';

const uri = 'skill://s/data.bin';
const decode = (contents: unknown[], maxBytes?: number) => decodeReadResult('lab', uri, { contents }, maxBytes);

describe('decodeReadResult', () => {
  it('turns text into UTF-8 bytes and blobs into their decoded bytes', () => {
    expect(decode([{ uri, text: 'héllo' }]).bytes.toString('utf8')).toBe('héllo');
    const bytes = Buffer.from([0, 1, 2, 250, 251, 252, 253]);
    expect(decode([{ uri, blob: bytes.toString('base64') }]).bytes.equals(bytes)).toBe(true);
  });

  it('picks the content whose uri matches among several', () => {
    expect(decode([{ uri: 'skill://s/other', text: 'no' }, { uri, text: 'yes' }]).bytes.toString()).toBe('yes');
  });

  it.each([
    [[], /no contents/],
    [[{ uri: 'skill://s/other', text: 'x' }], /none for this uri/],
    [[{ uri, text: 'a' }, { uri, text: 'b' }], /2 contents for the same uri/],
    [[{ uri, text: 'a', blob: 'YQ==' }], /exactly one of text or blob/],
    [[{ uri }], /exactly one of text or blob/],
    [[{ uri, blob: 'QUJ' }], /not valid base64/],
    [[{ uri, blob: 'QU!D' }], /not valid base64/],
    [[{ uri, blob: 'QU=D' }], /not valid base64/],
    [[{ uri, blob: 'QUJD\nQUJD' }], /not valid base64/],
    [[{ uri, blob: '====' }], /not valid base64/],
  ])('refuses %j', (contents, message) => {
    expect(() => decode(contents)).toThrow(ProtocolError);
    expect(() => decode(contents)).toThrow(message);
  });

  it('refuses content over the byte limit before decoding it', () => {
    expect(() => decode([{ uri, blob: Buffer.alloc(12).toString('base64') }], 8)).toThrow(LimitExceededError);
    expect(() => decode([{ uri, text: 'x'.repeat(9) }], 8)).toThrow(/9 bytes, over the 8-byte limit/);
    expect(decode([{ uri, text: 'x'.repeat(8) }], 8).bytes.length).toBe(8);
  });
});
