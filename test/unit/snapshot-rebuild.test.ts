// A change notified while a snapshot is built: built again only when the view really changed
// (a listing refreshed after its ttlMs notifies too, and a build of 10,000 skills outlasts many
// ttls), and then only what changed is fetched again: the rest is linked from the first attempt.
// The content cache holds nothing here, as 64 MiB holds little of a large catalog. And files are
// fetched skill by skill, so that a SKILL.md is still cached when its files need it verified.
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import type { FilesystemCore } from '../../src/fs/filesystem-core.js';
import { SkillsFilesystem } from '../../src/fs/skills-filesystem.js';
import { uriForPath } from '../../src/server/skill-uri.js';
import { nodeSnapshotFs } from '../../src/snapshot/snapshot-fs.js';
import { SnapshotStore, snapshotsDirOf } from '../../src/snapshot/snapshot-store.js';
import { verifySnapshot } from '../../src/snapshot/snapshot-verify.js';
import { writeSnapshot } from '../../src/snapshot/snapshot-writer.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';
import { makeTempDir } from '../support/temp-dir.js';

const made: string[] = [];
const stores: SnapshotStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of made.splice(0)) await nodeSnapshotFs.removeTree(dir);
});

const FILES = 7;
/** The files that are not a SKILL.md: the catalog reads a SKILL.md again before each of its skill's files when no cache holds it. */
const SUPPORTING = ['guide/refs/tone.md', 'guide/inner/ref.md', 'tools/scripts/run.sh', 'tools/data.bin'].map(uriForPath);

function source(): MemorySkillSource {
  const served = new MemorySkillSource('docs');
  served.addSkill('guide', { 'SKILL.md': skillMarkdown('guide'), 'refs/tone.md': 'Be brief.\n' });
  served.addSkill('guide/inner', { 'SKILL.md': skillMarkdown('inner'), 'ref.md': 'inner\n' });
  served.addSkill('tools', { 'SKILL.md': skillMarkdown('tools'), 'scripts/run.sh': '#!/bin/sh\necho hi\n', 'data.bin': Buffer.from([0, 1, 2, 255]) });
  return served;
}

/** The core, with `during` run (once) when the snapshot opens `whenOpening`: something happening while it is built. */
function coreWith(core: SkillsFilesystem, whenOpening: string, during: () => Promise<void>): FilesystemCore {
  let done = false;
  return new Proxy(core, {
    get(target, name) {
      if (name === 'open') {
        return async (opened: string) => {
          if (!done && opened === whenOpening) {
            done = true;
            await during();
          }
          return target.open(opened);
        };
      }
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function setUp(served: MemorySkillSource, cacheBytes = 1) {
  const dir = await makeTempDir('snapshot-rebuild-');
  made.push(dir);
  const dest = path.join(dir, 'skills');
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);
  const catalog = new ServerCatalog(served, { ...DEFAULT_CATALOG_TIMINGS, log, cache: new ContentCache(cacheBytes), durable: undefined, hideDynamic: true });
  await catalog.refresh();
  const core = new SkillsFilesystem([catalog], { log });
  let changes = 0;
  core.onChange(() => {
    changes += 1;
  });
  const store = await SnapshotStore.open({ dest, log });
  stores.push(store);
  return { dest, logs, catalog, core, store, changes: () => changes };
}

describe('a change notified while a snapshot is built', () => {
  it('that leaves the view as it was built (an entry changed and changed back) does not build it again: one resources/read per file', async () => {
    const served = source();
    const { dest, logs, catalog, core, store, changes } = await setUp(served);
    const before = changes();
    // Two real changes, each notified (a re-listing that finds the same entries notifies nothing).
    const toneUri = uriForPath('guide/refs/tone.md');
    const changeAndBack = async () => {
      served.changeFile(toneUri, 'Be long.\n');
      await catalog.refresh();
      served.changeFile(toneUri, 'Be brief.\n');
      await catalog.refresh();
    };
    const result = await writeSnapshot({ core: coreWith(core, '/docs/tools/scripts/run.sh', changeAndBack), store, view: 'mount', includeDynamic: false, log: (line) => logs.push(line), changes, concurrency: 1 });
    expect(changes()).toBeGreaterThan(before);
    expect(result).toMatchObject({ outcome: 'published', fetched: FILES, linked: 0, failures: [] });
    for (const uri of SUPPORTING) expect(served.count('resources/read', uri), uri).toBe(1);
    expect(logs.filter((line) => line.includes('building again'))).toEqual([]);
    expect((await verifySnapshot(dest)).problems).toEqual([]);
    // Nothing left beside the published snapshot: no build of an attempt.
    expect((await readdir(snapshotsDirOf(dest))).filter((name) => name.startsWith('.build-'))).toEqual([]);
  });

  it('that changed a file builds it again, fetching that file only: the others are linked from the first attempt', async () => {
    const served = source();
    const { dest, logs, catalog, core, store, changes } = await setUp(served);
    // tone.md was fetched already when run.sh, the last file, is opened.
    const changeTone = async () => {
      served.changeFile(uriForPath('guide/refs/tone.md'), 'Be briefer.\n');
      await catalog.refresh();
    };
    const result = await writeSnapshot({ core: coreWith(core, '/docs/tools/scripts/run.sh', changeTone), store, view: 'mount', includeDynamic: false, log: (line) => logs.push(line), changes, concurrency: 1 });
    expect(logs.filter((line) => line.includes('building again'))).toHaveLength(1);
    expect(result).toMatchObject({ outcome: 'published', fetched: FILES, linked: 0, failures: [] });
    for (const uri of SUPPORTING) expect(served.count('resources/read', uri), uri).toBe(uri === uriForPath('guide/refs/tone.md') ? 2 : 1);
    expect(await readFile(path.join(dest, 'docs/guide/refs/tone.md'), 'utf8')).toBe('Be briefer.\n');
    expect((await verifySnapshot(dest)).problems).toEqual([]);
    expect((await readdir(snapshotsDirOf(dest))).filter((name) => name.startsWith('.build-'))).toEqual([]);
  });
});

describe('the order files are fetched in', () => {
  it('is skill by skill: with a cache that holds a few files, each SKILL.md is read once, not again before each of its files', async () => {
    const served = new MemorySkillSource('docs');
    const skills = Array.from({ length: 30 }, (_, i) => `group/skill-${String(i).padStart(2, '0')}`);
    for (const skill of skills) served.addSkill(skill, { 'SKILL.md': skillMarkdown(skill.slice(6)), 'notes/a.md': 'a'.repeat(100), 'notes/b.md': 'b'.repeat(100) });
    // About ten files' worth: the 30 SKILL.md together do not fit.
    const { dest, logs, core, store, changes } = await setUp(served, 1_000);
    const result = await writeSnapshot({ core, store, view: 'mount', includeDynamic: false, log: (line) => logs.push(line), changes });
    expect(result).toMatchObject({ outcome: 'published', fetched: 90, failures: [] });
    for (const skill of skills) expect(served.count('resources/read', uriForPath(`${skill}/SKILL.md`)), skill).toBe(1);
    expect(served.count('resources/read')).toBe(90);
    expect((await verifySnapshot(dest)).problems).toEqual([]);
  });
});
