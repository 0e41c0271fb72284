// Issue 22, item 14 (the disk cache's part): a cache folder that cannot be written is named as
// such, with the two ways out (--cache-dir, --no-disk-cache), as a ConfigError: the daemon exits 2
// before mounting, as it does for every other unusable cache. No read-only mount is needed: /proc
// refuses new folders (answering ENOENT for a folder that exists) and so does /sys (EPERM), for root too.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DiskCache, defaultCacheRoot } from '../../src/cache/disk-cache.js';
import { ConfigError } from '../../src/errors.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('disk-cache-ro-');
afterEach(() => temps.removeAll());

async function openAt(root: string): Promise<unknown> {
  const base = await temps.make();
  return DiskCache.open({ root, mountpoint: path.join(base, 'mnt'), limitBytes: 1000, log: () => {}, home: path.join(base, 'home'), env: {} }).then(
    async (cache) => {
      await cache.close();
      return cache;
    },
    (error: unknown) => error,
  );
}

describe('a cache folder that cannot be written', () => {
  it.runIf(existsSync('/proc/self'))('XDG_CACHE_HOME=/proc/self: says the folder is not writable, names it, --cache-dir and --no-disk-cache', async () => {
    const root = defaultCacheRoot({ XDG_CACHE_HOME: '/proc/self' }, '/nonexistent-home');
    const error = await openAt(root);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      'disk cache: cannot create /proc/self/skills-mount: the cache folder /proc/self is read-only or not writable by this user (ENOENT); ' +
        'choose a writable one with --cache-dir DIR, or run without a disk cache with --no-disk-cache',
    );
  }, 10_000);

  it.runIf(existsSync('/sys/kernel'))('a folder below one that refuses (EPERM) is named at the folder that refused', async () => {
    const error = await openAt('/sys/kernel/skills-mount-test/cache/skills-mount');
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      /^disk cache: cannot create \/sys\/kernel\/skills-mount-test\/cache\/skills-mount: the cache folder \/sys\/kernel is read-only or not writable by this user \((EPERM|EACCES|EROFS)\); choose a writable one with --cache-dir DIR, or run without a disk cache with --no-disk-cache$/,
    );
  }, 10_000);
});
