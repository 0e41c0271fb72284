// Issue 22, item 5: the cache root as a whole. Many mount subtrees in one temp root: those whose
// mountpoint is gone go after 7 days unused, the root keeps to its bound by removing the least
// recently used subtrees first, a subtree whose daemon runs is never touched, and
// `skills-mount cache status` shows every subtree with its mountpoint, size, last use and state.
import { readdir, rm, utimes, writeFile, mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DiskCache, listSubtrees, mountKey } from '../../src/cache/disk-cache.js';
import { runCacheCommand } from '../../src/cli/cache-command.js';
import { sha256Digest } from '../../src/format/digest.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('disk-cache-root-');
const opened: DiskCache[] = [];
afterEach(async () => {
  for (const cache of opened.splice(0)) await cache.close();
  await temps.removeAll();
});

const DAY_MS = 24 * 60 * 60 * 1000;

interface Root {
  base: string;
  root: string;
  lines: string[];
  /** Opens (and keeps open) the cache of `mountpoint`. */
  open(mountpoint: string, options?: { limitBytes?: number; rootLimitBytes?: number }): Promise<DiskCache>;
  /** A subtree for `name` holding `bytes` bytes in one file, closed again, last used `daysAgo` days ago; its mountpoint exists unless `gone`. */
  subtree(name: string, options: { bytes: number; daysAgo: number; gone?: boolean }): Promise<{ key: string; mountpoint: string }>;
  /** Ages the subtrees made so far and removes their mountpoints where asked. */
  settle(): Promise<void>;
}

async function makeRoot(): Promise<Root> {
  const base = await temps.make();
  const root = path.join(base, 'cache', 'skills-mount');
  const lines: string[] = [];
  const settle: Array<() => Promise<void>> = [];
  const open = async (mountpoint: string, options: { limitBytes?: number; rootLimitBytes?: number } = {}) => {
    await mkdir(mountpoint, { recursive: true });
    const cache = await DiskCache.open({
      root,
      mountpoint,
      limitBytes: options.limitBytes ?? 1_000_000,
      rootLimitBytes: options.rootLimitBytes ?? 1_000_000_000,
      log: (line) => lines.push(line),
      home: path.join(base, 'home'),
      env: {},
    });
    opened.push(cache);
    return cache;
  };
  return {
    base,
    root,
    lines,
    open,
    async subtree(name, { bytes, daysAgo, gone = false }) {
      const mountpoint = path.join(base, 'mnt', name);
      await mkdir(mountpoint, { recursive: true });
      const cache = await open(mountpoint);
      const body = Buffer.alloc(bytes, name);
      expect(await cache.server('alpha').put(`skill://${name}/SKILL.md`, sha256Digest(body), body)).toBe(true);
      await cache.close();
      opened.splice(opened.indexOf(cache), 1);
      // Aged (and its mountpoint removed) only once every fixture exists: each open tidies the root.
      settle.push(async () => {
        await age(cache.subtree, daysAgo);
        if (gone) await rm(mountpoint, { recursive: true });
      });
      return { key: path.basename(cache.subtree), mountpoint };
    },
    async settle() {
      for (const step of settle.splice(0)) await step();
    },
  };
}

/** Sets the subtree's last use (its record's mtime) to `daysAgo` days ago. */
async function age(subtree: string, daysAgo: number): Promise<void> {
  const when = new Date(Date.now() - daysAgo * DAY_MS);
  await utimes(path.join(subtree, '.mount.json'), when, when);
}

describe('subtrees of mountpoints that are gone', () => {
  it('go once unused for 7 days; recent ones, live ones and those whose mountpoint exists stay', async () => {
    const r = await makeRoot();
    const goneOld: string[] = [];
    for (let i = 0; i < 20; i++) goneOld.push((await r.subtree(`old-${i}`, { bytes: 100, daysAgo: 8 + i, gone: true })).key);
    const goneRecent: string[] = [];
    for (let i = 0; i < 10; i++) goneRecent.push((await r.subtree(`recent-${i}`, { bytes: 100, daysAgo: 6, gone: true })).key);
    const present = (await r.subtree('present', { bytes: 100, daysAgo: 30 })).key;
    // A daemon still runs on this one (a live pid holds its lock), though its mountpoint is gone and it is old.
    const live = await r.subtree('live', { bytes: 100, daysAgo: 30, gone: true });
    await r.settle();
    await writeFile(path.join(r.root, live.key, '.lock'), `${process.ppid}\n${hostname()}\n0123456789abcdef\n`);
    await age(path.join(r.root, live.key), 30);
    expect(await listSubtrees(r.root)).toHaveLength(32);
    r.lines.length = 0;

    const cache = await r.open(path.join(r.base, 'mnt', 'mine'));
    const left = await listSubtrees(r.root);
    expect(left.sort()).toEqual([...goneRecent, present, live.key, path.basename(cache.subtree)].sort());
    for (const key of goneOld) expect(left).not.toContain(key);
    // One line for all of them, with the count and the bytes; nothing half-removed stays behind.
    expect(r.lines).toEqual([expect.stringMatching(/^disk cache: removed 20 mount subtrees \(2\.0 KiB\) of .*: old-\d+-[0-9a-f]{12}, .* and 17 more \(their mountpoints are gone and they were unused for 7 days or more\)$/)]);
    expect((await readdir(r.root)).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('a subtree an older version wrote (no record) goes after 7 days unused, whatever its mountpoint', async () => {
    const r = await makeRoot();
    const { key } = await r.subtree('legacy', { bytes: 100, daysAgo: 0 });
    const fresh = await r.subtree('legacy-fresh', { bytes: 100, daysAgo: 0 });
    const subtree = path.join(r.root, key);
    await rm(path.join(subtree, '.mount.json'));
    const old = new Date(Date.now() - 9 * DAY_MS);
    await utimes(subtree, old, old);
    await rm(path.join(r.root, fresh.key, '.mount.json'));
    await r.open(path.join(r.base, 'mnt', 'mine'));
    const left = await listSubtrees(r.root);
    expect(left).not.toContain(key);
    expect(left).toContain(fresh.key);
  });
});

describe('the bound on the whole root', () => {
  it('removes the least recently used subtrees first until every subtree together fits, never a live one', async () => {
    const r = await makeRoot();
    const keys: string[] = [];
    // 12 subtrees of 100 bytes, each used a day before the next; all mountpoints exist.
    for (let i = 0; i < 12; i++) keys.push((await r.subtree(`m-${String(i).padStart(2, '0')}`, { bytes: 100, daysAgo: 12 - i })).key);
    await r.settle();
    // The least recently used of all is in use by a running daemon: it stays.
    await writeFile(path.join(r.root, keys[0]!, '.lock'), `${process.ppid}\n${hostname()}\n0123456789abcdef\n`);
    await age(path.join(r.root, keys[0]!), 12);
    r.lines.length = 0;

    // Bound 600: this mount may grow to 100, so the others keep 500: the live one and the 4 most recent.
    const cache = await r.open(path.join(r.base, 'mnt', 'mine'), { limitBytes: 100, rootLimitBytes: 600 });
    expect((await listSubtrees(r.root)).sort()).toEqual([keys[0]!, ...keys.slice(8), path.basename(cache.subtree)].sort());
    expect(r.lines).toEqual([expect.stringMatching(/^disk cache: removed 7 mount subtrees \(700 B\) .*\(least recently used first, to keep the cache root within 600 B\)$/)]);
    expect(cache.limitBytes).toBe(100);
  });

  it('this mount keeps less when running daemons fill the root, and says so', async () => {
    const r = await makeRoot();
    const busy = await r.subtree('busy', { bytes: 400, daysAgo: 1 });
    await r.settle();
    await writeFile(path.join(r.root, busy.key, '.lock'), `${process.ppid}\n${hostname()}\n0123456789abcdef\n`);
    r.lines.length = 0;
    const cache = await r.open(path.join(r.base, 'mnt', 'mine'), { limitBytes: 300, rootLimitBytes: 500 });
    expect(cache.limitBytes).toBe(100);
    expect(r.lines).toEqual([expect.stringMatching(/^disk cache: this mount keeps at most 100 B \(the cache root's bound 500 B, less 400 B in other mounts' subtrees, 400 B of it in use by running daemons\)$/)]);
    const body = Buffer.alloc(150, 'x');
    expect(await cache.server('alpha').put('skill://x/SKILL.md', sha256Digest(body), body)).toBe(false);
    expect(await listSubtrees(r.root)).toContain(busy.key);
  });

  it('a daemon starting on a subtree that another is removing waits for the removal, then starts fresh', async () => {
    const r = await makeRoot();
    const mountpoint = path.join(r.base, 'mnt', 'contended');
    const { key } = await r.subtree('contended', { bytes: 100, daysAgo: 0 });
    // The lock a removal takes: a live pid (ours), marked "prune".
    const lock = path.join(r.root, key, '.lock');
    await writeFile(lock, `${process.pid}\n${hostname()}\n0123456789abcdef\nprune\n`);
    const released = new Promise<void>((resolve) => setTimeout(() => void rm(lock).then(resolve), 300));
    const cache = await r.open(mountpoint);
    await released;
    expect(path.basename(cache.subtree)).toBe(key);
    expect(cache.totalBytes).toBe(100);
  });
});

describe('skills-mount cache status', () => {
  it('shows every subtree: name, mountpoint (gone or not), size, last use, running or not', async () => {
    const r = await makeRoot();
    const gone = await r.subtree('gone', { bytes: 100, daysAgo: 3, gone: true });
    const here = await r.subtree('here', { bytes: 250, daysAgo: 1 });
    await r.settle();
    const mine = path.join(r.base, 'mnt', 'mine');
    const cache = await r.open(mine);
    const { text, exitCode } = await runCacheCommand({ action: 'status', label: undefined, cacheDir: r.root, configPath: undefined, json: false });
    expect(exitCode).toBe(0);
    expect(text).toContain(`disk cache ${r.root}: 3 mounts, 350 B`);
    expect(text).toMatch(new RegExp(`  ${gone.key}  ${escape(gone.mountpoint)} \\(gone\\)\\n    1 files, 100 B; last used \\S+Z \\(3 days ago\\); not running\\n`));
    expect(text).toMatch(new RegExp(`  ${here.key}  ${escape(here.mountpoint)}\\n    1 files, 250 B; last used \\S+Z \\(24 h ago\\); not running\\n`));
    expect(text).toMatch(new RegExp(`  ${path.basename(cache.subtree)}  ${escape(mine)}\\n    0 files, 0 B; last used \\S+Z \\(0 min ago\\); running \\(pid ${process.pid}\\)\\n`));

    const json = JSON.parse((await runCacheCommand({ action: 'status', label: undefined, cacheDir: r.root, configPath: undefined, json: true })).text) as {
      subtrees: Array<{ key: string; mountpoint: string; mountpointExists: boolean; bytes: number; lastUsedAt: string; lockHolderPid: number | undefined }>;
    };
    const byKey = new Map(json.subtrees.map((subtree) => [subtree.key, subtree]));
    expect(byKey.get(gone.key)).toMatchObject({ mountpoint: gone.mountpoint, mountpointExists: false, bytes: 100 });
    expect(byKey.get(mountKey(mine))).toMatchObject({ mountpoint: mine, mountpointExists: true, bytes: 0, lockHolderPid: process.pid });
    expect(Date.now() - Date.parse(byKey.get(gone.key)!.lastUsedAt)).toBeGreaterThan(3 * DAY_MS - 60_000);
  });

  it('cache prune removes the subtrees of mountpoints gone for 7 days, and leaves the running one', async () => {
    const r = await makeRoot();
    const gone = await r.subtree('gone', { bytes: 100, daysAgo: 10, gone: true });
    const recent = await r.subtree('recent', { bytes: 100, daysAgo: 1, gone: true });
    await r.settle();
    const configPath = path.join(r.base, 'config.json');
    await writeFile(configPath, JSON.stringify({ mcpServers: { alpha: { command: 'true' } } }));
    const { text } = await runCacheCommand({ action: 'prune', label: undefined, cacheDir: r.root, configPath, json: false });
    expect(text).toMatch(/disk cache: removed 1 mount subtree \(100 B\) of .*: gone-[0-9a-f]{12} \(their mountpoints are gone/);
    expect(await listSubtrees(r.root)).toEqual([recent.key]);
    expect(await listSubtrees(r.root)).not.toContain(gone.key);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
