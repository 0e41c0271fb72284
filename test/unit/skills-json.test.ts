// skills.json rendering: linear in the skills however many share a name, server strings
// that cannot break a line, and the held entry's state per skill.
import { describe, expect, it } from 'vitest';
import type { CatalogSummary, SkillSummary } from '../../src/catalog/server-catalog.js';
import { renderSkillsJson } from '../../src/fs/skills-json.js';

function skill(name: string, path: string, extra: Partial<SkillSummary> = {}): SkillSummary {
  return {
    name,
    description: `about ${name}`,
    uri: `skill://${path}/SKILL.md`,
    path,
    digest: undefined,
    integrity: 'verified',
    declined: undefined,
    rejected: undefined,
    changedAt: undefined,
    resourcesDigest: `sha256:${'1'.repeat(64)}`,
    breaks: undefined,
    ...extra,
  };
}

function catalog(label: string, skills: SkillSummary[]): CatalogSummary {
  return {
    label,
    connection: { status: 'connected', protocolVersion: '2026-07-28' },
    generation: 'listing',
    listingComplete: true,
    cache: { ttlMs: 30_000, cacheScope: 'private', relistAfterMs: 30_000 },
    liveChannel: true,
    listingInProgress: null,
    skills,
    problems: [],
  };
}

describe('skills.json', () => {
  it('5,000 skills of one name: each names at most 20 others and how many more; size linear in the skills', () => {
    const many = Array.from({ length: 5_000 }, (_, i) => skill('x', `team-${i}/x`));
    const text = renderSkillsJson([catalog('a', many)]);
    const document = JSON.parse(text);
    const first = document.servers[0].skills[0];
    expect(first.collidesWith).toHaveLength(21);
    expect(first.collidesWith[20]).toBe('... and 4979 more');
    // Roughly 2 KB a skill, not 5,000 names a skill.
    expect(text.length).toBeLessThan(5_000 * 3_000);
  });

  it('shows the held entry per skill: ok, rejected with why, changed with when, the set digest and rules broken', () => {
    const document = JSON.parse(
      renderSkillsJson([
        catalog('a', [
          skill('fine', 'fine'),
          skill('bad', 'bad', { rejected: 'digest mismatch: expected sha256:aa, got sha256:bb' }),
          skill('moved', 'moved', { changedAt: '2026-12-01T10:00:00.000Z' }),
          skill('long', 'long', { breaks: 'description must be at most 1024 characters' }),
        ]),
      ]),
    );
    const byName = Object.fromEntries(document.servers[0].skills.map((entry: { name: string }) => [entry.name, entry]));
    expect(byName.fine).toMatchObject({ state: 'ok', resourcesDigest: `sha256:${'1'.repeat(64)}` });
    expect(byName.bad).toMatchObject({ state: 'rejected', rejected: 'digest mismatch: expected sha256:aa, got sha256:bb' });
    expect(byName.moved).toMatchObject({ state: 'changed', changedAt: '2026-12-01T10:00:00.000Z' });
    expect(byName.long).toMatchObject({ state: 'ok', breaks: 'description must be at most 1024 characters' });
    expect(document.servers[0]).toMatchObject({ protocolVersion: '2026-07-28', liveChannel: true, cache: { ttlMs: 30_000, cacheScope: 'private' } });
  });

  it('a server string with line separators or control characters cannot start a line of its own', () => {
    const text = renderSkillsJson([catalog('a', [skill('x', 'x', { description: 'one\nline\u2028two\u2029three\u0007' })])]);
    expect(text.split('\n').some((line) => /^\s*two|^\s*three/.test(line))).toBe(false);
    expect(text).not.toMatch(/[\u2028\u2029\u0007]/);
    expect(JSON.parse(text).servers[0].skills[0].description).toBe('one\nline\u2028two\u2029three\u0007');
  });
});
