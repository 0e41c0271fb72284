import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ancestorUri, segmentsToUri, uriToSegments } from '../../src/catalog/uri-path.js';

describe('URI <-> path mapping', () => {
  it('maps skill:// URIs to paths under the label, and back', () => {
    expect(uriToSegments('skill://acme/billing/refunds/SKILL.md')).toEqual(['acme', 'billing', 'refunds', 'SKILL.md']);
    expect(segmentsToUri(['acme', 'billing', 'refunds', 'SKILL.md'])).toBe('skill://acme/billing/refunds/SKILL.md');
    expect(uriToSegments('skill://index.json')).toEqual(['index.json']);
  });

  it('gives other schemes a directory of their own, ending in ":"', () => {
    expect(uriToSegments('github://owner/repo/skills/refunds/SKILL.md')).toEqual(['github:', 'owner', 'repo', 'skills', 'refunds', 'SKILL.md']);
    expect(segmentsToUri(['github:', 'owner', 'repo', 'SKILL.md'])).toBe('github://owner/repo/SKILL.md');
  });

  it('decodes percent-encoding and re-encodes canonically', () => {
    expect(uriToSegments('skill://x/my%20file.md')).toEqual(['x', 'my file.md']);
    expect(segmentsToUri(['x', 'my file.md'])).toBe('skill://x/my%20file.md');
  });

  it.each([
    ['skill://../etc/passwd', 'relative reference'],
    ['skill://x/%2e%2e/secret', 'relative reference'],
    ['skill://x/a%2fb', 'contains "/"'],
    ['skill://x/a%5cb', 'backslash'],
    ['skill://x/a\\b', 'backslash'],
    ['skill://x/a%00b', 'NUL'],
    ['skill://x//b', 'empty'],
    ['skill://x/b/', 'empty'],
    ['file:///etc/passwd', 'empty'],
    [`skill://x/${'a'.repeat(256)}`, 'longer than 255 bytes'],
    ['skill://x/%zz', 'invalid percent-encoding'],
    ['Skill://x/y', 'not an absolute'],
    ['skill://x/y?q=1', 'not an absolute'],
    ['skill://github:/y', 'reserved for scheme directories'],
    ['/etc/passwd', 'not an absolute'],
  ])('refuses %s (%s)', (uri, reason) => {
    const result = uriToSegments(uri);
    expect(result).toHaveProperty('problem');
    expect((result as { problem: string }).problem).toContain(reason);
  });

  it('round-trips any path of valid names, and never yields an unsafe segment', () => {
    const name = fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }).filter((s) => !['.', '..'].includes(s) && !/[/\\\0]/.test(s) && !s.endsWith(':'));
    fc.assert(
      fc.property(fc.array(name, { minLength: 1, maxLength: 6 }), (segments) => {
        const uri = segmentsToUri(segments);
        expect(uriToSegments(uri)).toEqual(segments);
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (tail) => {
        const result = uriToSegments(`skill://${tail}`);
        if (Array.isArray(result)) for (const segment of result) expect(['', '.', '..'].includes(segment) || /[/\\\0]/.test(segment)).toBe(false);
      }),
    );
  });

  it('names ancestors as the server spelled the URI', () => {
    expect(ancestorUri('skill://a/b%20c/d.md', 2)).toBe('skill://a/b%20c');
    expect(ancestorUri('github://o/r/x.md', 2)).toBe('github://o');
  });
});
