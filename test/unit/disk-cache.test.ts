// The on-disk verified content store: what it hands back was hashed again just now, anything
// tampered with is discarded and logged, writes are atomic, the size bound holds in LRU order,
// and one daemon per mount subtree holds it.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, chown, lstat, mkdir, readdir, readFile, rm, stat, symlink, truncate, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CacheLockedError, cacheFileName, defaultCacheRoot, DiskCache, mountKey, readCacheStatus } from '../../src/cache/disk-cache.js';
import { ConfigError } from '../../src/errors.js';
import { sha256Digest } from '../../src/format/digest.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('disk-cache-');
const opened: DiskCache[] = [];
const tempDir = () => temps.make();

afterEach(async () => {
  for (const cache of opened.splice(0)) await cache.close();
  await temps.removeAll();
});

interface Setup {
  root: string;
  mountpoint: string;
  home: string;
  lines: string[];
  open(overrides?: { limitBytes?: number; mountpoint?: string }): Promise<DiskCache>;
}

async function setup(limitBytes = 1_000_000): Promise<Setup> {
  const base = await tempDir();
  const root = path.join(base, 'cache/skills-mount');
  const mountpoint = path.join(base, 'mnt/mcp-skills');
  const home = path.join(base, 'home');
  const lines: string[] = [];
  return {
    root,
    mountpoint,
    home,
    lines,
    async open(overrides = {}) {
      const cache = await DiskCache.open({ root, mountpoint: overrides.mountpoint ?? mountpoint, limitBytes: overrides.limitBytes ?? limitBytes, log: (line) => lines.push(line), home, env: {} });
      opened.push(cache);
      return cache;
    },
  };
}

const bytesOf = (text: string) => Buffer.from(text, 'utf8');
const digestOf = (text: string) => sha256Digest(bytesOf(text));
const URI = 'skill://alpha/SKILL.md';
const TEXT = '---\nname: alpha\n---\nhello\n';

function fileOf(cache: DiskCache, label: string, uri: string, digest: string): string {
  return path.join(cache.subtree, label, cacheFileName(uri, digest));
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    out.push(full);
    if (entry.isDirectory()) out.push(...(await walk(full)));
  }
  return out;
}

async function closeAndForget(cache: DiskCache): Promise<void> {
  await cache.close();
  opened.splice(opened.indexOf(cache), 1);
}

describe('cache location', () => {
  it('defaults to $XDG_CACHE_HOME/skills-mount, else ~/.cache/skills-mount', () => {
    expect(defaultCacheRoot({ XDG_CACHE_HOME: '/var/cache/me' }, '/home/me')).toBe('/var/cache/me/skills-mount');
    expect(defaultCacheRoot({}, '/home/me')).toBe('/home/me/.cache/skills-mount');
    // XDG: a relative value is invalid and ignored.
    expect(defaultCacheRoot({ XDG_CACHE_HOME: 'cache' }, '/home/me')).toBe('/home/me/.cache/skills-mount');
  });

  it('names a mount subtree by its last segment and a hash of the whole path', () => {
    const key = mountKey('/home/me/mcp-skills');
    expect(key).toMatch(/^mcp-skills-[0-9a-f]{12}$/);
    expect(mountKey('/home/me/mcp-skills')).toBe(key);
    expect(mountKey('/home/you/mcp-skills')).not.toBe(key);
    expect(mountKey('/mnt/My Skills.d')).toMatch(/^my-skills-d-[0-9a-f]{12}$/);
    expect(mountKey('/')).toMatch(/^root-[0-9a-f]{12}$/);
  });

  it('creates its directories 0700 and its files 0600', async () => {
    const s = await setup();
    const cache = await s.open();
    expect(await cache.server('alpha').put(URI, digestOf(TEXT), bytesOf(TEXT))).toBe(true);
    expect(await cache.server('alpha').saveListing({ skills: [] })).toBe(true);
    const file = fileOf(cache, 'alpha', URI, digestOf(TEXT));
    for (const dir of [s.root, cache.subtree, path.join(cache.subtree, 'alpha'), path.dirname(path.dirname(file)), path.dirname(file)]) {
      expect((await stat(dir)).mode & 0o777, dir).toBe(0o700);
    }
    for (const f of [file, path.join(cache.subtree, 'alpha/listing.json'), cache.lockPath, path.join(cache.subtree, '.mount.json')]) {
      expect((await stat(f)).mode & 0o777, f).toBe(0o600);
    }
    expect(path.dirname(cache.subtree)).toBe(s.root);
    expect(path.basename(cache.subtree)).toMatch(/^mcp-skills-[0-9a-f]{12}$/);
  });

  it('tightens a root open to other users, and logs it', async () => {
    const s = await setup();
    await mkdir(s.root, { recursive: true });
    await chmod(s.root, 0o777);
    await s.open();
    expect((await stat(s.root)).mode & 0o777).toBe(0o700);
    expect(s.lines).toContain(`disk cache: ${s.root} had mode 0777, open to other users; changed to 0700`);
  });

  it('refuses a root that is a symlink', async () => {
    const s = await setup();
    const real = await tempDir();
    await mkdir(path.dirname(s.root), { recursive: true });
    await symlink(real, s.root);
    await expect(s.open()).rejects.toThrow(ConfigError);
    await expect(s.open()).rejects.toThrow(`disk cache: ${s.root} is a symbolic link; refusing to use it`);
  });

  it.runIf(process.getuid?.() === 0)('refuses a root owned by another user', async () => {
    const s = await setup();
    await mkdir(s.root, { recursive: true, mode: 0o700 });
    await chown(s.root, 12345, 12345);
    await expect(s.open()).rejects.toThrow(`disk cache: ${s.root} belongs to uid 12345, not to this user (uid 0)`);
  });

  it('refuses a root inside a skill-discovery folder, before creating anything there', async () => {
    const s = await setup();
    const root = path.join(s.home, '.claude/skills/cache');
    await expect(DiskCache.open({ root, mountpoint: s.mountpoint, limitBytes: 1000, log: () => {}, home: s.home, env: {} })).rejects.toThrow(
      'disk cache root: ~/.claude/skills/cache is inside ~/.claude/skills, a folder Claude Code',
    );
    await expect(lstat(path.join(s.home, '.claude'))).rejects.toThrow(/ENOENT/);
  });
});

describe('reads are verified again', () => {
  it('returns what was put, across a restart, and only for its digest', async () => {
    const s = await setup();
    let cache = await s.open();
    await cache.server('alpha').put(URI, digestOf(TEXT), bytesOf(TEXT));
    expect((await cache.server('alpha').get(URI, digestOf(TEXT)))?.toString()).toBe(TEXT);
    expect(await cache.server('alpha').get(URI, digestOf('other'))).toBeUndefined();
    expect(await cache.server('beta').get(URI, digestOf(TEXT))).toBeUndefined();
    await closeAndForget(cache);
    cache = await s.open();
    expect((await cache.server('alpha').get(URI, digestOf(TEXT)))?.toString()).toBe(TEXT);
    expect(s.lines).toEqual([]);
  });

  it('finds bytes stored under a binding only under that binding, across a restart', async () => {
    const s = await setup();
    let cache = await s.open();
    const alpha = cache.server('alpha');
    await alpha.put(URI, digestOf(TEXT), bytesOf(TEXT), 'frontmatter sha256:aa');
    expect((await alpha.get(URI, digestOf(TEXT), undefined, 'frontmatter sha256:aa'))?.toString()).toBe(TEXT);
    expect(await alpha.get(URI, digestOf(TEXT), undefined, 'frontmatter sha256:bb')).toBeUndefined();
    expect(await alpha.get(URI, digestOf(TEXT))).toBeUndefined();
    await closeAndForget(cache);
    cache = await s.open();
    expect(cache.server('alpha').copyPath(URI, digestOf(TEXT), 'frontmatter sha256:aa')).toBeDefined();
    expect(cache.server('alpha').copyPath(URI, digestOf(TEXT), 'frontmatter sha256:bb')).toBeUndefined();
    expect(cache.server('alpha').copyPath(URI, digestOf(TEXT))).toBeUndefined();
    expect(s.lines).toEqual([]);
  });

  it('discards a file with the same size and different bytes', async () => {
    const s = await setup();
    const cache = await s.open();
    const store = cache.server('alpha');
    await store.put(URI, digestOf(TEXT), bytesOf(TEXT));
    const file = fileOf(cache, 'alpha', URI, digestOf(TEXT));
    await writeFile(file, TEXT.replace('hello', 'HELLO'));
    expect(await store.get(URI, digestOf(TEXT))).toBeUndefined();
    expect(s.lines).toEqual([`[alpha] disk cache: ${URI}: content does not match its digest; discarded`]);
    await expect(lstat(file)).rejects.toThrow(/ENOENT/);
    // The caller fetches again and stores the good bytes; the next read hits.
    expect(await store.put(URI, digestOf(TEXT), bytesOf(TEXT))).toBe(true);
    expect((await store.get(URI, digestOf(TEXT)))?.toString()).toBe(TEXT);
  });

  it('discards a truncated file', async () => {
    const s = await setup();
    const cache = await s.open();
    await cache.server('alpha').put(URI, digestOf(TEXT), bytesOf(TEXT));
    const file = fileOf(cache, 'alpha', URI, digestOf(TEXT));
    await truncate(file, 5);
    expect(await cache.server('alpha').get(URI, digestOf(TEXT))).toBeUndefined();
    expect(s.lines).toEqual([`[alpha] disk cache: ${URI}: 5 bytes where ${TEXT.length} are expected (truncated or replaced); discarded`]);
    await expect(lstat(file)).rejects.toThrow(/ENOENT/);
  });

  it('discards a symlink even to the right bytes, and leaves its target alone', async () => {
    const s = await setup();
    const cache = await s.open();
    await cache.server('alpha').put(URI, digestOf(TEXT), bytesOf(TEXT));
    const file = fileOf(cache, 'alpha', URI, digestOf(TEXT));
    const outside = path.join(await tempDir(), 'planted');
    await writeFile(outside, TEXT);
    await rm(file);
    await symlink(outside, file);
    expect(await cache.server('alpha').get(URI, digestOf(TEXT))).toBeUndefined();
    expect(s.lines).toEqual([`[alpha] disk cache: ${URI}: a symbolic link, not a regular file; discarded`]);
    await expect(lstat(file)).rejects.toThrow(/ENOENT/);
    expect(await readFile(outside, 'utf8')).toBe(TEXT);
  });

  it('discards a directory or a FIFO in place of the file (without hanging on the FIFO)', async () => {
    const s = await setup();
    const cache = await s.open();
    const store = cache.server('alpha');
    await store.put(URI, digestOf(TEXT), bytesOf(TEXT));
    const file = fileOf(cache, 'alpha', URI, digestOf(TEXT));
    await rm(file);
    await mkdir(path.join(file, 'inner'), { recursive: true });
    expect(await store.get(URI, digestOf(TEXT))).toBeUndefined();
    expect(s.lines).toEqual([`[alpha] disk cache: ${URI}: a directory, not a regular file; discarded`]);
    await expect(lstat(file)).rejects.toThrow(/ENOENT/);

    // Stored again, then a FIFO in its place.
    expect(await store.put(URI, digestOf(TEXT), bytesOf(TEXT))).toBe(true);
    await rm(file);
    execFileSync('mkfifo', [file]);
    expect(await store.get(URI, digestOf(TEXT))).toBeUndefined();
    expect(s.lines[1]).toBe(`[alpha] disk cache: ${URI}: a FIFO, not a regular file; discarded`);
    await expect(lstat(file)).rejects.toThrow(/ENOENT/);
  });

  it('checks the size the caller expects', async () => {
    const s = await setup();
    const cache = await s.open();
    await cache.server('alpha').put(URI, digestOf(TEXT), bytesOf(TEXT));
    expect(await cache.server('alpha').get(URI, digestOf(TEXT), TEXT.length + 1)).toBeUndefined();
    expect(s.lines).toEqual([`[alpha] disk cache: ${URI}: ${TEXT.length} bytes where ${TEXT.length + 1} are expected (truncated or replaced); discarded`]);
  });

  it('discards, when the cache opens, a planted symlink under a file name', async () => {
    const s = await setup();
    let cache = await s.open();
    await cache.server('alpha').put(URI, digestOf(TEXT), bytesOf(TEXT));
    const file = fileOf(cache, 'alpha', URI, digestOf(TEXT));
    await closeAndForget(cache);
    await rm(file);
    await symlink('/etc/hostname', file);
    cache = await s.open();
    expect(s.lines).toEqual([`[alpha] disk cache: ${path.relative(path.join(cache.subtree, 'alpha'), file)}: a symbolic link, not a regular file; discarded`]);
    await expect(lstat(file)).rejects.toThrow(/ENOENT/);
    expect(cache.totalBytes).toBe(0);
  });
});

describe('writes', () => {
  it('are atomic: no temp file is left, and crash leftovers go on open', async () => {
    const s = await setup();
    let cache = await s.open();
    const store = cache.server('alpha');
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.put(`skill://alpha/f${i}`, digestOf(`body ${i}`), bytesOf(`body ${i}`))));
    await store.saveListing({ n: 1 });
    const names = (await walk(cache.subtree)).map((f) => path.basename(f));
    expect(names.filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    expect(cache.totalBytes).toBe(Array.from({ length: 20 }, (_, i) => `body ${i}`.length).reduce((a, b) => a + b));

    const bucket = path.dirname(fileOf(cache, 'alpha', 'skill://alpha/f0', digestOf('body 0')));
    await closeAndForget(cache);
    await writeFile(path.join(bucket, '.tmp-999-abcdef'), 'half a file');
    await writeFile(path.join(cache.subtree, 'alpha', '.tmp-999-012345'), '{"savedAt"');
    cache = await s.open();
    expect((await walk(cache.subtree)).filter((f) => path.basename(f).startsWith('.tmp-'))).toEqual([]);
  });

  it('refuses bytes that do not match the digest', async () => {
    const s = await setup();
    const cache = await s.open();
    expect(await cache.server('alpha').put(URI, digestOf(TEXT), bytesOf('not it'))).toBe(false);
    expect(s.lines).toEqual([`[alpha] disk cache: ${URI}: bytes do not match ${digestOf(TEXT)}; not stored`]);
    expect(cache.totalBytes).toBe(0);
    await expect(lstat(fileOf(cache, 'alpha', URI, digestOf(TEXT)))).rejects.toThrow(/ENOENT/);
  });

  it('never rewrites an existing key', async () => {
    const s = await setup();
    const cache = await s.open();
    await cache.server('alpha').put(URI, digestOf(TEXT), bytesOf(TEXT));
    const file = fileOf(cache, 'alpha', URI, digestOf(TEXT));
    const before = await stat(file);
    expect(await cache.server('alpha').put(URI, digestOf(TEXT), bytesOf(TEXT))).toBe(true);
    const after = await stat(file);
    expect(after.ino).toBe(before.ino);
    expect(cache.totalBytes).toBe(TEXT.length);
  });

  it('logs a failing disk once and never throws', async () => {
    const s = await setup();
    const cache = await s.open();
    const store = cache.server('alpha');
    // A file where the files/ directory belongs: every write fails with ENOTDIR.
    await mkdir(path.join(cache.subtree, 'alpha'), { recursive: true });
    await writeFile(path.join(cache.subtree, 'alpha/files'), 'in the way');
    expect(await store.put('skill://alpha/a', digestOf('a'), bytesOf('a'))).toBe(false);
    expect(await store.put('skill://alpha/b', digestOf('b'), bytesOf('b'))).toBe(false);
    expect(s.lines).toHaveLength(1);
    expect(s.lines[0]).toMatch(/^\[alpha\] disk cache: skill:\/\/alpha\/a: cannot write \(ENOTDIR.*\); not cached, and further ENOTDIR write errors are not logged until a write succeeds$/);
    expect(await store.get('skill://alpha/a', digestOf('a'))).toBeUndefined();
  });

  it('does not store a file bigger than the limit', async () => {
    const s = await setup(10);
    const cache = await s.open();
    expect(await cache.server('alpha').put(URI, digestOf('x'.repeat(11)), bytesOf('x'.repeat(11)))).toBe(false);
    expect(await cache.server('alpha').put(URI, digestOf('x'.repeat(10)), bytesOf('x'.repeat(10)))).toBe(true);
    expect(cache.totalBytes).toBe(10);
  });
});

describe('eviction', () => {
  const ten = (name: string) => name.padEnd(10, '.');

  it('removes the least recently used file, across labels, until the bound holds', async () => {
    const s = await setup(30);
    const cache = await s.open();
    await cache.server('alpha').put('u:a', digestOf(ten('a')), bytesOf(ten('a')));
    await cache.server('beta').put('u:b', digestOf(ten('b')), bytesOf(ten('b')));
    await cache.server('alpha').put('u:c', digestOf(ten('c')), bytesOf(ten('c')));
    expect(await cache.server('alpha').get('u:a', digestOf(ten('a')))).toBeDefined(); // a is now the most recent
    await cache.server('beta').put('u:d', digestOf(ten('d')), bytesOf(ten('d')));
    expect(await cache.server('beta').get('u:b', digestOf(ten('b')))).toBeUndefined();
    for (const [label, name] of [['alpha', 'a'], ['alpha', 'c'], ['beta', 'd']] as const) {
      expect(await cache.server(label).get(`u:${name}`, digestOf(ten(name))), name).toBeDefined();
    }
    expect(cache.totalBytes).toBe(30);
    await expect(lstat(fileOf(cache, 'beta', 'u:b', digestOf(ten('b'))))).rejects.toThrow(/ENOENT/);
  });

  it('keeps the bound through many writes, on disk as in the index', async () => {
    const s = await setup(100);
    const cache = await s.open();
    for (let i = 0; i < 60; i++) {
      const body = `file ${i} `.repeat((i % 5) + 1);
      await cache.server(i % 2 === 0 ? 'alpha' : 'beta').put(`u:${i}`, digestOf(body), bytesOf(body));
      expect(cache.totalBytes).toBeLessThanOrEqual(100);
    }
    const files = (await walk(cache.subtree)).filter((f) => /[0-9a-f]{64}$/.test(f));
    const onDisk = (await Promise.all(files.map((f) => stat(f)))).reduce((sum, st) => sum + st.size, 0);
    expect(onDisk).toBe(cache.totalBytes);
    expect(onDisk).toBeLessThanOrEqual(100);
  });

  it('remembers recency across a restart (mtimes), and applies a lower limit on open', async () => {
    const s = await setup(30);
    let cache = await s.open();
    const names = ['a', 'b', 'c'];
    for (const name of names) await cache.server('alpha').put(`u:${name}`, digestOf(ten(name)), bytesOf(ten(name)));
    // Written long ago, in order a, b, c; then a is read.
    for (const [i, name] of names.entries()) {
      const when = new Date(Date.UTC(2020, 0, 1 + i));
      await utimes(fileOf(cache, 'alpha', `u:${name}`, digestOf(ten(name))), when, when);
    }
    await closeAndForget(cache);
    cache = await s.open();
    expect(await cache.server('alpha').get('u:a', digestOf(ten('a')))).toBeDefined();
    await closeAndForget(cache);

    cache = await s.open({ limitBytes: 20 });
    expect(cache.totalBytes).toBe(20);
    expect(await cache.server('alpha').get('u:b', digestOf(ten('b')))).toBeUndefined();
    expect(await cache.server('alpha').get('u:a', digestOf(ten('a')))).toBeDefined();
    expect(await cache.server('alpha').get('u:c', digestOf(ten('c')))).toBeDefined();
  });
});

describe('the mount lock', () => {
  it('refuses a second open of the same mount, naming the lock file and the pid, and frees it on close', async () => {
    const s = await setup();
    const first = await s.open();
    const refusal = await s.open().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(CacheLockedError);
    expect((refusal as CacheLockedError).message).toContain(`this process (pid ${process.pid}`);
    expect((refusal as CacheLockedError).message).toContain(`holds the lock file ${first.lockPath}`);
    // pid, host, and the token only this holder's release matches (then the process beyond its pid: unit/lock-file).
    expect(await readFile(first.lockPath, 'utf8')).toMatch(new RegExp(`^${process.pid}\n${hostname()}\n[0-9a-f]{16}\n`));
    await closeAndForget(first);
    await expect(lstat(first.lockPath)).rejects.toThrow(/ENOENT/);
    await s.open();
  });

  it('refuses while another live process holds it', async () => {
    const s = await setup();
    const cache = await s.open();
    const lockPath = cache.lockPath;
    await closeAndForget(cache);
    await writeFile(lockPath, `${process.ppid}\n${hostname()}\n`);
    const refusal = await s.open().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(CacheLockedError);
    expect((refusal as CacheLockedError).holderPid).toBe(process.ppid);
    expect((refusal as CacheLockedError).message).toBe(
      `disk cache ${path.dirname(lockPath)} is in use: pid ${process.ppid} holds the lock file ${lockPath}; one skills-mount per mountpoint (if that process is not a skills-mount serving this mountpoint, remove the lock file)`,
    );
    // A lock from another host cannot be checked: held.
    await writeFile(lockPath, `1\nsome-other-host\n`);
    await expect(s.open()).rejects.toThrow(`pid 1 on host some-other-host holds the lock file ${lockPath}`);
  });

  it('takes over a stale lock (a pid that is not running), logged', async () => {
    const s = await setup();
    const cache = await s.open();
    const lockPath = cache.lockPath;
    await closeAndForget(cache);
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    expect(dead).toBeGreaterThan(0);
    await writeFile(lockPath, `${dead}\n${hostname()}\n`);
    await s.open();
    expect(s.lines).toEqual([`disk cache: took over the stale lock ${lockPath} (pid ${dead} is not running)`]);
    expect(await readFile(lockPath, 'utf8')).toMatch(new RegExp(`^${process.pid}\n${hostname()}\n[0-9a-f]{16}\n`));
  });

  it('takes over an old lock that names no process, but not a fresh one', async () => {
    const s = await setup();
    const cache = await s.open();
    const lockPath = cache.lockPath;
    await closeAndForget(cache);
    await writeFile(lockPath, '');
    await expect(s.open()).rejects.toThrow('a process still writing its pid holds the lock file');
    const old = new Date(Date.now() - 60_000);
    await utimes(lockPath, old, old);
    await s.open();
    expect(s.lines).toEqual([`disk cache: took over the stale lock ${lockPath} (it named no process)`]);
  });

  it('lets two mounts share a root, each with its own subtree and its own bound', async () => {
    const s = await setup(20);
    const one = await s.open();
    const other = await s.open({ mountpoint: path.join(path.dirname(s.mountpoint), 'work-skills') });
    expect(other.subtree).not.toBe(one.subtree);
    expect(path.dirname(other.subtree)).toBe(path.dirname(one.subtree));
    await one.server('alpha').put('u:1', digestOf('1'.repeat(20)), bytesOf('1'.repeat(20)));
    await other.server('alpha').put('u:2', digestOf('2'.repeat(20)), bytesOf('2'.repeat(20)));
    expect((await one.server('alpha').get('u:1', digestOf('1'.repeat(20))))?.toString()).toBe('1'.repeat(20));
    expect((await other.server('alpha').get('u:2', digestOf('2'.repeat(20))))?.toString()).toBe('2'.repeat(20));
    expect(await one.server('alpha').get('u:2', digestOf('2'.repeat(20)))).toBeUndefined();
  });
});

describe('listing', () => {
  it('saves and loads the last listing with the time it was saved', async () => {
    const s = await setup();
    let cache = await s.open();
    const before = Date.now();
    expect(await cache.server('alpha').saveListing({ skills: [{ name: 'alpha' }] })).toBe(true);
    await closeAndForget(cache);
    cache = await s.open();
    const loaded = await cache.server('alpha').loadListing();
    expect(loaded?.document).toEqual({ skills: [{ name: 'alpha' }] });
    expect(Date.parse(loaded?.savedAt ?? '')).toBeGreaterThanOrEqual(before - 1000);
    expect(loaded?.savedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await cache.server('beta').loadListing()).toBeUndefined();
  });

  it('discards a corrupt or symlinked listing with one line', async () => {
    const s = await setup();
    const cache = await s.open();
    await cache.server('alpha').saveListing({ skills: [] });
    const file = path.join(cache.subtree, 'alpha/listing.json');
    await writeFile(file, '{"savedAt": "2024-01-01T00:00:00.000Z", "document": ');
    expect(await cache.server('alpha').loadListing()).toBeUndefined();
    expect(s.lines).toHaveLength(1);
    expect(s.lines[0]).toMatch(/^\[alpha\] disk cache: listing\.json: not JSON \(.+\); discarded$/);
    await expect(lstat(file)).rejects.toThrow(/ENOENT/);

    const elsewhere = path.join(await tempDir(), 'listing.json');
    await writeFile(elsewhere, JSON.stringify({ savedAt: new Date().toISOString(), document: { forged: true } }));
    await symlink(elsewhere, file);
    expect(await cache.server('alpha').loadListing()).toBeUndefined();
    expect(s.lines[1]).toBe('[alpha] disk cache: listing.json: a symbolic link, not a regular file; discarded');

    await writeFile(file, JSON.stringify({ document: {} }));
    expect(await cache.server('alpha').loadListing()).toBeUndefined();
    expect(s.lines[2]).toBe('[alpha] disk cache: listing.json: not a saved listing (no savedAt time); discarded');
  });
});

describe('management', () => {
  async function filled(s: Setup): Promise<DiskCache> {
    const cache = await s.open();
    await cache.server('alpha').put('u:1', digestOf('one'), bytesOf('one'));
    await cache.server('alpha').put('u:2', digestOf('two!'), bytesOf('two!'));
    await cache.server('beta').put('u:3', digestOf('three'), bytesOf('three'));
    await cache.server('gamma').saveListing({});
    await cache.server('alpha').saveListing({ skills: [] });
    return cache;
  }

  it('reports files, bytes and listing time per label, with and without the lock', async () => {
    const s = await setup();
    const cache = await filled(s);
    const status = await cache.status();
    expect(status.subtree).toBe(cache.subtree);
    expect(status.lockHolderPid).toBe(process.pid);
    expect(status.labels.map(({ listingSavedAt: _, ...rest }) => rest)).toEqual([
      { label: 'alpha', files: 2, bytes: 7 },
      { label: 'beta', files: 1, bytes: 5 },
      { label: 'gamma', files: 0, bytes: 0 },
    ]);
    expect(status.labels[0]?.listingSavedAt).toMatch(/Z$/);
    expect(status.labels[1]?.listingSavedAt).toBeUndefined();
    // Read-only, while the daemon holds the lock, and after it let go.
    expect(await readCacheStatus({ root: s.root, mountpoint: s.mountpoint })).toEqual(status);
    await closeAndForget(cache);
    expect((await readCacheStatus({ root: s.root, mountpoint: s.mountpoint })).lockHolderPid).toBeUndefined();
    expect((await readCacheStatus({ root: s.root, mountpoint: path.join(s.mountpoint, 'never') })).labels).toEqual([]);
  });

  it('prunes the labels not kept, and clears one label or all', async () => {
    const s = await setup();
    const cache = await filled(s);
    expect(await cache.prune(['alpha'])).toEqual(['beta', 'gamma']);
    expect((await readdir(cache.subtree)).sort()).toEqual(['.lock', '.mount.json', 'alpha']);
    expect(cache.totalBytes).toBe(7);
    expect((await cache.server('alpha').get('u:1', digestOf('one')))?.toString()).toBe('one');
    expect(await cache.server('beta').get('u:3', digestOf('three'))).toBeUndefined();

    await cache.server('beta').put('u:3', digestOf('three'), bytesOf('three'));
    expect(await cache.clear('alpha')).toEqual(['alpha']);
    expect(await cache.clear('alpha')).toEqual([]);
    expect(cache.totalBytes).toBe(5);
    expect(await cache.clear()).toEqual(['beta']);
    expect(cache.totalBytes).toBe(0);
    expect((await readdir(cache.subtree)).sort()).toEqual(['.lock', '.mount.json']);
    // The store still works after a clear.
    expect(await cache.server('alpha').put('u:1', digestOf('one'), bytesOf('one'))).toBe(true);
    await closeAndForget(cache);
    await expect(cache.prune([])).rejects.toThrow(/prune after close\(\)/);
  });

  it('needs the lock: while a daemon serves the mount, a management open is refused', async () => {
    const s = await setup();
    await filled(s);
    await expect(s.open()).rejects.toThrow(CacheLockedError);
  });
});
