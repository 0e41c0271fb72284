// Issue 22, item 10: the cache root is held open from the moment it was checked. Swapping it
// (moved away, a symbolic link to a skill-discovery folder in its place) while the cache is open
// must not redirect a single byte: the next write lands nowhere outside the original root, and
// one line says why writing stopped. The same for the mount's own subtree and a label's directory.
import { mkdir, readdir, rename, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DiskCache } from '../../src/cache/disk-cache.js';
import { sha256Digest } from '../../src/format/digest.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('disk-cache-swap-');
const opened: DiskCache[] = [];
afterEach(async () => {
  for (const cache of opened.splice(0)) await cache.close();
  await temps.removeAll();
});

async function setup() {
  const base = await temps.make();
  const home = path.join(base, 'home');
  const root = path.join(home, '.cache', 'skills-mount');
  const mountpoint = path.join(base, 'mnt', 'mcp-skills');
  // The harness's discovery folder, as a user has it: present, holding one skill of their own.
  const discovery = path.join(home, '.claude', 'skills');
  await mkdir(path.join(discovery, 'my-own-skill'), { recursive: true });
  const lines: string[] = [];
  const cache = await DiskCache.open({ root, mountpoint, limitBytes: 1_000_000, log: (line) => lines.push(line), home, env: {} });
  opened.push(cache);
  return { base, home, root, discovery, cache, lines };
}

const body = (text: string) => Buffer.from(text, 'utf8');
const put = (cache: DiskCache, name: string) => cache.server('alpha').put(`skill://${name}/SKILL.md`, sha256Digest(body(name)), body(name));

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    out.push(full);
    if (entry.isDirectory()) out.push(...(await walk(full)));
  }
  return out;
}

describe('a swapped cache root', () => {
  it('moved away and replaced by a link to ~/.claude/skills: the next write lands nowhere, with one line', async () => {
    const s = await setup();
    expect(await put(s.cache, 'before')).toBe(true);
    const moved = `${s.root}.moved`;
    await rename(s.root, moved);
    await symlink(s.discovery, s.root);
    const movedBefore = await walk(moved);

    expect(await put(s.cache, 'after')).toBe(false);
    expect(await s.cache.server('alpha').saveListing({ skills: [] })).toBe(false);
    expect(await put(s.cache, 'later')).toBe(false);

    // Nothing reached the discovery folder, and nothing new the moved root either.
    expect(await walk(s.discovery)).toEqual([path.join(s.discovery, 'my-own-skill')]);
    expect(await walk(moved)).toEqual(movedBefore);
    expect(s.lines).toEqual([
      `disk cache: ${s.root} no longer names the cache root opened at start (moved away, or replaced by a link or another directory); nothing more is written to the disk cache until skills-mount restarts, and nothing was written anywhere else`,
    ]);
    // What was cached is still read (from the directory that was checked), hashed again.
    expect((await s.cache.server('alpha').get('skill://before/SKILL.md', sha256Digest(body('before'))))?.toString()).toBe('before');
    // Closing writes no record through the link either.
    await s.cache.close();
    opened.splice(0);
    expect(await walk(s.discovery)).toEqual([path.join(s.discovery, 'my-own-skill')]);
  });

  it("the mount's subtree or a label's directory swapped for a link: writes stay in the directories that were checked", async () => {
    const s = await setup();
    expect(await put(s.cache, 'first')).toBe(true);
    const subtree = s.cache.subtree;
    // The label's directory first: alpha -> the discovery folder.
    const alpha = path.join(subtree, 'alpha');
    await rename(alpha, `${alpha}.moved`);
    await symlink(s.discovery, alpha);
    expect(await put(s.cache, 'second')).toBe(true);
    expect(await s.cache.server('alpha').saveListing({ skills: [] })).toBe(true);
    expect(await walk(s.discovery)).toEqual([path.join(s.discovery, 'my-own-skill')]);
    expect((await walk(`${alpha}.moved`)).filter((file) => /[0-9a-f]{64}$/.test(file))).toHaveLength(2);
    expect(await walk(`${alpha}.moved`)).toContain(path.join(`${alpha}.moved`, 'listing.json'));

    // Then the whole subtree.
    await rename(subtree, `${subtree}.moved`);
    await symlink(s.discovery, subtree);
    expect(await put(s.cache, 'third')).toBe(true);
    expect(await walk(s.discovery)).toEqual([path.join(s.discovery, 'my-own-skill')]);
    expect((await walk(`${subtree}.moved`)).filter((file) => /[0-9a-f]{64}$/.test(file))).toHaveLength(3);
    expect((await s.cache.server('alpha').get('skill://third/SKILL.md', sha256Digest(body('third'))))?.toString()).toBe('third');
    expect(s.lines).toEqual([]);
  });
});
