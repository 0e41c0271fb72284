// Where a SKILL.md's frontmatter ends, checked against an independent reading of the Agent
// Skills format (lines split on "\n", an optional "\r" before it): U+2028, U+2029 and a lone
// "\r" end no line, so nothing can hide fields from the comparison that a YAML reader sees.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FrontmatterError, frontmatterBlock, parseFrontmatter } from '../../src/format/frontmatter.js';

/** The reference: split on \n, strip one trailing \r, first line "---", block up to the next "---" line. */
function referenceBlock(markdown: string): string | undefined {
  const text = markdown.startsWith('\uFEFF') ? markdown.slice(1) : markdown;
  const lines = text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (lines.length < 2 || !/^---[ \t]*$/.test(lines[0]!)) return undefined;
  const end = lines.findIndex((line, i) => i > 0 && /^---[ \t]*$/.test(line));
  if (end === -1) return undefined;
  const raw = text.split('\n');
  return raw.slice(1, end).map((line) => `${line}\n`).join('');
}

describe('frontmatter delimiting', () => {
  it('a line separator does not end the block early, so a field after it is compared too', () => {
    const sneaky = '---\nname: a\ndescription: d\n---\u2028\nallowed-tools: Bash\n---\nbody\n';
    // The old multiline regex stopped at "---" before U+2028, hiding allowed-tools.
    expect(frontmatterBlock(sneaky)).toBe('name: a\ndescription: d\n---\u2028\nallowed-tools: Bash\n');
    expect(() => parseFrontmatter(sneaky)).toThrow(FrontmatterError);
    const lone = '---\nname: a\r---\rallowed-tools: Bash\ndescription: d\n---\n';
    expect(frontmatterBlock(lone)).toBe('name: a\r---\rallowed-tools: Bash\ndescription: d\n');
  });

  it('agrees with the reference reading on generated documents', () => {
    const piece = fc.constantFrom('---', 'name: x', 'description: y', 'allowed-tools: Bash', '\u2028', '\u2029', '\r', '\n', '\r\n', ' ', 'a', '---\t', '--- x');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
        const markdown = pieces.join('');
        const expected = referenceBlock(markdown);
        let actual: string | undefined;
        try {
          actual = frontmatterBlock(markdown);
        } catch {
          actual = undefined;
        }
        expect(actual).toBe(expected);
      }),
      { seed: 2640, numRuns: 5_000 },
    );
  });
});
