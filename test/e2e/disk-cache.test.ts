// The verified disk cache through real mounts: restarts served from disk with no request,
// a server that is down shown from its kept listing, cache files altered on disk never
// served, servers that left the config pruned, refused locations, one daemon per mount.
import { hostname } from 'node:os';
import { lstat, mkdir, readFile, realpath, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { run, runBytes } from '../support/fuse-harness.js';
import { HOSTILE_SERVER, hostileSkill, requestCount, type HostileSkill } from '../support/hostile-scenario.js';
import { SKILLS_MOUNT, makeTestDir, startMount, type RunningMount } from '../support/mount-harness.js';
import { freePort, startHttpServe } from '../support/http-server.js';
import { waitFor } from '../support/poll.js';
import { skillMd, writeTree } from '../support/skill-builder.js';
import { requireFuse } from '../support/require-fuse.js';
import { cacheFileName, mountKey } from '../../src/cache/disk-cache.js';

requireFuse();

const ALPHA_FILES = { 'ref.md': 'reference text\n', 'two.md': 'the second file, to be truncated on disk\n', 'three.md': 'the third, to be swapped for a link\n' };

function skills(refText = ALPHA_FILES['ref.md']): HostileSkill[] {
  return [
    hostileSkill('alpha', 'Read before the restart', { 'ref.md': { text: refText }, 'two.md': { text: ALPHA_FILES['two.md'] }, 'three.md': { text: ALPHA_FILES['three.md'] } }),
    hostileSkill('beta', 'Never read before the restart', { 'notes.md': { text: 'notes\n' } }),
  ];
}

describe('the verified disk cache', () => {
  let dir: string;
  let cacheDir: string;
  let scenarioFile: string;
  let downFlag: string;
  let mount: RunningMount | undefined;
  const at = (...parts: string[]) => path.join(dir, 'mnt', 'srv', ...parts);
  const reads = (uri?: string) => requestCount(mount!.log(), 'srv', 'resources/read', uri);
  // The server refuses to start while the flag file exists (a command that fails).
  const entry = () => ({ command: '/bin/sh', args: ['-c', `test -e '${downFlag}' && exit 1; exec "$0" "$@"`, process.execPath, HOSTILE_SERVER, scenarioFile] });
  const start = async (extraArgs: string[] = [], config: Record<string, unknown> = { srv: entry() }) => {
    mount = await startMount({ dir, config, diskCache: true, args: ['--cache-dir', cacheDir, '--verbose', ...extraArgs] });
    return mount;
  };
  const stop = async () => {
    await mount?.stop();
    mount = undefined;
  };
  const skillsJsonServer = async (label = 'srv') => JSON.parse((await runBytes('cat', [path.join(dir, 'mnt', 'skills.json')])).stdout.toString()).servers.find((server: { label: string }) => server.label === label);
  const cacheFile = async (uri: string, text: string) => {
    const digest = `sha256:${(await import('node:crypto')).createHash('sha256').update(text).digest('hex')}`;
    const canonical = path.join(await realpath(dir), 'mnt');
    return path.join(cacheDir, mountKey(canonical), 'srv', cacheFileName(uri, digest));
  };

  beforeAll(async () => {
    dir = await makeTestDir();
    cacheDir = path.join(dir, 'cache');
    scenarioFile = path.join(dir, 'scenario.json');
    downFlag = path.join(dir, 'down');
    await writeFile(scenarioFile, JSON.stringify({ listing: true, skills: skills() }));
  }, 60_000);

  // A failed test leaves no daemon behind for the next.
  afterEach(async () => {
    await stop();
  });

  afterAll(async () => {
    await stop();
  });

  it('files read once are served after a restart with no resources/read, byte for byte', async () => {
    await start();
    for (const [name, text] of Object.entries(ALPHA_FILES)) expect((await run('cat', [at('alpha', name)])).stdout).toBe(text);
    const skillMd = (await runBytes('cat', [at('alpha', 'SKILL.md')])).stdout;
    expect(reads()).toBe(4);
    // Written in the background: wait until every file is on disk before stopping.
    await waitFor(async () => (await Promise.all(Object.entries(ALPHA_FILES).map(async ([name, text]) => lstat(await cacheFile(`skill://alpha/${name}`, text)).then(() => true, () => false)))).every(Boolean), 10_000, 'cache files written');
    await stop();

    await start();
    for (const [name, text] of Object.entries(ALPHA_FILES)) expect((await run('cat', [at('alpha', name)])).stdout).toBe(text);
    expect((await runBytes('cat', [at('alpha', 'SKILL.md')])).stdout.equals(skillMd)).toBe(true);
    expect(reads()).toBe(0);
    const status = await run(process.execPath, [SKILLS_MOUNT, 'cache', 'status', '--cache-dir', cacheDir]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/running \(pid \d+\)/);
    expect(status.stdout).toMatch(/srv\s+4 files/);
    await stop();
  });

  it('a cache file altered on disk (other bytes of the same size, truncated, a symbolic link) is discarded, logged and fetched again', async () => {
    const same = await cacheFile('skill://alpha/ref.md', ALPHA_FILES['ref.md']);
    await writeFile(same, 'X'.repeat(ALPHA_FILES['ref.md'].length));
    await truncate(await cacheFile('skill://alpha/two.md', ALPHA_FILES['two.md']), 5);
    const swapped = await cacheFile('skill://alpha/three.md', ALPHA_FILES['three.md']);
    // Even a link to the right bytes is not the cache's own file.
    const elsewhere = path.join(dir, 'elsewhere.md');
    await writeFile(elsewhere, ALPHA_FILES['three.md']);
    await rm(swapped);
    await symlink(elsewhere, swapped);
    await start();
    for (const [name, text] of Object.entries(ALPHA_FILES)) expect((await run('cat', [at('alpha', name)])).stdout).toBe(text);
    for (const name of Object.keys(ALPHA_FILES)) expect(reads(`skill://alpha/${name}`)).toBe(1);
    const log = mount!.log();
    expect(log).toContain('[srv] disk cache: skill://alpha/ref.md: content does not match its digest; discarded');
    expect(log).toMatch(/\[srv\] disk cache: skill:\/\/alpha\/two\.md: 5 bytes where \d+ are expected \(truncated or replaced\); discarded/);
    // A link is found when the daemon indexes the cache at start, before any read.
    expect(log).toMatch(/\[srv\] disk cache: files\/[0-9a-f]{2}\/[0-9a-f]{64}: a symbolic link, not a regular file; discarded/);
    // The fresh bytes replaced what was discarded.
    await waitFor(async () => (await readFile(same, 'utf8').catch(() => '')) === ALPHA_FILES['ref.md'], 10_000, 'ref.md cached again');
    await waitFor(async () => (await lstat(swapped).catch(() => undefined))?.isFile() === true, 10_000, 'three.md cached again as a file');
    await stop();
  });

  it('a server that is down at start shows its kept listing, offline; cached files served, others EIO; back up, it turns connected and changed files are fetched again', async () => {
    await writeFile(downFlag, '');
    // A short kernel attribute timeout: the changed file's new size shows within a second.
    await start(['--metadata-ttl', '1']);
    expect(mount!.log()).toMatch(/mounted \S+ \(0\/1 servers connected; not connected: srv; offline, shown from the disk cache: srv; 2 skills; ready in/);
    expect((await run('ls', [at()])).stdout.split('\n').filter(Boolean).sort()).toEqual(['alpha', 'beta']);
    const server = await skillsJsonServer();
    expect(server.state).not.toBe('connected');
    expect(Date.parse(server.offline.since)).not.toBeNaN();
    expect(Date.parse(server.offline.listingSavedAt)).not.toBeNaN();
    expect(server.skills.map((skill: { name: string }) => skill.name).sort()).toEqual(['alpha', 'beta']);
    const status = await run(process.execPath, [SKILLS_MOUNT, 'status', path.join(dir, 'mnt')]);
    expect(status.stdout).toMatch(/srv\s+offline\s+listing\s+2\s+since \S+; listing kept on disk/);
    const xattr = await run('python3', ['-c', 'import os,sys; print(os.getxattr(sys.argv[1], "user.mcp.offline").decode())', at()]);
    expect(xattr.stdout.trim()).toBe(server.offline.since);
    for (const [name, text] of Object.entries(ALPHA_FILES)) expect((await run('cat', [at('alpha', name)])).stdout).toBe(text);
    const uncached = await run('cat', [at('beta', 'notes.md')]);
    expect(uncached.code).not.toBe(0);
    expect(uncached.stderr).toMatch(/Input\/output error/);
    // Logged with the server and the URI that failed (the skill's SKILL.md is loaded first).
    expect(mount!.log()).toMatch(/srv.*skill:\/\/beta\/(SKILL|notes)\.md/);

    // The server comes back with ref.md changed.
    await writeFile(scenarioFile, JSON.stringify({ listing: true, skills: skills('reference text, revised\n') }));
    await rm(downFlag);
    await waitFor(async () => (await skillsJsonServer()).state === 'connected', 30_000, 'srv connected again');
    const back = await skillsJsonServer();
    expect(back.offline).toBeUndefined();
    await waitFor(async () => (await run('cat', [at('alpha', 'ref.md')])).stdout === 'reference text, revised\n', 40_000, 'the revised ref.md');
    expect(reads('skill://alpha/ref.md')).toBe(1);
    expect((await run('cat', [at('alpha', 'two.md')])).stdout).toBe(ALPHA_FILES['two.md']);
    expect(reads('skill://alpha/two.md')).toBe(0);
    await stop();
  });

  it('a server no longer in the config has its cached content removed at the next start', async () => {
    const labelDir = path.dirname(path.dirname(path.dirname(await cacheFile('skill://alpha/two.md', ALPHA_FILES['two.md']))));
    expect((await lstat(labelDir)).isDirectory()).toBe(true);
    await start([], { other: entry() });
    expect(mount!.log()).toContain('disk cache: removed the content of srv (no longer configured)');
    await expect(lstat(labelDir)).rejects.toThrow(/ENOENT/);
    await stop();
  });

  it('skills-mount cache: clear refuses while the daemon of that mount runs; prune removes labels the config no longer has; clear removes the rest', async () => {
    await rm(downFlag, { force: true });
    // `other` was the only label left by the previous test; a config that names only srv prunes it.
    const configPath = path.join(dir, 'prune-config.json');
    await writeFile(configPath, JSON.stringify({ mcpServers: { srv: entry() } }));
    await start([], { other: entry() });
    expect((await run('cat', [path.join(dir, 'mnt', 'other', 'alpha', 'two.md')])).stdout).toBe(ALPHA_FILES['two.md']);
    const busy = await run(process.execPath, [SKILLS_MOUNT, 'cache', 'clear', '--cache-dir', cacheDir]);
    expect(busy.code).toBe(1);
    expect(busy.stdout).toMatch(/in use by the daemon serving it \(pid \d+\); stop it first/);
    await stop();
    const otherDir = path.join(cacheDir, mountKey(path.join(await realpath(dir), 'mnt')), 'other');
    await waitFor(async () => (await lstat(otherDir).then(() => true, () => false)), 10_000, 'other cached');
    const pruned = await run(process.execPath, [SKILLS_MOUNT, 'cache', 'prune', '--cache-dir', cacheDir, '--config', configPath]);
    expect(pruned, pruned.stderr).toMatchObject({ code: 0 });
    expect(pruned.stdout).toMatch(/removed other/);
    await expect(lstat(otherDir)).rejects.toThrow(/ENOENT/);
    const cleared = await run(process.execPath, [SKILLS_MOUNT, 'cache', 'clear', '--cache-dir', cacheDir]);
    expect(cleared.code).toBe(0);
    const status = await run(process.execPath, [SKILLS_MOUNT, 'cache', 'status', '--cache-dir', cacheDir, '--json']);
    const document = JSON.parse(status.stdout);
    expect(document.subtrees.flatMap((subtree: { labels: unknown[] }) => subtree.labels)).toEqual([]);
  });

  it('one daemon per mount: a lock a live process holds is refused with the holder named; other mounts share the root', async () => {
    await rm(downFlag, { force: true });
    // Another mount on the same cache root, side by side with this one.
    const otherDir = await makeTestDir();
    const other = await startMount({ dir: otherDir, config: { srv: entry() }, diskCache: true, args: ['--cache-dir', cacheDir] });
    try {
      await start();
      expect((await run('cat', [at('alpha', 'two.md')])).stdout).toBe(ALPHA_FILES['two.md']);
      await stop();
    } finally {
      await other.stop();
    }
    // A live process (this test) holds the lock of this mount's subtree.
    const subtree = path.join(cacheDir, mountKey(path.join(await realpath(dir), 'mnt')));
    await writeFile(path.join(subtree, '.lock'), `${process.pid}\n${hostname()}\n`);
    try {
      const refused = await run(process.execPath, [SKILLS_MOUNT, path.join(dir, 'mnt'), '--cache-dir', cacheDir, '--server', 'srv=true'], 20_000);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`holds the lock file ${path.join(subtree, '.lock')}`);
      expect(refused.stderr).toContain(`pid ${process.pid}`);
    } finally {
      await rm(path.join(subtree, '.lock'), { force: true });
    }
  });

  it('a mountpoint or a cache directory inside a harness skill-discovery folder is refused, saying which', async () => {
    const home = path.join(dir, 'home');
    const discovery = path.join(home, '.claude', 'skills');
    await mkdir(path.join(discovery, 'mnt'), { recursive: true });
    const env = { ...process.env, HOME: home };
    const asMountpoint = await runWithEnv([path.join(discovery, 'mnt'), '--no-disk-cache', '--server', 'srv=true'], env);
    expect(asMountpoint.code).toBe(2);
    expect(asMountpoint.stderr).toMatch(/\.claude\/skills.*Claude Code/);
    const asCache = await runWithEnv([path.join(dir, 'mnt'), '--cache-dir', path.join(discovery, 'cache'), '--server', 'srv=true'], env);
    expect(asCache.code).toBe(2);
    expect(asCache.stderr).toMatch(/disk cache root: .*\.claude\/skills/);
    await expect(lstat(path.join(discovery, 'cache'))).rejects.toThrow(/ENOENT/);
  });
});


describe('the verified disk cache, over Streamable HTTP', () => {
  it('a server whose port is closed at start shows its kept listing, offline, and cached files; back on its port, connected', async () => {
    const dir = await makeTestDir();
    const served = path.join(dir, 'served');
    await writeTree(served, { 'gamma/SKILL.md': skillMd('gamma', 'Served over HTTP'), 'gamma/ref.md': 'over http\n', 'gamma/other.md': 'never read\n' });
    const port = await freePort();
    const args = ['--cache-dir', path.join(dir, 'cache'), '--metadata-ttl', '1'];
    const root = path.join(dir, 'mnt', 'web');
    const config = { web: { url: `http://127.0.0.1:${port}/mcp` } };
    let server = await startHttpServe([served], { port });
    let mount = await startMount({ dir, config, diskCache: true, args });
    try {
      expect((await run('cat', [path.join(root, 'gamma', 'ref.md')])).stdout).toBe('over http\n');
      await waitFor(async () => (await run(process.execPath, [SKILLS_MOUNT, 'cache', 'status', '--cache-dir', path.join(dir, 'cache')])).stdout.includes('listing saved'), 10_000, 'listing kept');
      await mount.stop();
      await server.stop();
      // The port is closed: nothing listens there now.
      mount = await startMount({ dir, config, diskCache: true, args });
      const document = JSON.parse((await runBytes('cat', [path.join(dir, 'mnt', 'skills.json')])).stdout.toString());
      const web = document.servers.find((entry: { label: string }) => entry.label === 'web');
      expect(web.state).not.toBe('connected');
      expect(web.offline.listingSavedAt).toEqual(expect.any(String));
      expect((await run('ls', [path.join(root, 'gamma')])).stdout.split('\n').filter(Boolean).sort()).toEqual(['SKILL.md', 'other.md', 'ref.md']);
      expect((await run('cat', [path.join(root, 'gamma', 'ref.md')])).stdout).toBe('over http\n');
      expect((await run('cat', [path.join(root, 'gamma', 'other.md')])).code).not.toBe(0);
      server = await startHttpServe([served], { port });
      await waitFor(async () => JSON.parse((await runBytes('cat', [path.join(dir, 'mnt', 'status.json')])).stdout.toString()).servers[0].state === 'connected', 40_000, 'web connected again');
      expect((await run('cat', [path.join(root, 'gamma', 'other.md')])).stdout).toBe('never read\n');
    } finally {
      await mount.stop();
      await server.stop();
    }
  });
});

async function runWithEnv(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  const { spawn } = await import('node:child_process');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}
