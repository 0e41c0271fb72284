// A generated document whose bulk is segments rendered again when read (skills.json): the
// bytes served are the bytes first rendered, at any read size and across segment edges, and a
// segment that would render other bytes fails the read instead of mixing two renderings.
import { describe, expect, it } from 'vitest';
import { IntegrityError } from '../../src/errors.js';
import { GeneratedDocument, type DocumentPart } from '../../src/fs/generated-document.js';
import { sha256 } from '../support/digest.mjs';

function whole(rendering: { length: number; slice(position: number, length: number): Buffer }, readBytes: number): Buffer {
  const parts: Buffer[] = [];
  for (let position = 0; position < rendering.length; position += readBytes) parts.push(Buffer.from(rendering.slice(position, readBytes)));
  return Buffer.concat(parts);
}

describe('GeneratedDocument segments', () => {
  it('serves exactly the first rendering, byte for byte at any read size, rendering a segment again only when read', async () => {
    const renders = new Map<number, number>();
    const segment = (i: number) => ({
      text: () => {
        renders.set(i, (renders.get(i) ?? 0) + 1);
        return `[${i}:${'é'.repeat(3_000 + i)}]`;
      },
    });
    const parts: DocumentPart[] = ['head ', segment(0), '', ' between ', segment(1), segment(2), '', ' tail'];
    const document = new GeneratedDocument(() => parts, { stepBytes: 4096, ttlMs: 1_000, kernelHoldMs: 30_000, now: () => 0 });
    const rendering = await document.reported();
    expect([...renders.values()]).toEqual([1, 1, 1]);
    const text = Buffer.from(parts.map((part) => (typeof part === 'string' ? part : part.text())).join(''), 'utf8');
    renders.clear();
    const expected = Buffer.concat([text, Buffer.alloc(rendering.length - text.length - 1, ' '), Buffer.from('\n')]);
    for (const readBytes of [5, 4096, 7_000, 1 << 20]) expect(whole(rendering, readBytes).equals(expected)).toBe(true);
    expect(rendering.digest).toBe(sha256(expected));
    // Two segments are kept rendered: reading on through one renders it once, not once per read.
    renders.clear();
    whole(rendering, 100);
    expect([...renders.values()].every((count) => count === 1)).toBe(true);
  });

  it('a segment that renders other bytes than it first did fails the read (no mix of two renderings)', async () => {
    let size = 10;
    const parts: DocumentPart[] = ['{', { text: () => 'x'.repeat(size) }, '}'];
    const document = new GeneratedDocument(() => parts, { stepBytes: 64, ttlMs: 1_000, kernelHoldMs: 30_000, now: () => 0 });
    const rendering = await document.reported();
    size = 11;
    expect(() => rendering.slice(0, 64)).toThrow(IntegrityError);
    expect(() => rendering.slice(0, 64)).toThrow(/rendered 11 bytes, not the 10 it had/);
  });
});
