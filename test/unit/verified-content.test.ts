import { describe, expect, it } from 'vitest';
import { verifyContent } from '../../src/catalog/verified-content.js';
import { IntegrityError } from '../../src/errors.js';
import { FrontmatterError, frontmatterDifference, parseFrontmatter } from '../../src/format/frontmatter.js';
import { sha256 } from '../support/digest.mjs';

const content = (text: string) => ({ uri: 'skill://s/SKILL.md', bytes: Buffer.from(text), mimeType: 'text/markdown' });
const skillMd = '---\nname: s\ndescription: Does s\nmetadata:\n  version: "1"\n---\nbody\n';

describe('verifyContent', () => {
  it('accepts bytes matching size, digest and frontmatter, and marks them verified', () => {
    const verified = verifyContent('lab', content(skillMd), {
      digest: sha256(skillMd),
      sizeBytes: Buffer.byteLength(skillMd),
      frontmatter: { description: 'Does s', name: 's', metadata: { version: '1' } },
    });
    expect(verified.verified).toBe(true);
    expect(verified.digest).toBe(sha256(skillMd));
  });

  it('marks content with nothing to check against as unverified', () => {
    expect(verifyContent('lab', content('x'), {}).verified).toBe(false);
  });

  it.each([
    [{ sizeBytes: 3 }, /size mismatch: expected 3 bytes, got \d+ bytes/],
    [{ digest: sha256('other') }, /digest mismatch: expected sha256:[0-9a-f]{64}, got sha256:[0-9a-f]{64}/],
    [{ frontmatter: { name: 's', description: 'Something else', metadata: { version: '1' } } }, /frontmatter field "description" mismatch/],
    [{ frontmatter: { name: 's', description: 'Does s', metadata: { version: 1 } } }, /frontmatter field "metadata.version" mismatch/],
    [{ frontmatter: { name: 's', description: 'Does s' } }, /frontmatter field "metadata" mismatch/],
  ])('rejects %o with an IntegrityError naming server, uri, expected and actual', (expectation, message) => {
    const attempt = () => verifyContent('lab', content(skillMd), expectation);
    expect(attempt).toThrow(IntegrityError);
    expect(attempt).toThrow(/^lab: skill:\/\/s\/SKILL.md: /);
    expect(attempt).toThrow(message);
  });

  it('rejects a SKILL.md without frontmatter when the listing has some', () => {
    expect(() => verifyContent('lab', content('# no frontmatter'), { frontmatter: { name: 's' } })).toThrow(/frontmatter mismatch/);
  });
});

describe('frontmatter', () => {
  it('parses YAML frontmatter into JSON values (no dates, no custom types)', () => {
    expect(parseFrontmatter('---\nname: x\ncreated: 2024-01-01\nlist: [a, b]\n---\n')).toEqual({ name: 'x', created: '2024-01-01', list: ['a', 'b'] });
  });

  it('compares field by field, ignoring key order', () => {
    expect(frontmatterDifference({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toBeUndefined();
    expect(frontmatterDifference({ a: 1 }, { a: 1, extra: true })).toBe('extra');
    expect(frontmatterDifference({ b: { c: [1, 2] } }, { b: { c: [1, 3] } })).toBe('b.c[1]');
    // Inherited names are not fields: a "__proto__" key is compared like any other.
    expect(frontmatterDifference({}, JSON.parse('{"__proto__": 1}'))).toBe('__proto__');
    expect(frontmatterDifference(parseFrontmatter('---\n__proto__: 1\n---\n'), {})).toBe('__proto__');
  });

  it.each([
    ['no frontmatter', /no frontmatter: SKILL.md must start with a --- line/],
    ['---\nname: [unclosed\n---\n', /frontmatter is not valid YAML/],
    ['---\nname: x\n', /frontmatter is not closed by a --- line/],
    ['---\n- a list\n---\n', /frontmatter is not a YAML mapping/],
    ['---\na: 1\na: 2\n---\n', /frontmatter is not valid YAML: .*unique/i],
  ] as const)('refuses %j, saying why', (text, why) => {
    expect(() => parseFrontmatter(text)).toThrow(FrontmatterError);
    expect(() => parseFrontmatter(text)).toThrow(why);
  });
});
