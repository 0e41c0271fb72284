// After a restart, a skill's files, SKILL.md included (stored under the frontmatter it verified
// against), are opened by the addon itself from the disk cache (read whole and hashed on every
// open), with no trip to JavaScript, byte for byte; a
// copy altered on disk, before or after an earlier open verified it, is never served: the open
// goes to JS, which logs and discards it and fetches the file again; a SKILL.md too, whose
// frontmatter the addon never parses. A copy over the addon's 1 MiB bound opens in JS. Through a
// real kernel mount served by a child process; counted at the daemon's /metrics.
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../support/fuse-harness.js';
import { freePort } from '../support/http-server.js';
import { makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { waitFor } from '../support/poll.js';
import { seriesSum } from '../support/prometheus-text.js';
import { requireFuse } from '../support/require-fuse.js';
import { writeSkill } from '../support/skill-builder.js';
import { cacheFileName, mountKey } from '../../src/cache/disk-cache.js';

requireFuse();

const FILES: Record<string, string> = {
  'references/a.md': '# a, read from the copy\n',
  'references/b.md': '# b, altered after an open verified it\n',
  'references/c.md': '# c, altered before any open\n',
  'assets/data.txt': 'assets are opened the same way\n',
};
/** The largest copy the addon opens itself (lowlevel-edge.ts), and one byte over it: JS's to open. */
const AT_BOUND_NAME = 'assets/at-bound.txt';
const AT_BOUND = 'M'.repeat(1024 * 1024);
const BIG_NAME = 'assets/big.txt';
const BIG = 'B'.repeat(1024 * 1024 + 1);
const ALL: Record<string, string> = { ...FILES, [AT_BOUND_NAME]: AT_BOUND, [BIG_NAME]: BIG };

describe('stored copies opened by the addon (libfuse3)', () => {
  it('serves a restarted skill from the disk cache without JS per file, and never an altered copy', async () => {
    const dir = await makeTestDir();
    const skills = path.join(dir, 'skills');
    const cacheDir = path.join(dir, 'cache');
    await writeSkill(skills, 'alpha', { files: ALL });
    const port = await freePort();
    const start = () => startMount({ dir, config: { s: serveEntry(skills) }, diskCache: true, args: ['--fuse-backend', 'libfuse3', '--cache-dir', cacheDir, '--verbose', '--metrics', `127.0.0.1:${port}`] });
    const at = (mount: RunningMount, name: string) => path.join(mount.mountpoint, 's', 'alpha', name);
    const labelDir = async () => path.join(cacheDir, mountKey(path.join(await realpath(dir), 'mnt')), 's');
    const copyOf = async (name: string) => {
      const digest = `sha256:${createHash('sha256').update(ALL[name]!).digest('hex')}`;
      return path.join(await labelDir(), cacheFileName(`skill://alpha/${name}`, digest));
    };
    // SKILL.md's copy is named with the listed frontmatter too: the one cache file no other name gives.
    const skillMdCopy = async () => {
      const others = new Set(await Promise.all(Object.keys(ALL).map(copyOf)));
      const files = path.join(await labelDir(), 'files');
      const all = (await readdir(files, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath ?? entry.path, entry.name));
      const left = all.filter((file) => !others.has(file));
      expect(left).toHaveLength(1);
      return left[0]!;
    };
    const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

    let mount = await start();
    try {
      expect((await run('cat', [at(mount, 'SKILL.md')])).stdout).toContain('name: alpha');
      for (const name of Object.keys(ALL)) expect((await run('cat', [at(mount, name)])).stdout).toBe(ALL[name]);
      // Written in the background: every copy on disk before the restart.
      await waitFor(async () => (await Promise.all(Object.keys(ALL).map(async (name) => lstat(await copyOf(name)).then(() => true, () => false)))).every(Boolean), 10_000, 'copies written');
    } finally {
      await mount.stop();
    }

    mount = await start();
    try {
      const before = await scrape();
      expect((await run('cat', [at(mount, 'SKILL.md')])).stdout).toContain('name: alpha');
      for (const name of ['references/a.md', 'references/b.md', 'assets/data.txt']) expect((await run('cat', [at(mount, name)])).stdout).toBe(FILES[name]);
      const after = await scrape();
      const delta = (metric: string, op: string, from: string, to: string) => seriesSum(to, metric, { op }) - seriesSum(from, metric, { op });
      // SKILL.md's copy was stored under the frontmatter it verified against, which the listing
      // still gives: its open is the addon's like the other files', and none reaches JS.
      expect({ opensInJs: delta('skills_mount_fuse_operations_total', 'open', before, after), opensInAddon: delta('skills_mount_fuse_answered_by_addon_total', 'open', before, after) }).toEqual({
        opensInJs: 0,
        opensInAddon: 4,
      });
      expect(seriesSum(after, 'skills_mount_mcp_requests_total', { method: 'resources/read' })).toBe(0);

      // At the bound: the addon's; over it: JS opens it (from the disk cache, still no resources/read).
      const beforeAtBound = await scrape();
      expect((await run('cat', [at(mount, AT_BOUND_NAME)])).stdout).toBe(AT_BOUND);
      const afterAtBound = await scrape();
      expect({ opensInJs: delta('skills_mount_fuse_operations_total', 'open', beforeAtBound, afterAtBound), opensInAddon: delta('skills_mount_fuse_answered_by_addon_total', 'open', beforeAtBound, afterAtBound) }).toEqual({
        opensInJs: 0,
        opensInAddon: 1,
      });
      const beforeBig = await scrape();
      expect((await run('cat', [at(mount, BIG_NAME)])).stdout).toBe(BIG);
      const afterBig = await scrape();
      expect({ opensInJs: delta('skills_mount_fuse_operations_total', 'open', beforeBig, afterBig), opensInAddon: delta('skills_mount_fuse_answered_by_addon_total', 'open', beforeBig, afterBig) }).toEqual({
        opensInJs: 1,
        opensInAddon: 0,
      });
      expect(seriesSum(afterBig, 'skills_mount_mcp_requests_total', { method: 'resources/read' })).toBe(0);

      // Other bytes of the same size: the hash on this open refuses them, so JS reads, discards and fetches.
      await writeFile(await copyOf('references/c.md'), 'X'.repeat(FILES['references/c.md']!.length));
      // b.md verified at its open above; altered since: the next open hashes it again.
      await writeFile(await copyOf('references/b.md'), 'Y'.repeat(FILES['references/b.md']!.length));
      const beforeAltered = await scrape();
      for (const name of ['references/c.md', 'references/b.md']) expect((await run('cat', [at(mount, name)])).stdout).toBe(FILES[name]);
      const afterAltered = await scrape();
      expect(delta('skills_mount_fuse_operations_total', 'open', beforeAltered, afterAltered)).toBe(2);
      for (const name of ['references/c.md', 'references/b.md']) {
        expect(mount.log()).toContain(`[s] disk cache: skill://alpha/${name}: content does not match its digest; discarded`);
        // Fetched again and stored again: the copy holds the server's bytes once more.
        const copy = await copyOf(name);
        await waitFor(async () => (await readFile(copy, 'utf8').catch(() => '')) === FILES[name], 10_000, `${name} stored again`);
      }
      // a.md, unaltered, is still the addon's to open.
      const beforeAgain = await scrape();
      expect((await run('cat', [at(mount, 'references/a.md')])).stdout).toBe(FILES['references/a.md']);
      expect(delta('skills_mount_fuse_answered_by_addon_total', 'open', beforeAgain, await scrape())).toBe(1);

    } finally {
      await mount.stop();
    }

    // SKILL.md's copy altered while no daemon ran: the addon's hash refuses it at the first open
    // (it never parses the frontmatter), so JS discards it, fetches, verifies and stores it again.
    const skillMd = await readFile(path.join(skills, 'alpha', 'SKILL.md'), 'utf8');
    const storedSkillMd = await skillMdCopy();
    expect(await readFile(storedSkillMd, 'utf8')).toBe(skillMd);
    await writeFile(storedSkillMd, skillMd.replace('name: alpha', 'name: omega'));
    mount = await start();
    try {
      const before = await scrape();
      expect((await run('cat', [at(mount, 'SKILL.md')])).stdout).toBe(skillMd);
      const after = await scrape();
      const delta = (metric: string, labels: Record<string, string>) => seriesSum(after, metric, labels) - seriesSum(before, metric, labels);
      expect({ opensInJs: delta('skills_mount_fuse_operations_total', { op: 'open' }), reads: delta('skills_mount_mcp_requests_total', { method: 'resources/read' }) }).toEqual({ opensInJs: 1, reads: 1 });
      expect(mount.log()).toContain('[s] disk cache: skill://alpha/SKILL.md: content does not match its digest; discarded');
      await waitFor(async () => (await readFile(storedSkillMd, 'utf8').catch(() => '')) === skillMd, 10_000, 'SKILL.md stored again');
    } finally {
      await mount.stop();
    }
  }, 60_000);
});
