// The catalog against an in-memory SkillSource: when it re-lists, and what a failed
// listing leaves in place.
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { UnavailableError } from '../../src/errors.js';
import type { SkillEntry } from '../../src/mcp/protocol.js';
import type { Listing, SkillSource, SourceEvent, SourceFeatures } from '../../src/mcp/skill-source.js';

const digest = `sha256:${'0'.repeat(64)}`;
const entry = (name: string): SkillEntry => ({
  uri: `skill://${name}/SKILL.md`,
  frontmatter: { name, description: name },
  resources: [{ uri: `skill://${name}/SKILL.md`, digest, size: 1 }],
});

class FakeSource implements SkillSource {
  readonly label = 'fake';
  listings = 0;
  skills: SkillEntry[] = [entry('one')];
  failListing = false;
  constructor(private readonly announced: Partial<SourceFeatures> = {}) {}
  features(): SourceFeatures {
    return { directoryRead: false, subscribe: false, listChanged: false, ...this.announced };
  }
  connection() {
    return { status: 'connected' as const };
  }
  onEvent(_listener: (event: SourceEvent) => void): void {}
  async listSkills(): Promise<Listing<SkillEntry>> {
    this.listings += 1;
    if (this.failListing) throw new UnavailableError('fake: skills/list: no answer');
    return { items: [...this.skills], problems: [], complete: true };
  }
  getSkill(): Promise<SkillEntry> {
    throw new Error('not used');
  }
  readIndex(): never {
    throw new Error('not used');
  }
  readResource(): never {
    throw new Error('not used');
  }
  readDirectory(): never {
    throw new Error('not used');
  }
  async subscribe(): Promise<void> {}
}

function catalogOf(source: FakeSource) {
  const clock = { nowMs: 0 };
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => undefined, cache: new ContentCache(1024), hideDynamic: false, now: () => clock.nowMs });
  return { catalog, clock };
}

describe('catalog refresh', () => {
  it('re-lists after the listing TTL, on the next operation', async () => {
    const source = new FakeSource();
    const { catalog, clock } = catalogOf(source);
    await catalog.refresh();
    clock.nowMs += DEFAULT_CATALOG_TIMINGS.listingTtlMs - 1;
    await catalog.list('');
    expect(source.listings).toBe(1);
    clock.nowMs += 2;
    source.skills = [entry('one'), entry('two')];
    await catalog.list('');
    // The stale listing was refreshed in the background; let it finish.
    await new Promise((resolve) => setImmediate(resolve));
    expect(source.listings).toBe(2);
    expect((await catalog.list('')).sort()).toEqual(['one', 'two']);
  });

  it('a server that announces list changes is re-listed ten times less often', async () => {
    const source = new FakeSource({ listChanged: true });
    const { catalog, clock } = catalogOf(source);
    await catalog.refresh();
    clock.nowMs += DEFAULT_CATALOG_TIMINGS.listingTtlMs * 5;
    await catalog.list('');
    expect(source.listings).toBe(1);
    clock.nowMs += DEFAULT_CATALOG_TIMINGS.listingTtlMs * 6;
    await catalog.list('');
    expect(source.listings).toBe(2);
  });

  it('a failed listing keeps what was known, and says why', async () => {
    const source = new FakeSource();
    const { catalog } = catalogOf(source);
    await catalog.refresh();
    source.failListing = true;
    await catalog.refresh();
    expect(await catalog.list('')).toEqual(['one']);
    expect(catalog.summary().problems.join('\n')).toMatch(/discovery failed: fake: skills\/list: no answer/);
  });
});
