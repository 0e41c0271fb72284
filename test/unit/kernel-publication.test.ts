// The documents show a change only once the kernel has been told of it: skills.json renders the
// new digest after the edge's "told" promise settles, never before (else, for the milliseconds
// the invalidations take, skills.json could name a version the next open does not get yet).
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { KernelPublication } from '../../src/fs/kernel-publication.js';
import { SkillsFilesystem } from '../../src/fs/skills-filesystem.js';
import { MemorySkillSource, sha256, skillMarkdown } from '../support/memory-skill-source.js';

async function skillsJson(filesystem: SkillsFilesystem): Promise<string> {
  const handle = await filesystem.open('/skills.json');
  try {
    return Buffer.from(filesystem.read(handle, 0, filesystem.fgetattr(handle).sizeBytes)).toString('utf8');
  } finally {
    filesystem.release(handle);
  }
}

describe('documents and the kernel', () => {
  it('skills.json names a new version only after the edge says the kernel was told', async () => {
    const source = new MemorySkillSource();
    const before = skillMarkdown('one');
    source.addSkill('one', { 'SKILL.md': before });
    const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => undefined, cache: new ContentCache(1 << 20), hideDynamic: false });
    await catalog.refresh();
    const filesystem = new SkillsFilesystem([catalog], { skillsJsonTtlMs: 0 });
    // An edge that tells a kernel: its promise settles when the test says.
    let tell: () => void = () => undefined;
    const reported: string[] = [];
    filesystem.onChange((prefix) => {
      reported.push(prefix);
      return new Promise<void>((resolve) => (tell = resolve));
    });
    expect(await skillsJson(filesystem)).toContain(sha256(before));

    const after = `${before}\nA new paragraph.\n`;
    source.changeFile('skill://one/SKILL.md', after);
    await catalog.refresh();
    expect(reported).toEqual(['/mem']);
    let rendered: string | undefined;
    const reading = skillsJson(filesystem).then((text) => (rendered = text));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(rendered).toBeUndefined();
    tell();
    await reading;
    expect(rendered).toContain(sha256(after));
    expect(rendered).not.toContain(sha256(before));
  });

  it('waits no longer than its bound for a kernel that is never told', async () => {
    const publication = new KernelPublication();
    publication.track(new Promise<void>(() => undefined));
    const startedMs = performance.now();
    await publication.settled(150);
    expect(performance.now() - startedMs).toBeGreaterThanOrEqual(140);
    expect(performance.now() - startedMs).toBeLessThan(1_000);
  });

  it('does not wait when no edge tells a kernel (the libfuse 2 backend, a snapshot)', async () => {
    const publication = new KernelPublication();
    publication.track(undefined);
    const startedMs = performance.now();
    await publication.settled();
    expect(performance.now() - startedMs).toBeLessThan(50);
  });
});
