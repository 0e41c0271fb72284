// URI parsing is the server's only gate between a client's string and a file:
// everything that could step outside the tree must be refused before any lookup.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeSegment, parseSkillUri, uriForPath } from '../../src/server/skill-uri.js';

describe('parseSkillUri', () => {
  it('accepts plain URIs and returns their canonical form', () => {
    expect(parseSkillUri('skill://acme/billing/refunds/SKILL.md')).toEqual({
      ok: true,
      segments: ['acme', 'billing', 'refunds', 'SKILL.md'],
      canonical: 'skill://acme/billing/refunds/SKILL.md',
    });
  });

  it('canonicalizes needless percent-encoding and encodes what must be', () => {
    const parsed = parseSkillUri('skill://pdf/%74emplates/a b.md');
    expect(parsed).toMatchObject({ ok: true, segments: ['pdf', 'templates', 'a b.md'], canonical: 'skill://pdf/templates/a%20b.md' });
  });

  it.each([
    'skill://',
    'skill://../etc/passwd',
    'skill://a/../b',
    'skill://a/./b',
    'skill://a/%2e%2e/b',
    'skill://a/%2E/b',
    'skill://a%2fb',
    'skill://a%5cb',
    'skill://a\\b',
    'skill://a/b%00',
    'skill://a/b\0',
    'skill:///etc/passwd',
    'skill://a//b',
    'skill://a/',
    'skill://a/b?x=1',
    'skill://a/b#frag',
    'skill://a/%zz',
    'file:///etc/passwd',
    'SKILL://a/b',
    '',
  ])('refuses %j', (uri) => {
    expect(parseSkillUri(uri).ok).toBe(false);
  });

  it('round-trips every path made of safe segments', () => {
    const segment = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s !== '.' && s !== '..' && !/[/\\\0]/.test(s));
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), (segments) => {
        const uri = uriForPath(segments.join('/'));
        const parsed = parseSkillUri(uri);
        expect(parsed).toEqual({ ok: true, segments, canonical: uri });
      }),
    );
  });

  it('never yields a dot segment or a separator inside a segment, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (tail) => {
        const parsed = parseSkillUri(`skill://${tail}`);
        if (!parsed.ok) return;
        for (const segment of parsed.segments) {
          expect(segment === '.' || segment === '..' || segment === '' || /[/\\\0]/.test(segment)).toBe(false);
        }
      }),
    );
  });
});

describe('encodeSegment', () => {
  it('leaves RFC 3986 pchar characters readable and encodes the rest', () => {
    expect(encodeSegment("a-b_c.d~e!$&'()*+,;=:@")).toBe("a-b_c.d~e!$&'()*+,;=:@");
    expect(encodeSegment('a b/c?d#e%f')).toBe('a%20b%2Fc%3Fd%23e%25f');
    expect(encodeSegment('é')).toBe('%C3%A9');
  });
});
