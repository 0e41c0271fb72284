// A cloned repository is hostile input: through the built CLI, with a real skills-serve over
// Streamable HTTP and no FUSE. A lockfile that is a symbolic link (or not JSON) is refused by name
// without a byte of it shown.
import { rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { startHttpServe, type ListeningServer } from '../support/http-server.js';
import { writeTree } from '../support/skill-builder.js';
import { cli, gitProject, namesIn, person, writeConfig, type CliResult, type Person } from '../support/team-lock-world.js';
import { skillText } from '../support/team-lockfile.js';
import { makeTempDir } from '../support/temp-dir.js';

const LOCKFILE = 'skills-lock.json';
/** What a file outside the project holds: none of it may reach any output. */
const SECRET = 'root:x:0:0:root:/root:/bin/bash\nmachine example.com login me password HUNTER2-SECRET\n';
const ALPHA = { 'SKILL.md': skillText('alpha', 'Does alpha things') };
const BETA = { 'SKILL.md': skillText('beta', 'Does beta things'), 'references/b.md': 'beta reference\n' };

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await removeReadOnlyTree(dir).catch(() => rm(dir, { recursive: true, force: true }));
});

let base: string;
let server: ListeningServer;
beforeAll(async () => {
  base = await makeTempDir('project-boundary-');
  made.push(base);
  const served = path.join(base, 'served');
  await writeTree(served, { 'alpha/SKILL.md': ALPHA['SKILL.md'], 'beta/SKILL.md': BETA['SKILL.md'], 'beta/references/b.md': BETA['references/b.md'] });
  server = await startHttpServe([served]);
});
afterAll(async () => {
  await server?.stop();
});

/** A person whose default configuration names the server as "team". */
async function teammate(name: string): Promise<Person> {
  const who = await person(base, name);
  await writeConfig(who, { team: { url: server.url } });
  return who;
}

function output(result: CliResult): string {
  return `${result.stdout}\n${result.stderr}`;
}

describe('a lockfile that is not a regular file in the project, or not JSON', () => {
  it('a skills-lock.json linked to a file outside: link, verify --project and outdated refuse it by name and never show its bytes', async () => {
    const who = await teammate('lock-link');
    const outside = path.join(base, 'outside-secret');
    await writeFile(outside, SECRET);
    const project = await gitProject(path.join(base, 'project-lock-link'));
    await symlink(outside, path.join(project, LOCKFILE));
    const results = {
      link: await cli(who, ['link', 'claude-code', '--project', project]),
      verify: await cli(who, ['verify', '--project', project]),
      outdated: await cli(who, ['outdated', '--project', project]),
    };
    for (const [command, result] of Object.entries(results)) {
      expect(result.code, `${command}: ${output(result)}`).not.toBe(0);
      expect(output(result), command).toContain(`${path.join(project, LOCKFILE)}: is a symbolic link; a lockfile is a regular file in the project`);
      expect(output(result), command).not.toMatch(/root:x|HUNTER2|machine example/);
    }
    // Nothing made in the project either.
    expect(await namesIn(project)).toEqual(['.git', LOCKFILE]);
  });

  it('a skills-lock.json that is not JSON: refused saying where (line, column), without quoting it', async () => {
    const who = await teammate('lock-text');
    const project = await gitProject(path.join(base, 'project-lock-text'));
    await writeFile(path.join(project, LOCKFILE), SECRET);
    const second = await gitProject(path.join(base, 'project-lock-text-2'));
    await writeFile(path.join(second, LOCKFILE), '{\n  "lockfileVersion": 1,\n  "servers": HUNTER2-SECRET\n}\n');
    for (const [dir, where] of [
      [project, 'line 1, column 1'],
      [second, 'line 3, column 14'],
    ] as const) {
      for (const args of [
        ['link', 'claude-code', '--project', dir],
        ['verify', '--project', dir],
        ['outdated', '--project', dir],
      ]) {
        const result = await cli(who, args);
        expect(result.code, `${args.join(' ')}: ${output(result)}`).not.toBe(0);
        expect(output(result), args.join(' ')).toMatch(new RegExp(`${LOCKFILE}: is not JSON \\(${where}: [a-z ]+\\)`));
        expect(output(result), args.join(' ')).not.toMatch(/root:x|HUNTER2|machine example/);
      }
    }
  });
});
