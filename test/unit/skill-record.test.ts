import { describe, expect, it } from 'vitest';
import { recordFromIndex, recordFromListing } from '../../src/catalog/skill-record.js';
import type { SkillEntry } from '../../src/protocol/skills-wire.js';

const digest = `sha256:${'a'.repeat(64)}`;
const options = { hideDynamic: false };

function entry(overrides: Partial<SkillEntry> = {}): SkillEntry {
  return {
    uri: 'skill://acme/refunds/SKILL.md',
    frontmatter: { name: 'refunds', description: 'Refunds' },
    resources: [
      { uri: 'skill://acme/refunds/SKILL.md', digest, size: 10 },
      { uri: 'skill://acme/refunds/ref/a.md', digest, size: 5 },
    ],
    ...overrides,
  };
}

describe('skill records', () => {
  it('places a listed skill and its manifest under the label', () => {
    const record = recordFromListing(entry(), options);
    expect(record).toMatchObject({ name: 'refunds', path: 'acme/refunds/SKILL.md', depth: 3, skillMdDigest: digest, declined: undefined });
    expect((record as { files: Array<{ path: string }> }).files.map((file) => file.path)).toEqual(['acme/refunds/SKILL.md', 'acme/refunds/ref/a.md']);
  });

  it.each([
    [{ uri: 'skill://acme/refunds/README.md' }, /does not end in <skill-path>\/SKILL.md/],
    [{ uri: 'skill://SKILL.md' }, /does not end in <skill-path>\/SKILL.md/],
    [{ frontmatter: { name: 'other', description: 'x' } }, /differs from its directory "refunds"/],
    [{ frontmatter: { name: 'Refunds', description: 'x' }, uri: 'skill://acme/Refunds/SKILL.md' }, /name may contain only/],
    [{ frontmatter: { name: 'refunds' } }, /no description/],
    [{ resources: [{ uri: 'skill://acme/refunds/ref/a.md', digest, size: 5 }] }, /does not list the skill's own SKILL.md/],
    [{ resources: [{ uri: 'skill://acme/refunds/SKILL.md', digest, size: 1 }, { uri: 'skill://acme/other/x.md', digest, size: 1 }] }, /outside the skill directory/],
    [{ resources: [{ uri: 'skill://acme/refunds/SKILL.md', digest, size: 1 }, { uri: 'skill://acme/refunds/SKILL.md', digest, size: 1 }] }, /twice/],
    [{ resources: [{ uri: 'skill://acme/refunds/SKILL.md', digest, size: 1 }, { uri: 'skill://acme/refunds/../x.md', digest, size: 1 }] }, /relative reference/],
  ])('refuses an entry with %o', (overrides, problem) => {
    const record = recordFromListing(entry(overrides as Partial<SkillEntry>), options);
    expect(record).toHaveProperty('problem');
    expect((record as { problem: string }).problem).toMatch(problem);
  });

  it('declines a skill over 512 files or 16 MiB, saying why', () => {
    const many = Array.from({ length: 512 }, (_, i) => ({ uri: `skill://acme/refunds/f${i}`, digest, size: 1 }));
    const tooMany = recordFromListing(entry({ resources: [{ uri: 'skill://acme/refunds/SKILL.md', digest, size: 1 }, ...many] }), options);
    expect(tooMany).toMatchObject({ declined: expect.stringMatching(/513 files/) });
    const exactly = recordFromListing(entry({ resources: [{ uri: 'skill://acme/refunds/SKILL.md', digest, size: 1 }, ...many.slice(1)] }), options);
    expect(exactly).toMatchObject({ declined: undefined });
    const tooBig = recordFromListing(entry({ resources: [{ uri: 'skill://acme/refunds/SKILL.md', digest, size: 16 * 1024 * 1024 + 1 }] }), options);
    expect(tooBig).toMatchObject({ declined: expect.stringMatching(/16777217 bytes/) });
  });

  it('serves dynamic skills unless told to hide them', () => {
    expect(recordFromListing(entry({ resources: 'dynamic' }), options)).toMatchObject({ files: 'dynamic', declined: undefined });
    expect(recordFromListing(entry({ resources: 'dynamic' }), { hideDynamic: true })).toMatchObject({ declined: expect.stringMatching(/--no-dynamic/) });
  });

  it('maps skills under other schemes below a scheme directory', () => {
    const record = recordFromIndex({ url: 'github://owner/repo/refunds/SKILL.md', digest, frontmatter: { name: 'refunds', description: 'x' } });
    expect(record).toMatchObject({ path: 'github:/owner/repo/refunds/SKILL.md', files: 'unlisted' });
    expect(recordFromIndex({ url: 'github://SKILL.md', digest, frontmatter: { name: 'x', description: 'x' } })).toHaveProperty('problem');
  });
});
