// What the core holds of a directory without asking the server (a skill's manifest) goes to the
// addon at the first lookup in it, with its held subdirectories: the lookups of the other names,
// and the listings, are then answered without JavaScript; a change on the server still reaches
// `ls`, `stat` and `cat`. Through a
// real kernel mount served by a child process; counted at the daemon's /metrics.
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../support/fuse-harness.js';
import { freePort } from '../support/http-server.js';
import { makeTestDir, serveEntry, startMount } from '../support/mount-harness.js';
import { waitFor } from '../support/poll.js';
import { seriesSum } from '../support/prometheus-text.js';
import { requireFuse } from '../support/require-fuse.js';
import { writeSkill } from '../support/skill-builder.js';

requireFuse();

const REFERENCES = ['a.md', 'b.md', 'c.md', 'd.md'];

async function scrape(port: number): Promise<string> {
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

describe('held directories pushed at the first lookup in them (libfuse3)', () => {
  it('answers the lookups of its other names and its listing in the addon, and still shows a change', async () => {
    const dir = await makeTestDir();
    const skills = path.join(dir, 'skills');
    await writeSkill(skills, 'alpha', { files: Object.fromEntries(REFERENCES.map((name) => [`references/${name}`, `# ${name}\n`])) });
    const port = await freePort();
    const mount = await startMount({ dir, config: { s: serveEntry(skills) }, args: ['--fuse-backend', 'libfuse3', '--metrics', `127.0.0.1:${port}`] });
    try {
      const skill = path.join(mount.mountpoint, 's', 'alpha');
      expect((await run('cat', [path.join(skill, 'SKILL.md')])).stdout).toContain('name: alpha');
      // A pass of lookups (stat of every name) and a listing, counted by who answered them.
      const pass = async () => {
        const before = await scrape(port);
        const stats = await run('stat', ['-c', '%n %s', ...REFERENCES.map((name) => path.join(skill, 'references', name))]);
        expect(stats.stdout.trim().split('\n')).toEqual(REFERENCES.map((name) => `${path.join(skill, 'references', name)} ${`# ${name}\n`.length}`));
        expect((await run('ls', [path.join(skill, 'references')])).stdout.trim().split('\n')).toEqual(REFERENCES);
        const after = await scrape(port);
        const inJs = (op: string) => seriesSum(after, 'skills_mount_fuse_operations_total', { op }) - seriesSum(before, 'skills_mount_fuse_operations_total', { op });
        const inAddon = (op: string) => seriesSum(after, 'skills_mount_fuse_answered_by_addon_total', { op }) - seriesSum(before, 'skills_mount_fuse_answered_by_addon_total', { op });
        return { lookupsInJs: inJs('lookup'), lookupsInAddon: inAddon('lookup'), readdirsInJs: inJs('readdir') };
      };
      // What the design promises: once a lookup JS answered in a directory pushed what the core
      // holds there (alpha, references and their names), the lookups of those names and their
      // listing are the addon's, for as long as nothing changes. A change that lands between a
      // lookup and its push (the mount's first refresh, say) keeps that push back, and the next
      // lookup JS answers pushes again: so the first pass may send a few lookups to JS, and once the
      // kernel's entries expire (1 s), a later pass sends none.
      const passes = [await pass()];
      expect(passes[0]!.lookupsInJs + passes[0]!.lookupsInAddon).toBe(1 + REFERENCES.length);
      while (passes.at(-1)!.lookupsInJs > 0 && passes.length < 5) {
        await new Promise((resolve) => setTimeout(resolve, 1_100));
        passes.push(await pass());
      }
      expect(passes.at(-1), JSON.stringify(passes)).toEqual({ lookupsInJs: 0, lookupsInAddon: 1 + REFERENCES.length, readdirsInJs: 0 });

      // A file added and one removed on the server: the pushed listing goes before the kernel is told.
      await writeFile(path.join(skills, 'alpha', 'references', 'e.md'), '# e.md, new\n');
      await rm(path.join(skills, 'alpha', 'references', 'a.md'));
      const listed = async () => (await run('ls', [path.join(skill, 'references')])).stdout.trim().split('\n');
      await waitFor(async () => (await listed()).join(' ') === 'b.md c.md d.md e.md', 15_000, 'the change in ls');
      expect((await run('cat', [path.join(skill, 'references', 'e.md')])).stdout).toBe('# e.md, new\n');
      const gone = await run('stat', [path.join(skill, 'references', 'a.md')]);
      expect({ code: gone.code, stderr: gone.stderr }).toMatchObject({ code: 1, stderr: expect.stringContaining('No such file') });
    } finally {
      await mount.stop();
    }
  }, 60_000);
});
