// The split between structural problems (never served) and length problems (served
// unless --strict), and that frontmatterProblem still reports both.
import { describe, expect, it } from 'vitest';
import { frontmatterLengthProblem, frontmatterProblem, frontmatterStructureProblem } from '../../src/format/skill-rules.js';

const valid = { name: 'pdf', description: 'Does PDFs' };

describe('frontmatter rules', () => {
  it('accepts a valid frontmatter', () => {
    expect(frontmatterProblem(valid, 'pdf')).toBeUndefined();
  });

  it.each([
    [{ description: 'd' }, 'pdf', /name is required/],
    [{ name: 'PDF', description: 'd' }, 'PDF', /a-z/],
    [{ name: 'a--b', description: 'd' }, 'a--b', /a-z/],
    [{ name: 'x'.repeat(65), description: 'd' }, 'x'.repeat(65), /64/],
    [{ name: 'other', description: 'd' }, 'pdf', /directory name "pdf"/],
    [{ name: 'pdf' }, 'pdf', /description is required/],
    [{ name: 'pdf', description: '   ' }, 'pdf', /description is required/],
    [{ ...valid, compatibility: '' }, 'pdf', /compatibility/],
    [{ ...valid, compatibility: 3 }, 'pdf', /compatibility/],
    [{ ...valid, metadata: ['a'] }, 'pdf', /metadata must be a map/],
  ])('structure problem: %j in directory %s', (frontmatter, directoryName, message) => {
    expect(frontmatterStructureProblem(frontmatter, directoryName)).toMatch(message);
    expect(frontmatterLengthProblem(frontmatter)).toBeUndefined();
    expect(frontmatterProblem(frontmatter, directoryName)).toMatch(message);
  });

  it('reports over-long description and compatibility as length problems only', () => {
    const long = { ...valid, description: 'd'.repeat(1025) };
    expect(frontmatterStructureProblem(long, 'pdf')).toBeUndefined();
    expect(frontmatterLengthProblem(long)).toMatch(/1024/);
    expect(frontmatterProblem(long, 'pdf')).toMatch(/1024/);
    const compat = { ...valid, compatibility: 'c'.repeat(501) };
    expect(frontmatterStructureProblem(compat, 'pdf')).toBeUndefined();
    expect(frontmatterLengthProblem(compat)).toMatch(/compatibility/);
  });

  it('counts characters, not UTF-16 units', () => {
    expect(frontmatterLengthProblem({ ...valid, description: '😀'.repeat(1024) })).toBeUndefined();
    expect(frontmatterLengthProblem({ ...valid, description: '😀'.repeat(1025) })).toMatch(/1024/);
  });
});
