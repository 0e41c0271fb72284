// The project lockfile's format: its text stable through parse and serialize (sorted, one line per
// file, a final newline), no secret of a server's configuration in it, and every way a lockfile from
// a hostile repository can be wrong refused whole, with the entry at fault named in the message.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdir, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMountConfig } from '../../src/config/config.js';
import {
  emptyLockfile,
  identityOf,
  LockfileError,
  MAX_LOCKFILE_BYTES,
  parseLockfile,
  readLockfile,
  sameIdentity,
  serializeLockfile,
  type Lockfile,
} from '../../src/team/lockfile.js';
import { copyOf, lockedEntry, lockText, rawLockfile, sha256Of, setDigestOf, skillText, type RawLockfile } from '../support/team-lockfile.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('lockfile-');
afterEach(() => temps.removeAll());

const FILE = '/project/skills-lock.json';
const STDIO = { command: '/usr/bin/node', args: ['/opt/skills-serve.js', '/srv/skills'] };

/** Two servers, three skills, given out of order (the serializer sorts them). */
function sample(): RawLockfile {
  return rawLockfile({ zeta: { url: 'https://skills.example.com/team/' }, demo: STDIO }, [
    lockedEntry('zeta', 'ops/deploy', { 'SKILL.md': skillText('deploy'), 'scripts/run.sh': '#!/bin/sh\necho run\n' }, { exec: true }),
    lockedEntry('demo', 'y', { 'references/b.md': 'b\n', 'SKILL.md': skillText('y'), 'references/a.md': 'a\n' }),
    lockedEntry('demo', 'x', { 'SKILL.md': skillText('x', 'Does x', 'allowed-tools: Read\n') }, { allowedTools: 'Read' }),
  ]);
}

/** The message parseLockfile refuses `lock` with (fails the test when it does not). */
function refusal(lock: unknown, text = lockText(lock)): string {
  try {
    parseLockfile(text, FILE);
  } catch (error) {
    expect(error).toBeInstanceOf(LockfileError);
    expect((error as Error).message.startsWith(`${FILE}`)).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${text.slice(0, 200)}`);
}

describe('serialize and parse', () => {
  it('round trip is stable: serialize(parse(serialize(x))) is serialize(x), and parse gives the same lock back', () => {
    const first = serializeLockfile(parseLockfile(lockText(sample()), FILE));
    const again = serializeLockfile(parseLockfile(first, FILE));
    expect(again).toBe(first);
    expect(parseLockfile(first, FILE)).toEqual(parseLockfile(lockText(sample()), FILE));
  });

  it('sorts skills by server then path, files by path, servers by label; one line per file and per server; a final newline', () => {
    const text = serializeLockfile(parseLockfile(lockText(sample()), FILE));
    const lock = JSON.parse(text) as RawLockfile;
    expect(Object.keys(lock)).toEqual(['lockfileVersion', 'servers', 'skills']);
    expect(Object.keys(lock.servers)).toEqual(['demo', 'zeta']);
    expect(lock.skills.map((skill) => `${skill.server}/${skill.path}`)).toEqual(['demo/x', 'demo/y', 'zeta/ops/deploy']);
    expect(lock.skills[1]!.files.map((file) => file.path)).toEqual(['SKILL.md', 'references/a.md', 'references/b.md']);
    expect(text.endsWith('}\n')).toBe(true);
    const lines = text.split('\n');
    // Each file on a line of its own, whole; each server too.
    for (const skill of lock.skills) for (const file of skill.files) expect(lines).toContain(`        ${JSON.stringify(file)}${file === skill.files.at(-1) ? '' : ','}`);
    expect(lines).toContain(`    "demo": ${JSON.stringify(STDIO)},`);
    expect(lines).toContain('    "zeta": {"url":"https://skills.example.com/team/"}');
    expect(lines).toContain('      "grants": {"allowedTools":"Read","exec":false},');
  });

  it('one changed file changes one line (a small git diff); input order does not matter', () => {
    const before = serializeLockfile(parseLockfile(lockText(sample()), FILE));
    const changed = sample();
    changed.skills.reverse();
    changed.skills[0]!.files.reverse();
    const reordered = serializeLockfile(parseLockfile(lockText(changed), FILE));
    expect(reordered).toBe(before);
    const y = changed.skills.find((skill) => skill.path === 'y')!;
    const b = y.files.find((file) => file.path === 'references/b.md')!;
    b.digest = sha256Of('b changed\n');
    b.size = 10;
    y.resourcesDigest = setDigestOf(y.files);
    const after = serializeLockfile(parseLockfile(lockText(changed), FILE));
    const differing = before.split('\n').filter((line, index) => line !== after.split('\n')[index]);
    expect(differing).toHaveLength(2);
    expect(differing.some((line) => line.includes('"resourcesDigest"'))).toBe(true);
    expect(differing.some((line) => line.includes('"references/b.md"'))).toBe(true);
  });

  it('a server nobody locks a skill of is left out; an empty lock is valid', () => {
    const lock = rawLockfile({ demo: STDIO, unused: { url: 'https://other.example/' } }, [sample().skills[1]!]);
    expect(Object.keys((JSON.parse(serializeLockfile(parseLockfile(lockText(lock), FILE))) as RawLockfile).servers)).toEqual(['demo']);
    const empty: Lockfile = { servers: {}, skills: [] };
    expect(parseLockfile(serializeLockfile(empty), FILE)).toEqual(empty);
  });
});

describe('a server identity holds no secret', () => {
  it('a URL loses its credentials, query and fragment; headers and env never appear', () => {
    const http = identityOf({ kind: 'http', url: 'https://user:pass@skills.example.com/team/?token=SECRET1#frag', headers: { Authorization: 'Bearer SECRET2' } });
    expect(http).toEqual({ url: 'https://skills.example.com/team/' });
    const stdio = identityOf({ kind: 'stdio', command: 'skills-serve', args: ['dir'], env: { TOKEN: 'SECRET3' }, cwd: undefined });
    expect(stdio).toEqual({ command: 'skills-serve', args: ['dir'] });
    const text = serializeLockfile({ servers: { a: http, b: stdio }, skills: [{ ...parseLockfile(lockText(sample()), FILE).skills[0]!, server: 'a' }, { ...parseLockfile(lockText(sample()), FILE).skills[1]!, server: 'b' }] });
    expect(text).not.toMatch(/SECRET|pass|user@|token=/);
  });

  it('the configured server is the locked one whatever its token; another URL or command line is not', () => {
    expect(sameIdentity({ url: 'https://skills.example.com/team/' }, { kind: 'http', url: 'https://skills.example.com/team/?token=other', headers: { Authorization: 'x' } })).toBe(true);
    expect(sameIdentity({ url: 'https://skills.example.com/team/' }, { kind: 'http', url: 'https://skills.example.com/other/', headers: {} })).toBe(false);
    expect(sameIdentity(STDIO, { kind: 'stdio', command: STDIO.command, args: [...STDIO.args], env: {}, cwd: undefined })).toBe(true);
    expect(sameIdentity(STDIO, { kind: 'stdio', command: STDIO.command, args: [...STDIO.args, '--watch'], env: {}, cwd: undefined })).toBe(false);
    expect(sameIdentity(STDIO, { kind: 'http', url: 'https://skills.example.com/', headers: {} })).toBe(false);
  });
});

describe('a stdio server locked on one machine is the same server on another', () => {
  /** The project's own config file, as two machines load it: their own checkout, HOME and secret. */
  async function loadedOn(machine: string) {
    const project = path.join(await temps.make(), machine, 'project');
    await mkdir(path.join(project, '.vscode'), { recursive: true });
    const file = path.join(project, '.vscode', 'mcp.json');
    const entry = { command: '${userHome}/.local/bin/node', args: ['${workspaceFolder}/tools/skills-serve.js', '--lenient', '${workspaceFolder}/skills', '--token=${env:CREW_TOKEN}'] };
    await writeFile(file, JSON.stringify({ servers: { crew: entry } }));
    const env = { HOME: `/home/${machine}`, CREW_TOKEN: `${machine}-ENV-SECRET` };
    const [server] = (await loadMountConfig({ configPath: file, env })).servers;
    return { project, config: server!.config };
  }

  it('records the command line as the configuration writes it: no expanded path, no value of a variable', async () => {
    const alice = await loadedOn('alice');
    const bob = await loadedOn('bob');
    // What runs is expanded on each machine...
    expect(alice.config).toMatchObject({ command: '/home/alice/.local/bin/node', args: [`${alice.project}/tools/skills-serve.js`, '--lenient', `${alice.project}/skills`, '--token=alice-ENV-SECRET'] });
    // ...what the lock records is not, so Bob's machine (and CI's checkout) is the server Alice locked.
    const locked = identityOf(alice.config);
    expect(locked).toEqual({ command: '${userHome}/.local/bin/node', args: ['${workspaceFolder}/tools/skills-serve.js', '--lenient', '${workspaceFolder}/skills', '--token=${env:CREW_TOKEN}'] });
    expect(identityOf(bob.config)).toEqual(locked);
    expect(sameIdentity(locked, bob.config)).toBe(true);
    const text = serializeLockfile({ servers: { crew: locked }, skills: [{ ...parseLockfile(lockText(sample()), FILE).skills[0]!, server: 'crew' }] });
    expect(text).not.toMatch(/SECRET|\/home\/alice/);
  });

  it('a lock that recorded the expanded line (earlier builds) still names the server on the machine that wrote it; another line does not', async () => {
    const { config } = await loadedOn('alice');
    if (config.kind !== 'stdio') throw new Error('a stdio server was configured');
    expect(sameIdentity({ command: config.command, args: [...config.args] }, config)).toBe(true);
    expect(sameIdentity({ command: '${userHome}/.local/bin/node', args: ['${workspaceFolder}/tools/skills-serve.js'] }, config)).toBe(false);
  });
});

describe('refusals, each naming the entry', () => {
  const valid = () => copyOf(sample());

  it('text that is not a lockfile: not JSON, not an object, no version, a newer version (upgrade), unknown top-level fields, no skills list', () => {
    expect(refusal(undefined, '{"lockfileVersion": 1,')).toMatch(/is not JSON/);
    expect(refusal([])).toMatch(/the lockfile is not an object/);
    expect(refusal({ ...valid(), lockfileVersion: undefined })).toMatch(/has no lockfileVersion/);
    expect(refusal({ ...valid(), lockfileVersion: 1.5 })).toMatch(/has no lockfileVersion/);
    expect(refusal({ ...valid(), lockfileVersion: 2 })).toMatch(/is lockfileVersion 2, written by a newer skills-mount; this one reads version 1: upgrade skills-mount/);
    expect(refusal({ ...valid(), comment: 'hi', extra: 1 })).toMatch(/has unknown fields "comment", "extra"/);
    expect(refusal({ ...valid(), skills: {} })).toMatch(/has no skills list/);
  });

  it('servers: a label that is not one, a value that is not an object, a URL with a secret or of another scheme, neither url nor command, unknown fields, args not strings', () => {
    const at = (servers: unknown) => refusal({ ...valid(), servers });
    expect(at({ ...valid().servers, 'Bad Label': STDIO })).toMatch(/servers\.Bad Label: is not a server label/);
    expect(at({ ...valid().servers, extra: 'https://x/' })).toMatch(/servers\.extra: a server is not an object/);
    expect(at({ ...valid().servers, zeta: { url: 'https://skills.example.com/?token=abc' } })).toMatch(/servers\.zeta: has a url with credentials or a query; a lockfile holds no secret/);
    expect(at({ ...valid().servers, zeta: { url: 'https://me:pw@skills.example.com/' } })).toMatch(/servers\.zeta: has a url with credentials/);
    expect(at({ ...valid().servers, zeta: { url: 'file:///etc/passwd' } })).toMatch(/servers\.zeta: has a file: url/);
    expect(at({ ...valid().servers, zeta: { url: 'not a url' } })).toMatch(/servers\.zeta: has a url that is not a URL/);
    expect(at({ ...valid().servers, zeta: { name: 'x' } })).toMatch(/servers\.zeta: names neither a url nor a command/);
    expect(at({ ...valid().servers, zeta: { url: 'https://x/', headers: { Authorization: 'Bearer s' } } })).toMatch(/servers\.zeta: has unknown field "headers"/);
    expect(at({ ...valid().servers, demo: { ...STDIO, env: { TOKEN: 's' } } })).toMatch(/servers\.demo: has unknown field "env"/);
    expect(at({ ...valid().servers, demo: { command: 'node', args: [1] } })).toMatch(/servers\.demo: has no args\[0\]/);
    expect(at({ ...valid().servers, demo: { command: 'node', args: 'x' } })).toMatch(/servers\.demo: has args that are not a list of strings/);
  });

  it('a skill whose server the lockfile does not list, or whose label is not one', () => {
    const lock = valid();
    lock.skills[0]!.server = 'gone';
    expect(refusal(lock)).toMatch(/skills\[0\] \(gone\/ops\/deploy\): names server "gone", which the lockfile's servers do not list/);
    lock.skills[0]!.server = 'Gone';
    expect(refusal(lock)).toMatch(/skills\[0\] \(Gone\/ops\/deploy\): names a server that is not a label/);
  });

  it('a skill of server "constructor" (a valid label, and a name every object inherits) is not taken for a listed server', () => {
    const lock = valid();
    lock.skills[1]!.server = 'constructor';
    expect(refusal(lock)).toMatch(/skills\[1\] \(constructor\/y\): names server "constructor", which the lockfile's servers do not list/);
  });

  it('a skill path or file path that escapes or is not confined', () => {
    for (const [bad, why] of [
      ['../outside', /has an empty, "\." or "\.\." segment/],
      ['a/../../b', /has an empty, "\." or "\.\." segment/],
      ['/etc', /is absolute or has a backslash/],
      ['a\\b', /is absolute or has a backslash/],
      ['a//b', /has an empty, "\." or "\.\." segment/],
      ['./a', /has an empty, "\." or "\.\." segment/],
      ['a\nb', /has a control character/],
    ] as const) {
      const lock = valid();
      lock.skills[1]!.path = bad;
      const message = refusal(lock);
      expect(message, bad).toContain(`skills[1] (demo/${bad.replace('\n', '\\u000a')})`);
      expect(message, bad).toMatch(why);
      const lockFile = valid();
      lockFile.skills[1]!.files[1]!.path = bad;
      expect(refusal(lockFile), bad).toMatch(new RegExp(`skills\\[1\\] \\(demo/y\\) files\\[1\\]: has a path that ${why.source}`));
    }
  });

  it('a path that is not where its URI is: the skill\'s (a policy\'s path rule judges the path) and each file\'s', () => {
    // Skill x's files and URIs under the path of y: a policy allowing only "y" would let x through.
    const moved = valid();
    const x = moved.skills.find((skill) => skill.path === 'x')!;
    x.path = 'allowed/x';
    expect(refusal(moved)).toMatch(/skills\[2\] \(demo\/allowed\/x\): has uri skill:\/\/x\/SKILL\.md, which is not the SKILL\.md of its path/);
    // A file shown as a harmless reference whose URI is a script elsewhere in the skill.
    const file = valid();
    const y = file.skills.find((skill) => skill.path === 'y')!;
    y.files[1]!.uri = 'skill://y/scripts/run.sh';
    y.resourcesDigest = setDigestOf(y.files);
    expect(refusal(file)).toMatch(/skills\[1\] \(demo\/y\) files\[1\]: has uri skill:\/\/y\/scripts\/run\.sh, which is not where its path references\/a\.md is/);
    // A name (what the entry in a skills root is called) that is not its folder's, as a server's never is.
    const named = valid();
    named.skills.find((skill) => skill.path === 'y')!.name = 'x';
    expect(refusal(named)).toMatch(/skills\[1\] \(demo\/y\): has name "x"; a skill's name is its folder's \("y"\)/);
  });

  it('URIs spelled with escapes, and skills under another scheme, are where their paths say', () => {
    const spelled = lockedEntry('demo', 'my skill', { 'SKILL.md': skillText('my-skill'), 'notes/a b.md': 'x\n' });
    spelled.uri = 'skill://my%20skill/SKILL.md';
    spelled.files = spelled.files.map((file) => ({ ...file, uri: file.uri.replaceAll(' ', '%20') }));
    spelled.resourcesDigest = setDigestOf(spelled.files);
    const other = lockedEntry('demo', 'x', { 'SKILL.md': skillText('gh'), 'a.md': 'a\n' });
    other.path = 'github:/o/r/x';
    other.uri = 'github://o/r/x/SKILL.md';
    other.files = other.files.map((file) => ({ ...file, uri: `github://o/r/x/${file.path}` }));
    other.resourcesDigest = setDigestOf(other.files);
    const lock = parseLockfile(lockText(rawLockfile({ demo: STDIO }, [spelled, other])), FILE);
    expect(lock.skills.map((skill) => skill.path)).toEqual(['github:/o/r/x', 'my skill']);
  });

  it('digests that do not hold: a resourcesDigest not of its files, a skillDigest not its SKILL.md, a digest that is not sha256 hex', () => {
    const set = valid();
    set.skills[1]!.files[1]!.digest = sha256Of('edited by hand');
    expect(refusal(set)).toMatch(/skills\[1\] \(demo\/y\): has a resourcesDigest that does not match its files \(edited by hand, or damaged\)/);
    const skill = valid();
    skill.skills[1]!.skillDigest = sha256Of('other');
    expect(refusal(skill)).toMatch(/skills\[1\] \(demo\/y\): has a skillDigest that is not its SKILL\.md file's digest/);
    const upper = valid();
    upper.skills[1]!.files[0]!.digest = upper.skills[1]!.files[0]!.digest.toUpperCase().replace('SHA256', 'sha256');
    expect(refusal(upper)).toMatch(/skills\[1\] \(demo\/y\) files\[0\]: has a digest that is not sha256:<64 lowercase hex>/);
    const md5 = valid();
    md5.skills[1]!.resourcesDigest = 'md5:abc';
    expect(refusal(md5)).toMatch(/skills\[1\] \(demo\/y\): has a resourcesDigest that is not sha256/);
  });

  it('duplicate entries: the same server and path twice', () => {
    const twice = valid();
    twice.skills.push(copyOf(twice.skills[1]!));
    expect(refusal(twice)).toMatch(/skills\[3\] \(demo\/y\): locks the same skill as skills\[1\] \(demo\/y\)/);
  });

  it('a key given twice in one object (JSON.parse would keep the last, a reader of the diff may see the first)', () => {
    const text = lockText(valid());
    const grants = text.replace('"exec": true', '"exec": false,\n        "exec": true');
    expect(grants).not.toBe(text);
    expect(refusal(undefined, grants)).toMatch(/skills\[0\]\.grants, line \d+: "exec" is given twice \(which one holds would be a guess\)/);
    const top = text.replace(/\n}\n$/, ',\n  "skills": []\n}\n');
    expect(refusal(undefined, top)).toMatch(/line \d+: "skills" is given twice/);
  });

  it('files: none, a file listed twice, no SKILL.md with the skill URI, a size that is not whole bytes, unknown fields', () => {
    const none = valid();
    none.skills[1]!.files = [];
    expect(refusal(none)).toMatch(/skills\[1\] \(demo\/y\): has no files/);
    const twice = valid();
    twice.skills[1]!.files.push(copyOf(twice.skills[1]!.files[1]!));
    expect(refusal(twice)).toMatch(/skills\[1\] \(demo\/y\) files\[3\]: lists a file twice/);
    const noSkillMd = valid();
    noSkillMd.skills[1]!.files = noSkillMd.skills[1]!.files.filter((file) => file.path !== 'SKILL.md');
    expect(refusal(noSkillMd)).toMatch(/skills\[1\] \(demo\/y\): lists no SKILL\.md file with the skill's uri/);
    for (const size of [-1, 1.5, '3', null]) {
      const bad = valid();
      (bad.skills[1]!.files[0] as { size: unknown }).size = size;
      expect(refusal(bad), String(size)).toMatch(/skills\[1\] \(demo\/y\) files\[0\]: has a size that is not a whole number of bytes/);
    }
    const extra = valid();
    (extra.skills[1]!.files[0] as unknown as Record<string, unknown>).mode = 0o755;
    expect(refusal(extra)).toMatch(/skills\[1\] \(demo\/y\) files\[0\]: has unknown field "mode"/);
  });

  it('skills: unknown fields, grants of the wrong shape, missing fields, strings over the bound', () => {
    const extra = valid();
    (extra.skills[2] as unknown as Record<string, unknown>).postinstall = 'rm -rf ~';
    expect(refusal(extra)).toMatch(/skills\[2\]: has unknown field "postinstall"/);
    const grants = valid();
    (grants.skills[1]!.grants as Record<string, unknown>).hooks = true;
    expect(refusal(grants)).toMatch(/skills\[1\] \(demo\/y\): has unknown field "hooks"/);
    const exec = valid();
    (exec.skills[1]!.grants as Record<string, unknown>).exec = 'yes';
    expect(refusal(exec)).toMatch(/skills\[1\] \(demo\/y\): has grants\.exec that is not true or false/);
    const tools = valid();
    (tools.skills[1]!.grants as Record<string, unknown>).allowedTools = true;
    expect(refusal(tools)).toMatch(/skills\[1\] \(demo\/y\): has grants\.allowedTools that is neither a string nor null/);
    const noName = valid();
    (noName.skills[1] as Partial<RawLockfile['skills'][number]>).name = undefined;
    expect(refusal(noName)).toMatch(/skills\[1\] \(demo\/y\): has no name/);
    const long = valid();
    long.skills[1]!.name = 'n'.repeat(5000);
    expect(refusal(long)).toMatch(/skills\[1\] \(demo\/y\): has a name over 4096 characters/);
    const notObject = valid();
    (notObject.skills as unknown[])[1] = 'demo/y';
    expect(refusal(notObject)).toMatch(/skills\[1\]: a skill is not an object/);
  });

  it('bounds: over 20,000 skills, over 10,000 files in one skill', () => {
    expect(refusal({ ...valid(), skills: new Array(20_001).fill(null) })).toMatch(/locks 20001 skills; at most 20000/);
    const many = valid();
    many.skills[1]!.files = new Array(10_001).fill(many.skills[1]!.files[0]);
    expect(refusal(many)).toMatch(/skills\[1\] \(demo\/y\): lists 10001 files; at most 10000/);
  });
});

describe('readLockfile', () => {
  it('none: undefined; a folder, or a symbolic link (even to a lockfile): refused; over the limit: refused by its size, without reading it', async () => {
    const dir = await temps.make();
    const file = path.join(dir, 'skills-lock.json');
    expect(await readLockfile(file)).toBeUndefined();
    await mkdir(file);
    await expect(readLockfile(file)).rejects.toThrow(/skills-lock\.json: is a folder; a lockfile is a regular file in the project/);
    const good = path.join(dir, 'good.json');
    await writeFile(good, serializeLockfile(emptyLockfile()));
    const linked = path.join(dir, 'linked.json');
    await symlink(good, linked);
    await expect(readLockfile(linked)).rejects.toThrow(/linked\.json: is a symbolic link; a lockfile is a regular file in the project/);
    const big = path.join(dir, 'big.json');
    await writeFile(big, '');
    await truncate(big, MAX_LOCKFILE_BYTES + 1);
    await expect(readLockfile(big)).rejects.toThrow(new RegExp(`big\\.json: is ${MAX_LOCKFILE_BYTES + 1} bytes; a lockfile is at most ${MAX_LOCKFILE_BYTES}`));
  });

  it('a lockfile that is a FIFO is refused at once, never waited on for a writer', async () => {
    const dir = await temps.make();
    const file = path.join(dir, 'skills-lock.json');
    execFileSync('mkfifo', [file]);
    const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('still waiting after 2 s'), 2_000).unref());
    try {
      const outcome = await Promise.race([readLockfile(file).then(() => 'read', (error: Error) => error.message), timeout]);
      expect(outcome).toMatch(/skills-lock\.json: is not a regular file/);
    } finally {
      // A reader blocked in open(2) is let go by a writer opening the other end.
      try {
        closeSync(openSync(file, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // No reader waits: nothing to let go.
      }
    }
  });

  it('reads what serialize wrote', async () => {
    const file = path.join(await temps.make(), 'skills-lock.json');
    const text = serializeLockfile(parseLockfile(lockText(sample()), FILE));
    await writeFile(file, text);
    expect(serializeLockfile((await readLockfile(file))!)).toBe(text);
  });
});
