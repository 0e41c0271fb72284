// After a restart, a skill's files, SKILL.md included (stored under the frontmatter it verified
// against), are opened by the addon itself from the disk cache (read whole and hashed on every
// open), with no trip to JavaScript, byte for byte; a
// copy altered on disk, before or after an earlier open verified it, is never served: the open
// goes to JS, which logs and discards it and fetches the file again. Through a real kernel mount
// served by a child process; counted at the daemon's /metrics.
import { createHash } from 'node:crypto';
import { lstat, readFile, realpath, writeFile } from 'node:fs/promises';
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

describe('stored copies opened by the addon (libfuse3)', () => {
  it('serves a restarted skill from the disk cache without JS per file, and never an altered copy', async () => {
    const dir = await makeTestDir();
    const skills = path.join(dir, 'skills');
    const cacheDir = path.join(dir, 'cache');
    await writeSkill(skills, 'alpha', { files: FILES });
    const port = await freePort();
    const start = () => startMount({ dir, config: { s: serveEntry(skills) }, diskCache: true, args: ['--fuse-backend', 'libfuse3', '--cache-dir', cacheDir, '--verbose', '--metrics', `127.0.0.1:${port}`] });
    const at = (mount: RunningMount, name: string) => path.join(mount.mountpoint, 's', 'alpha', name);
    const copyOf = async (name: string) => {
      const digest = `sha256:${createHash('sha256').update(FILES[name]!).digest('hex')}`;
      return path.join(cacheDir, mountKey(path.join(await realpath(dir), 'mnt')), 's', cacheFileName(`skill://alpha/${name}`, digest));
    };
    const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

    let mount = await start();
    try {
      for (const name of Object.keys(FILES)) expect((await run('cat', [at(mount, name)])).stdout).toBe(FILES[name]);
      // Written in the background: every copy on disk before the restart.
      await waitFor(async () => (await Promise.all(Object.keys(FILES).map(async (name) => lstat(await copyOf(name)).then(() => true, () => false)))).every(Boolean), 10_000, 'copies written');
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
  }, 60_000);
});
