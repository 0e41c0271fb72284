// A skill whose directory is a file of another skill, through a real mount (issue 22 item 2):
// `stat pf/q` is pf's file, `pf/q/SKILL.md` is ENOTDIR, and skills.json shows the skill at
// pf/q declined with the reason and `integrity: "none"`, never "verified".
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run, runBytes } from '../support/fuse-harness.js';
import { SCRIPTED_SERVER, hostileSkill, requestCount } from '../support/hostile-scenario.js';
import { makeTestDir, startMount, type RunningMount } from '../support/mount-harness.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

interface ShownSkill {
  path: string;
  state: string;
  integrity: string;
  declined?: string;
}

describe('a skill whose directory is a file of another skill', () => {
  let mount: RunningMount | undefined;
  afterEach(async () => {
    await mount?.stop();
    mount = undefined;
  });

  for (const protocol of ['2026-07-28', '2025-11-25']) {
    it(`at ${protocol}: the tree has pf's file, skills.json the skill at pf/q declined with the reason, nothing of it verified or read`, async () => {
      const dir = await makeTestDir();
      const scenario = path.join(dir, 'overlap.json');
      await writeFile(
        scenario,
        JSON.stringify({
          listing: true,
          skills: [
            hostileSkill('pf', 'Lists a file q', { q: { text: 'the file q of pf\n' } }),
            hostileSkill('pf/q', 'Lives where pf has a file', { 'notes.md': { text: 'notes of q\n' } }),
          ],
        }),
      );
      mount = await startMount({ dir, config: { lab: { command: process.execPath, args: [SCRIPTED_SERVER, scenario] } }, args: ['--protocol-version', protocol] });
      const root = path.join(mount.mountpoint, 'lab');

      expect((await run('stat', ['-c', '%F %s', path.join(root, 'pf', 'q')])).stdout.trim()).toBe(`regular file ${'the file q of pf\n'.length}`);
      expect((await run('cat', [path.join(root, 'pf', 'q')])).stdout).toBe('the file q of pf\n');
      const skillMd = await run('cat', [path.join(root, 'pf', 'q', 'SKILL.md')]);
      expect(skillMd.code).not.toBe(0);
      expect(skillMd.stderr).toMatch(/Not a directory/);

      const skills: ShownSkill[] = JSON.parse((await runBytes('cat', [path.join(mount.mountpoint, 'skills.json')])).stdout.toString()).servers[0].skills;
      const byPath = Object.fromEntries(skills.map((skill) => [skill.path, skill]));
      expect(byPath['lab/pf']).toMatchObject({ state: 'ok', integrity: 'verified' });
      expect(byPath['lab/pf/q']).toMatchObject({ state: 'declined', integrity: 'none' });
      expect(byPath['lab/pf/q']!.declined).toMatch(/cannot be laid out as a tree: skill:\/\/pf\/q\/SKILL\.md needs "pf\/q" to be a directory, but it is the file skill:\/\/pf\/q/);
      // The jq line docs/skills-json.md gives for "not fully verified" finds it.
      expect(skills.filter((skill) => skill.integrity !== 'verified').map((skill) => skill.path)).toEqual(['lab/pf/q']);
      for (const file of ['SKILL.md', 'notes.md']) expect(requestCount(mount.log(), 'lab', 'resources/read', `skill://pf/q/${file}`)).toBe(0);
    });
  }
});
