// Text vs binary decides whether a client gets `text` or `blob`; both must carry exact bytes.
import { describe, expect, it } from 'vitest';
import { decodeText, mimeTypeForContent, mimeTypeForName } from '../../src/server/mime.js';

describe('decodeText', () => {
  it('returns valid UTF-8 unchanged, BOM and CRLF included', () => {
    const bytes = Buffer.from('\uFEFFhé\r\nllo', 'utf8');
    const text = decodeText(bytes)!;
    expect(Buffer.from(text, 'utf8').equals(bytes)).toBe(true);
  });

  it('treats invalid UTF-8 and anything with NUL as binary', () => {
    expect(decodeText(Buffer.from([0xc3, 0x28]))).toBeUndefined();
    expect(decodeText(Buffer.from([0xff, 0xfe, 0x41]))).toBeUndefined();
    expect(decodeText(Buffer.from('abc\0def'))).toBeUndefined();
    expect(decodeText(Buffer.from([0x89, 0x50, 0x4e, 0x47]))).toBeUndefined();
  });

  it('accepts the empty file as text', () => {
    expect(decodeText(Buffer.alloc(0))).toBe('');
  });
});

describe('media types', () => {
  it.each([
    ['SKILL.md', 'text/markdown'],
    ['index.JSON', 'application/json'],
    ['extract.py', 'text/x-python'],
    ['font.ttf', 'font/ttf'],
    ['doc.pdf', 'application/pdf'],
    ['logo.png', 'image/png'],
    ['LICENSE', 'text/plain'],
    ['.hidden', 'application/octet-stream'],
    ['data.bin', 'application/octet-stream'],
  ])('%s is %s by name', (name, type) => {
    expect(mimeTypeForName(name)).toBe(type);
  });

  it('calls unknown-named text text/plain when read, and keeps known types', () => {
    expect(mimeTypeForContent('notes.unknownext', true)).toBe('text/plain');
    expect(mimeTypeForContent('notes.unknownext', false)).toBe('application/octet-stream');
    expect(mimeTypeForContent('a.md', true)).toBe('text/markdown');
  });
});
