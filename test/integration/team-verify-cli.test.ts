// What CI is told about a project (issue 50, items 5 and 10), through the built CLI against the
// reference server over Streamable HTTP: `verify --project` fails on an entry of link's kind (a
// link into link's store) that the lock does not name, by name, and leaves the person's own skills
// alone; a label the lock gives another server is refused naming both servers, with no secret.
import { mkdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { SKILLS_SERVE, startHttpServe, type ListeningServer } from '../support/http-server.js';
import { writeTree } from '../support/skill-builder.js';
import { cli, gitProject, namesIn, person, writeConfig, type CliResult, type Person } from '../support/team-lock-world.js';
import { lockedEntry, lockText, rawLockfile, skillText } from '../support/team-lockfile.js';
import { makeTempDir } from '../support/temp-dir.js';

const X = { 'SKILL.md': skillText('x', 'Does x things') };
const Y = { 'SKILL.md': skillText('y', 'Does y things') };

let base: string;
let served: string;
let server: ListeningServer;

beforeAll(async () => {
  base = await makeTempDir('team-verify-cli-');
  served = path.join(base, 'served');
  await writeTree(served, { 'x/SKILL.md': X['SKILL.md'], 'y/SKILL.md': Y['SKILL.md'] });
  server = await startHttpServe([served]);
});
afterAll(async () => {
  await server?.stop();
  await removeReadOnlyTree(base).catch(() => rm(base, { recursive: true, force: true }));
});

/** A person whose config names the server as "crew", with a token of their own in its URL. */
async function teammate(name: string): Promise<Person> {
  const who = await person(base, name);
  await writeConfig(who, { crew: { url: `${server.url}?token=${name}-QUERY-SECRET` } });
  return who;
}

function expectCode(result: CliResult, code: number): void {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(code);
}

describe('verify --project: nothing missing or extra (item 5)', () => {
  let who: Person;
  let project: string;
  let root: string;
  /** Where y's entry pointed while y was locked: its object in link's store. */
  let yObject: string;

  beforeAll(async () => {
    who = await teammate('casey');
    project = await gitProject(path.join(base, 'project'));
    root = path.join(project, '.claude', 'skills');
    expectCode(await cli(who, ['lock', 'crew/x', 'crew/y', '--project', project, '--yes']), 0);
    expectCode(await cli(who, ['link', 'claude-code', '--project', project]), 0);
    yObject = await readlink(path.join(root, 'y'));
    // y leaves the lock; the relink takes its entry away (its object stays in the store a while).
    expectCode(await cli(who, ['unlock', 'crew/y', '--project', project]), 0);
    expectCode(await cli(who, ['link', 'claude-code', '--project', project]), 0);
    expect(await namesIn(root)).toEqual(['x']);
  });

  it('passes as linked, and with a skill of the person\'s own beside the entries: it is not link\'s', async () => {
    await writeTree(path.join(root, 'mine'), { 'SKILL.md': skillText('mine') });
    const verified = await cli(who, ['verify', '--project', project]);
    expectCode(verified, 0);
    expect(verified.stdout).toBe('1 locked skill, 1 entry in 1 root, 1 files: as locked\n');
  });

  it('an extra link to a store object the lock does not name fails, by name; the next link takes it away and verify passes again', async () => {
    const extra = path.join(root, 'y-extra');
    await symlink(yObject, extra);
    const verified = await cli(who, ['verify', '--project', project]);
    expectCode(verified, 1);
    expect(verified.stdout).toBe(
      `${extra}: extra: not an entry of the lock (it links into link's store: ${yObject}): the next sync removes it\n` + '1 locked skill, 1 entry in 1 root, 1 files: 1 difference\n',
    );
    const json = await cli(who, ['verify', '--project', project, '--json']);
    expectCode(json, 1);
    expect((JSON.parse(json.stdout) as { problems: unknown[] }).problems).toEqual([{ where: extra, detail: `extra: not an entry of the lock (it links into link's store: ${yObject}): the next sync removes it` }]);

    expectCode(await cli(who, ['link', 'claude-code', '--project', project]), 0);
    expect(await namesIn(root)).toEqual(['mine', 'x']);
    expectCode(await cli(who, ['verify', '--project', project]), 0);
  });

  it('a link into the store in another form (relative, to the object folder, through another link) fails too, and is left for the person to remove', async () => {
    const relative = path.relative(root, path.dirname(yObject));
    const through = path.join(base, 'a-link-to-the-store-object');
    await symlink(yObject, through);
    await symlink(relative, path.join(root, 'y-relative'));
    await symlink(through, path.join(root, 'y-through'));
    // A link elsewhere is the person's own.
    await mkdir(path.join(base, 'elsewhere', 'theirs'), { recursive: true });
    await writeFile(path.join(base, 'elsewhere', 'theirs', 'SKILL.md'), skillText('theirs'));
    await symlink(path.join(base, 'elsewhere', 'theirs'), path.join(root, 'theirs'));
    const verified = await cli(who, ['verify', '--project', project]);
    expectCode(verified, 1);
    expect(verified.stdout).toBe(
      `${path.join(root, 'y-relative')}: extra: not an entry of the lock (it links into link's store: ${relative}): link leaves what it did not make: remove it\n` +
        `${path.join(root, 'y-through')}: extra: not an entry of the lock (it links into link's store: ${through}): link leaves what it did not make: remove it\n` +
        '1 locked skill, 1 entry in 1 root, 1 files: 2 differences\n',
    );
    await rm(path.join(root, 'y-relative'));
    await rm(path.join(root, 'y-through'));
    expectCode(await cli(who, ['verify', '--project', project]), 0);
  });
});

describe('a label the lock gives another server is refused naming both (item 10)', () => {
  it('link names the lock\'s server and the one configured here, without the configuration\'s secrets; lock does too', async () => {
    const who = await teammate('dana');
    const project = await gitProject(path.join(base, 'other-server'));
    const elsewhere = 'https://skills.elsewhere.example.org/mcp';
    await writeFile(path.join(project, 'skills-lock.json'), lockText(rawLockfile({ crew: { url: elsewhere } }, [lockedEntry('crew', 'x', X)])));
    const linked = await cli(who, ['link', 'claude-code', '--project', project]);
    expectCode(linked, 1);
    expect(linked.stdout).toContain(`crew/x is not linked: the lock names server "crew" as ${elsewhere}; the configuration here has another server by that label: ${server.url}\n`);
    expect(linked.stdout + linked.stderr).not.toMatch(/SECRET|token=/);

    const locked = await cli(who, ['lock', 'crew/y', '--project', project, '--yes', '--server', `crew=${process.execPath} ${SKILLS_SERVE} ${served}`]);
    expectCode(locked, 1);
    expect(locked.stdout).toContain(
      `skills-mount: crew/y: the lock names server "crew" as ${elsewhere}, and crew/x were locked from it; the configuration here has another server by that label: ${process.execPath} ${SKILLS_SERVE} ${served} (configure "crew" as the lock names it, or unlock those first)`,
    );

    // outdated cannot compare such a skill, and says so naming both servers too.
    const outdated = await cli(who, ['outdated', '--project', project, '--json']);
    expectCode(outdated, 2);
    expect(outdated.stdout).toContain(JSON.stringify(`the lock names server "crew" as ${elsewhere}; the configuration here has another server by that label: ${server.url}`).slice(1, -1));
    expect(outdated.stdout + outdated.stderr).not.toMatch(/SECRET|token=/);
  });
});
