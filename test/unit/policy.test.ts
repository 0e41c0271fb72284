// The policy: which servers may be mounted, approved, locked or linked, which skills, which
// grants are never given; the machine policy honoured only when root alone controls it; every
// file that cannot be honoured refusing everything; every refusal naming the file and the rule.
import { chmod, chown, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../../src/config/server-config.js';
import { PathGlob } from '../../src/team/path-glob.js';
import { loadPolicy, MAX_POLICY_BYTES, Policy, PolicyRefusal, type PolicyAction, type PolicyServer } from '../../src/team/policy.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('policy-');
afterEach(() => temps.removeAll());

const ALL: PolicyAction[] = ['mount', 'approve', 'lock', 'link'];
const digest = (char: string) => `sha256:${char.repeat(64)}`;

function http(label: string, url: string): PolicyServer {
  return { label, config: { kind: 'http', url, headers: {} } };
}

function stdio(label: string, command: string, args: string[] = []): PolicyServer {
  const config: ServerConfig = { kind: 'stdio', command, args, env: {}, cwd: undefined };
  return { label, config };
}

/** A machine folder (etc/skills-mount) and a user config home in a temp dir; `owners` fakes who owns what under it (default root). */
interface Place {
  base: string;
  machine: string;
  user: string;
  owners: Map<string, number>;
  load(): Promise<Policy>;
}

async function place(): Promise<Place> {
  const base = await temps.make();
  const machine = path.join(base, 'etc', 'skills-mount', 'policy.json');
  const configHome = path.join(base, 'config');
  const user = path.join(configHome, 'skills-mount', 'policy.json');
  const owners = new Map<string, number>();
  return {
    base,
    machine,
    user,
    owners,
    // Every entry on the way stands as root's unless `owners` says otherwise (the modes are real).
    load: () =>
      loadPolicy({
        env: { XDG_CONFIG_HOME: configHome },
        home: base,
        platform: 'linux',
        machinePath: machine,
        ownerUidOf: (at) => owners.get(at) ?? 0,
      }),
  };
}

async function write(file: string, content: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
}

function expectRefusal(refusal: PolicyRefusal | undefined, file: string, rule: string | RegExp, what?: string): void {
  expect(refusal).toBeInstanceOf(PolicyRefusal);
  expect(refusal!.code).toBe('POLICY');
  expect(refusal!.file).toBe(file);
  if (typeof rule === 'string') expect(refusal!.rule).toBe(rule);
  else expect(refusal!.rule).toMatch(rule);
  expect(refusal!.message).toContain(`refused by policy ${file} (${refusal!.rule}): `);
  if (what !== undefined) expect(refusal!.message).toContain(what);
}

/** The policy of one machine file with `document`. */
async function machinePolicy(document: unknown): Promise<{ policy: Policy; file: string }> {
  const at = await place();
  await write(at.machine, document);
  return { policy: await at.load(), file: at.machine };
}

describe('server rules', () => {
  it('a url rule matches the same origin: host case and default port do not matter; scheme, port and host do', async () => {
    const { policy, file } = await machinePolicy({ policyVersion: 1, servers: [{ url: 'https://Skills.Example.com/team/', may: ALL }] });
    for (const url of ['https://skills.example.com/team/x', 'https://SKILLS.EXAMPLE.COM:443/team/x', 'https://skills.example.com./team/mcp']) {
      expect(policy.checkServer(http('acme', url), 'link')).toBeUndefined();
    }
    for (const url of ['http://skills.example.com/team/x', 'https://skills.example.com:8443/team/x', 'https://evil.example.com/team/x', 'https://skills.example.com.evil.org/team/x']) {
      expectRefusal(policy.checkServer(http('acme', url), 'link'), file, 'servers: no rule matches', 'server "acme" (');
    }
    const refusal = policy.checkServer(http('acme', 'http://skills.example.com/team/x?token=secret'), 'link');
    expect(refusal!.message).toBe(`refused by policy ${file} (servers: no rule matches): server "acme" (http://skills.example.com/team/x) may not be linked`);
  });

  it('a url rule with a port matches that port only', async () => {
    const { policy, file } = await machinePolicy({ policyVersion: 1, servers: [{ url: 'http://127.0.0.1:8080/', may: ALL }] });
    expect(policy.checkServer(http('local', 'http://127.0.0.1:8080/mcp'), 'mount')).toBeUndefined();
    expectRefusal(policy.checkServer(http('local', 'http://127.0.0.1:8081/mcp'), 'mount'), file, 'servers: no rule matches', 'may not be mounted');
    expectRefusal(policy.checkServer(http('local', 'http://127.0.0.1/mcp'), 'mount'), file, 'servers: no rule matches');
  });

  it('a url rule path matches at a segment boundary, in the form the server would read the URL', async () => {
    const { policy, file } = await machinePolicy({ policyVersion: 1, servers: [{ url: 'https://x.example/team/', may: ALL }] });
    for (const url of ['https://x.example/team', 'https://x.example/team/', 'https://x.example/team/x/y', 'https://x.example/te%61m/x', 'https://x.example//team/x', 'https://x.example/a/../team/x']) {
      expect(policy.checkServer(http('a', url), 'approve'), url).toBeUndefined();
    }
    for (const url of ['https://x.example/teamwork', 'https://x.example/', 'https://x.example/Team/x', 'https://x.example/team/../admin', 'https://x.example/team/%2e%2e/admin']) {
      expectRefusal(policy.checkServer(http('a', url), 'approve'), file, 'servers: no rule matches', 'may not be approved');
    }
  });

  it('the first rule that matches decides: a narrower refusal before a wider allowance holds', async () => {
    const { policy, file } = await machinePolicy({
      policyVersion: 1,
      servers: [
        { url: 'https://x.example/admin/', may: [] },
        { url: 'https://x.example/', may: ['mount', 'link'] },
        { url: 'https://x.example/admin/', may: ALL },
      ],
    });
    expectRefusal(policy.checkServer(http('adm', 'https://x.example/admin/mcp'), 'mount'), file, 'servers[0]', 'server "adm" (https://x.example/admin/mcp) may not be mounted');
    // Spellings of the same path cannot step around the refusal.
    expectRefusal(policy.checkServer(http('adm', 'https://x.example/%61dmin/mcp'), 'mount'), file, 'servers[0]');
    expectRefusal(policy.checkServer(http('adm', 'https://x.example//admin/mcp'), 'mount'), file, 'servers[0]');
    expectRefusal(policy.checkServer(http('adm', 'https://x.example./admin'), 'mount'), file, 'servers[0]');
    expect(policy.checkServer(http('docs', 'https://x.example/docs'), 'link')).toBeUndefined();
    expectRefusal(policy.checkServer(http('docs', 'https://x.example/docs'), 'approve'), file, 'servers[1]', 'server "docs" (https://x.example/docs) may not be approved');
    expect(policy.allowedActions(http('docs', 'https://x.example/docs'))).toEqual(['mount', 'link']);
    expect(policy.allowedActions(http('adm', 'https://x.example/admin'))).toEqual([]);
  });

  it('an sse server is judged by its URL as an http one is', async () => {
    const { policy, file } = await machinePolicy({ policyVersion: 1, servers: [{ url: 'https://x.example/', may: ['mount'] }] });
    const sse: PolicyServer = { label: 'old', config: { kind: 'sse', url: 'https://x.example/sse', headers: {} } };
    expect(policy.checkServer(sse, 'mount')).toBeUndefined();
    expectRefusal(policy.checkServer(sse, 'lock'), file, 'servers[0]', 'may not be locked');
  });

  it('a bare command rule matches that basename anywhere; a path matches that path only; args must lead', async () => {
    const { policy, file } = await machinePolicy({
      policyVersion: 1,
      servers: [
        { command: 'skills-serve', args: ['./skills'], may: ['mount', 'link'] },
        { command: '/opt/bin/tool', may: ALL },
      ],
    });
    for (const server of [stdio('s', 'skills-serve', ['./skills']), stdio('s', '/usr/local/bin/skills-serve', ['./skills', '--watch']), stdio('s', './skills-serve', ['./skills'])]) {
      expect(policy.checkServer(server, 'link')).toBeUndefined();
    }
    for (const server of [stdio('s', 'skills-serve', ['./other']), stdio('s', 'skills-serve', []), stdio('s', 'skills-serve-evil', ['./skills']), stdio('s', 'skills', ['./skills'])]) {
      expectRefusal(policy.checkServer(server, 'link'), file, 'servers: no rule matches');
    }
    expectRefusal(policy.checkServer(stdio('s', 'skills-serve', ['./skills']), 'approve'), file, 'servers[0]', 'server "s" (command skills-serve) may not be approved');
    expect(policy.checkServer(stdio('t', '/opt/bin/tool', ['--any']), 'approve')).toBeUndefined();
    expectRefusal(policy.checkServer(stdio('t', '/usr/bin/tool'), 'approve'), file, 'servers: no rule matches');
    expectRefusal(policy.checkServer(stdio('t', 'tool'), 'approve'), file, 'servers: no rule matches');
    // A URL rule never matches a stdio server, nor a command rule an http one.
    expectRefusal(policy.checkServer(http('h', 'https://skills-serve/'), 'mount'), file, 'servers: no rule matches');
  });

  it('with no "servers" every server may do everything', async () => {
    const { policy } = await machinePolicy({ policyVersion: 1, neverGrant: ['exec'] });
    expect(policy.inForce).toBe(true);
    expect(policy.allowedActions(http('a', 'https://anything.example/'))).toEqual(ALL);
    expect(policy.allowedActions(stdio('b', 'anything'))).toEqual(ALL);
  });
});

describe('skill rules', () => {
  const server = http('acme', 'https://x.example/');

  it('only skills matching a path or digest rule may be approved, locked or linked; mounting is not limited', async () => {
    const { policy, file } = await machinePolicy({ policyVersion: 1, skills: [{ path: 'acme/**' }, { digest: digest('A') }] });
    expect(policy.checkSkill(server, { path: 'acme/billing' }, 'approve')).toBeUndefined();
    expect(policy.checkSkill(server, { path: 'other/x', skillDigest: digest('a') }, 'lock')).toBeUndefined();
    expect(policy.checkSkill(server, { path: 'other/x', skillDigest: digest('b'), resourcesDigest: digest('a') }, 'link')).toBeUndefined();
    expectRefusal(policy.checkSkill(server, { path: 'other/x', skillDigest: digest('b'), resourcesDigest: null }, 'link'), file, 'skills: no rule matches', 'skill "other/x" of server "acme" (https://x.example/) may not be linked');
    expect(policy.checkSkill(server, { path: 'other/x' }, 'mount')).toBeUndefined();
    expect(policy.checkApprovedView(server, { path: 'acme/x' })).toBeUndefined();
    expectRefusal(policy.checkApprovedView(server, { path: 'other/x' }), file, 'skills: no rule matches', 'may not be approved');
  });

  it('a path that is not plain is matched as given, so "acme/../secret" is not under acme/**', async () => {
    const { policy, file } = await machinePolicy({ policyVersion: 1, skills: [{ path: 'acme/**' }, { path: 'a.c' }, { path: '[ab]/(x)+' }] });
    for (const path of ['acme/../secret', 'acme/./x', '/acme/x', 'acme//x', '', 'abc', 'b/xx', 'acmex/y']) {
      expectRefusal(policy.checkSkill(server, { path }, 'approve'), file, 'skills: no rule matches');
    }
    expect(policy.checkSkill(server, { path: 'a.c' }, 'approve')).toBeUndefined();
    expect(policy.checkSkill(server, { path: '[ab]/(x)+' }, 'approve')).toBeUndefined();
    // A skill path from the server is escaped in the message.
    expect(policy.checkSkill(server, { path: 'x\nrefused by policy /etc/forged' }, 'approve')!.message).toContain('skill "x\\u000arefused by policy /etc/forged"');
  });

  it('checkSkill includes the server check, and names the server rule first', async () => {
    const { policy, file } = await machinePolicy({ policyVersion: 1, servers: [{ url: 'https://x.example/', may: ['mount'] }], skills: [{ path: 'acme/**' }] });
    expectRefusal(policy.checkSkill(server, { path: 'acme/x' }, 'approve'), file, 'servers[0]', 'skill "acme/x" of server "acme" (https://x.example/) may not be approved');
  });

  it('a path pattern with "." or ".." segments, a leading "/" or an empty segment is refused, not half-read', async () => {
    for (const pattern of ['acme/../secret', './acme', '/acme/**', 'acme//x', 'acme/']) {
      const { policy, file } = await machinePolicy({ policyVersion: 1, skills: [{ path: pattern }] });
      expectRefusal(policy.checkServer(server, 'mount'), file, /^not honoured: skills\[0\]\.path: "[^"]+" (has|starts)/);
    }
  });
});

describe('path globs', () => {
  const matches = (pattern: string, path: string) => PathGlob.compile(pattern).matches(path);

  it('* is one segment (or part of one), ? one character, ** any number of segments', () => {
    expect(matches('acme/**', 'acme')).toBe(true);
    expect(matches('acme/**', 'acme/a/b/c')).toBe(true);
    expect(matches('acme/**', 'acmes/a')).toBe(false);
    expect(matches('**/review', 'review')).toBe(true);
    expect(matches('**/review', 'a/b/review')).toBe(true);
    expect(matches('**/review', 'a/b/review/x')).toBe(false);
    expect(matches('a/**/z', 'a/z')).toBe(true);
    expect(matches('a/**/z', 'a/b/c/z')).toBe(true);
    expect(matches('*/review', 'team/review')).toBe(true);
    expect(matches('*/review', 'a/b/review')).toBe(false);
    expect(matches('pdf-*', 'pdf-tools')).toBe(true);
    expect(matches('pdf-*', 'pdf-tools/x')).toBe(false);
    expect(matches('a?c', 'abc')).toBe(true);
    expect(matches('a?c', 'a/c')).toBe(false);
    expect(matches('a?c', 'ac')).toBe(false);
    expect(matches('caf?', 'café')).toBe(true);
  });

  it('regular expression characters stand for themselves', () => {
    expect(matches('a.c', 'abc')).toBe(false);
    expect(matches('.*', 'x')).toBe(false);
    expect(matches('.*', '.hidden')).toBe(true);
    expect(matches('[a-z]', 'b')).toBe(false);
    expect(matches('[a-z]', '[a-z]')).toBe(true);
    expect(matches('a+', 'aa')).toBe(false);
    expect(matches('^a$|b', '^a$|b')).toBe(true);
    expect(matches('\\d', '\\d')).toBe(true);
  });

  it('a pattern built to backtrack costs no more than pattern × path steps', () => {
    const started = Date.now();
    const pattern = `${'*a'.repeat(40)}*b`;
    expect(matches(pattern, 'a'.repeat(20_000))).toBe(false);
    expect(matches(`${'**/'.repeat(30)}b`, Array(2_000).fill('a').join('/'))).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('grants never given', () => {
  const server = http('acme', 'https://x.example/');

  it('a grant in neverGrant is refused, and stripped where a caller strips', async () => {
    const { policy, file } = await machinePolicy({ policyVersion: 1, neverGrant: ['allowed-tools'] });
    expectRefusal(policy.checkGrants(server, { allowedTools: true, exec: false }), file, 'neverGrant', 'server "acme" (https://x.example/) may not be granted allowed-tools');
    expect(policy.checkGrants(server, { allowedTools: false, exec: true })).toBeUndefined();
    expect(policy.allowedGrants({ allowedTools: true, exec: true })).toEqual({ allowedTools: false, exec: true });
    const both = await machinePolicy({ policyVersion: 1, neverGrant: ['allowed-tools', 'exec'] });
    expectRefusal(both.policy.checkGrants(server, { allowedTools: false, exec: true }), both.file, 'neverGrant', 'may not be granted exec');
    expect(both.policy.allowedGrants({ allowedTools: true, exec: true })).toEqual({ allowedTools: false, exec: false });
  });

  it('an unknown grant is refused as a format error', async () => {
    const { policy, file } = await machinePolicy({ policyVersion: 1, neverGrant: ['network'] });
    expectRefusal(policy.checkGrants(server, { allowedTools: true, exec: false }), file, 'not honoured: neverGrant[0]: "network" is not a grant (allowed-tools, exec)');
  });
});

describe('loading: no file, both files, and failing closed', () => {
  const server = http('acme', 'https://x.example/');

  it('no file is no policy: everything allowed, and describe() says so', async () => {
    const at = await place();
    const policy = await at.load();
    expect(policy.inForce).toBe(false);
    expect(policy.allowedActions(server)).toEqual(ALL);
    expect(policy.checkSkill(server, { path: 'a' }, 'link')).toBeUndefined();
    expect(policy.allowedGrants({ allowedTools: true, exec: true })).toEqual({ allowedTools: true, exec: true });
    expect(policy.describe()).toEqual({
      inForce: false,
      files: [
        { path: at.machine, state: 'absent' },
        { path: at.user, state: 'absent' },
      ],
      lines: [`policy ${at.machine}: absent`, `policy ${at.user}: absent`, 'no policy in force: every server may be mounted, approved, locked and linked'],
    });
  });

  it('the user policy lives in the user config folder (XDG_CONFIG_HOME/skills-mount/policy.json)', async () => {
    const at = await place();
    await write(at.user, { policyVersion: 1, servers: [] });
    const policy = await at.load();
    expectRefusal(policy.checkServer(server, 'mount'), at.user, 'servers: no rule matches');
  });

  it('a user file that cannot be parsed refuses everything, naming the file, line and column', async () => {
    const at = await place();
    await write(at.user, '{\n  "policyVersion": 1,\n  "servers": [ { "url": "https://x.example/" "may": [] } ]\n}\n');
    const policy = await at.load();
    const why = `not honoured: line 3, column 46: expected ',' or '}', found '"may"'`;
    for (const action of ALL) expectRefusal(policy.checkServer(server, action), at.user, why);
    expectRefusal(policy.checkSkill(server, { path: 'a' }, 'approve'), at.user, why);
    expectRefusal(policy.checkGrants(server, { allowedTools: true, exec: false }), at.user, why);
    expect(policy.allowedGrants({ allowedTools: true, exec: true })).toEqual({ allowedTools: false, exec: false });
    expect(policy.inForce).toBe(true);
    expect(policy.describe().files[1]).toEqual({ path: at.user, state: why });
  });

  it('a user config folder that is a symbolic link: no file there is no policy; a file there is not honoured', async () => {
    const at = await place();
    const real = path.join(at.base, 'dotfiles', 'skills-mount');
    await mkdir(real, { recursive: true });
    await mkdir(path.dirname(path.dirname(at.user)), { recursive: true });
    await symlink(real, path.dirname(at.user));
    expect((await at.load()).inForce).toBe(false);
    await write(path.join(real, 'policy.json'), { policyVersion: 1 });
    expectRefusal((await at.load()).checkServer(server, 'mount'), at.user, `not honoured: policy directory ${path.dirname(at.user)} is a symbolic link; refusing it (configure the real directory instead)`);
  });

  it('a user file that others can write refuses everything', async () => {
    const at = await place();
    await write(at.user, { policyVersion: 1 });
    await chmod(at.user, 0o666);
    const policy = await at.load();
    expectRefusal(policy.checkServer(server, 'mount'), at.user, 'not honoured: has mode 0666: other users can write it, so its rules cannot be trusted; check its contents, then chmod 600 it');
  });

  it('a machine file not owned by root is not honoured: everything refused, naming the file and why', async () => {
    const at = await place();
    await write(at.machine, { policyVersion: 1 });
    at.owners.set(at.machine, 1000);
    const policy = await at.load();
    const refusal = policy.checkServer(server, 'link');
    expectRefusal(refusal, at.machine, 'not honoured: owned by uid 1000, must be root');
    expect(refusal!.message).toBe(`refused by policy ${at.machine} (not honoured: owned by uid 1000, must be root): server "acme" (https://x.example/) may not be linked`);
    expect(policy.describe().lines[0]).toBe(`policy ${at.machine}: not honoured, so every mount, approval, lock and link is refused: owned by uid 1000, must be root`);
  });

  it('a machine file that group or others can write is not honoured', async () => {
    for (const mode of [0o664, 0o646]) {
      const at = await place();
      await write(at.machine, { policyVersion: 1 });
      await chmod(at.machine, mode);
      const policy = await at.load();
      expectRefusal(policy.checkServer(server, 'mount'), at.machine, `not honoured: can be written by group or others (mode 0${mode.toString(8)}), must be writable by root only`);
    }
  });

  it('a machine folder others can write (sticky or not), or one on the way not owned by root, is not honoured (an open one on the way even before the file exists)', async () => {
    for (const mode of [0o775, 0o1777]) {
      const at = await place();
      await write(at.machine, { policyVersion: 1 });
      await chmod(path.dirname(at.machine), mode);
      expectRefusal((await at.load()).checkServer(server, 'mount'), at.machine, `not honoured: its folder ${path.dirname(at.machine)} can be written by group or others (mode ${mode.toString(8).padStart(4, '0')}), must be writable by root only`);
    }
    const open = await place();
    await mkdir(path.dirname(open.machine), { recursive: true });
    await chmod(path.dirname(path.dirname(open.machine)), 0o777);
    expectRefusal((await open.load()).checkServer(server, 'mount'), open.machine, `not honoured: its folder ${path.dirname(path.dirname(open.machine))} can be written by group or others (mode 0777), must be writable by root only`);
    const foreign = await place();
    await write(foreign.machine, { policyVersion: 1 });
    foreign.owners.set(path.join(foreign.base, 'etc'), 1000);
    expectRefusal((await foreign.load()).checkServer(server, 'mount'), foreign.machine, `not honoured: its folder ${path.join(foreign.base, 'etc')} is owned by uid 1000, must be root`);
  });

  it('a machine policy reached through root-owned links is honoured; through a link someone else owns it is not', async () => {
    const at = await place();
    const real = path.join(at.base, 'store', 'policy.json');
    await write(real, { policyVersion: 1, servers: [] });
    await mkdir(path.dirname(at.machine), { recursive: true });
    await symlink(real, at.machine);
    expectRefusal((await at.load()).checkServer(server, 'mount'), at.machine, 'servers: no rule matches');
    at.owners.set(at.machine, 1000);
    expectRefusal((await at.load()).checkServer(server, 'mount'), at.machine, `not honoured: the symbolic link ${at.machine} on the way to it is owned by uid 1000, must be root`);
  });

  it.runIf(process.getuid?.() === 0)('as root, a machine file really owned by another user is not honoured (no stand-in)', async () => {
    const base = await temps.make();
    const machine = path.join(base, 'policy.json');
    await write(machine, { policyVersion: 1 });
    await chown(machine, 65534, 65534);
    const policy = await loadPolicy({ env: { XDG_CONFIG_HOME: path.join(base, 'config') }, home: base, machinePath: machine });
    expectRefusal(policy.checkServer(server, 'mount'), machine, 'not honoured: owned by uid 65534, must be root');
  });

  it('the machine policy wins over a permissive user policy; a user may restrict themselves further', async () => {
    const at = await place();
    await write(at.machine, { policyVersion: 1, servers: [{ url: 'https://x.example/', may: ['mount', 'approve'] }], neverGrant: ['exec'] });
    await write(at.user, { policyVersion: 1, servers: [{ url: 'https://x.example/', may: ALL }] });
    const policy = await at.load();
    expectRefusal(policy.checkServer(server, 'link'), at.machine, 'servers[0]', 'may not be linked');
    expectRefusal(policy.checkGrants(server, { allowedTools: false, exec: true }), at.machine, 'neverGrant');

    await write(at.user, { policyVersion: 1, servers: [{ url: 'https://x.example/', may: ['mount'] }], skills: [{ path: 'mine/*' }] });
    const stricter = await at.load();
    expectRefusal(stricter.checkServer(server, 'approve'), at.user, 'servers[0]', 'may not be approved');
    expect(stricter.allowedActions(server)).toEqual(['mount']);
    expect(stricter.describe().lines).toEqual([
      `policy ${at.machine}: in force`,
      '  servers[0]: url https://x.example/ may mount, approve',
      '  any other server may do nothing',
      '  never granted: exec',
      `policy ${at.user}: in force`,
      '  servers[0]: url https://x.example/ may mount',
      '  any other server may do nothing',
      '  skills: only those matching path mine/* may be approved, locked or linked',
    ]);
  });

  it('a newer policyVersion, a missing or wrong one, unknown keys and a key given twice are refused by name', async () => {
    const cases: Array<[unknown, string]> = [
      [{ policyVersion: 2, somethingNew: true }, 'not honoured: was written for a newer skills-mount (policyVersion 2; this one reads policyVersion 1): upgrade skills-mount'],
      [{ servers: [] }, 'not honoured: has no "policyVersion" (write "policyVersion": 1)'],
      [{ policyVersion: '1' }, 'not honoured: "policyVersion" is "1"; it must be 1'],
      [{ policyVersion: 1, server: [] }, 'not honoured: unknown key "server" (known: policyVersion, servers, skills, neverGrant)'],
      [{ policyVersion: 1, servers: [{ url: 'https://x.example/', may: ALL, label: 'x' }] }, 'not honoured: servers[0]: unknown key "label" (known: url, command, args, may)'],
      [{ policyVersion: 1, servers: [{ url: 'https://x.example/', may: ['delete'] }] }, 'not honoured: servers[0].may[0]: "delete" is not an action (mount, approve, lock, link)'],
      [{ policyVersion: 1, servers: [{ url: 'https://x.example/' }] }, 'not honoured: servers[0]: has no "may" (the actions it allows: mount, approve, lock, link; [] for none)'],
      [{ policyVersion: 1, servers: [{ url: 'https://x.example/', command: 'x', may: [] }] }, 'not honoured: servers[0]: must have exactly one of "url" and "command"'],
      [{ policyVersion: 1, servers: [{ url: 'https://x.example/?a=b', may: [] }] }, 'not honoured: servers[0].url: "https://x.example/?a=b" has a user name, query or fragment; a rule names an origin and a path only'],
      [{ policyVersion: 1, servers: [{ url: 'file:///etc/', may: [] }] }, 'not honoured: servers[0].url: "file:///etc/" has scheme file, not http or https'],
      [{ policyVersion: 1, skills: [{ digest: 'sha256:abc' }] }, 'not honoured: skills[0].digest: is "sha256:abc", not "sha256:" and 64 hex digits'],
      ['{ "policyVersion": 1,\n  "neverGrant": [],\n  "neverGrant": ["exec"] }', 'not honoured: line 3, column 3: "neverGrant" is given twice in one object (which one holds would be a guess)'],
      ['[]', 'not honoured: is not a JSON object ({ "policyVersion": 1, ... })'],
    ];
    for (const [document, rule] of cases) {
      const { policy, file } = await machinePolicy(document);
      expectRefusal(policy.checkServer(server, 'mount'), file, rule);
    }
  });

  it('comments and trailing commas are fine', async () => {
    const { policy } = await machinePolicy('// the team policy\n{ "policyVersion": 1, /* nothing else */ "neverGrant": ["exec",], }\n');
    expect(policy.allowedGrants({ allowedTools: true, exec: true })).toEqual({ allowedTools: true, exec: false });
  });

  it('a file over 1 MiB is refused unread, machine or user', async () => {
    const huge = JSON.stringify({ policyVersion: 1, skills: Array.from({ length: 60_000 }, (_, index) => ({ path: `skill-${index}` })) });
    expect(huge.length).toBeGreaterThan(MAX_POLICY_BYTES);
    const at = await place();
    await write(at.machine, huge);
    await write(at.user, huge);
    const policy = await at.load();
    expectRefusal(policy.checkServer(server, 'mount'), at.machine, `not honoured: is more than ${MAX_POLICY_BYTES} bytes, more than a policy file may be`);
    expect(policy.describe().files[1]!.state).toBe(`not honoured: is ${Buffer.byteLength(huge)} bytes, more than a policy file can be`);
  });

  it('a machine path that is a folder, or a file that is not UTF-8, is not honoured', async () => {
    const at = await place();
    await mkdir(at.machine, { recursive: true });
    expectRefusal((await at.load()).checkServer(server, 'mount'), at.machine, 'not honoured: is a directory, not a regular file');
    const bytes = await place();
    await mkdir(path.dirname(bytes.machine), { recursive: true });
    await writeFile(bytes.machine, Buffer.from([0x7b, 0xff, 0x7d]));
    expectRefusal((await bytes.load()).checkServer(server, 'mount'), bytes.machine, 'not honoured: is not UTF-8 text');
  });
});
