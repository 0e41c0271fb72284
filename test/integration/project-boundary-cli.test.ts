// A cloned repository is hostile input, and one project never changes another's folders: through
// the built CLI, with a real skills-serve over Streamable HTTP and no FUSE. A lockfile that is a
// symbolic link (or not JSON) is refused by name without a byte of it shown; a harness folder the
// repository commits as a symbolic link is refused by name, and nothing is written where it
// points; linking one project (once, or with --watch) leaves another project's entries, judged
// with another configuration, as they are.
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { startHttpServe, type ListeningServer } from '../support/http-server.js';
import { writeTree } from '../support/skill-builder.js';
import { cli, gitProject, namesIn, person, replaceByRename, startCli, writeConfig, type CliResult, type Person } from '../support/team-lock-world.js';
import { lockedEntry, lockText, rawLockfile, skillText } from '../support/team-lockfile.js';
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

/** A lockfile locking alpha and beta of the served folder under `label`. */
function lockOf(label: string): string {
  return lockText(rawLockfile({ [label]: { url: server.url } }, [lockedEntry(label, 'alpha', ALPHA), lockedEntry(label, 'beta', BETA)]));
}

/** A person whose default configuration names the server as "team". */
async function teammate(name: string): Promise<Person> {
  const who = await person(base, name);
  await writeConfig(who, { team: { url: server.url } });
  return who;
}

function output(result: CliResult): string {
  return `${result.stdout}\n${result.stderr}`;
}

function expectOk(result: CliResult): void {
  expect(result.code, output(result)).toBe(0);
}

/** Until `read` gives what `done` accepts, or `timeoutMs` passes (then fails saying `what`). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, what: string, detail: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await read();
    if (done(last)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms (last: ${JSON.stringify(last)})\n${detail()}`);
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

describe('a harness folder the repository commits as a symbolic link', () => {
  /** A project locking alpha and beta, whose `.claude` is a symbolic link to `target`. */
  async function linkedClaude(name: string, target: (project: string) => Promise<{ link: string; dir: string }>): Promise<{ project: string; dir: string }> {
    const project = await gitProject(path.join(base, `project-${name}`));
    await writeFile(path.join(project, LOCKFILE), lockOf('team'));
    const { link, dir } = await target(project);
    await mkdir(dir, { recursive: true });
    await symlink(link, path.join(project, '.claude'));
    return { project, dir };
  }

  it('.claude -> ../elsewhere and .claude -> /tmp/…: claude-code refused by name with the path, nonzero exit, nothing written there; codex in the same run is linked', async () => {
    const who = await teammate('harness-link');
    const absolute = await makeTempDir('project-boundary-elsewhere-');
    made.push(absolute);
    const cases = [
      await linkedClaude('relative', async (project) => ({ link: '../elsewhere', dir: path.join(path.dirname(project), 'elsewhere') })),
      await linkedClaude('absolute', async () => ({ link: absolute, dir: absolute })),
    ];
    for (const { project, dir } of cases) {
      const result = await cli(who, ['link', 'claude-code', 'codex', '--project', project]);
      expect(result.code, output(result)).toBe(1);
      expect(result.stdout).toContain(`claude-code: ${path.join(project, '.claude')} is a symbolic link; link --project writes only inside the project, so nothing is linked there`);
      expect(await namesIn(dir), output(result)).toEqual([]);
      // The other harness's folder is the project's own: linked as usual.
      expect(await namesIn(path.join(project, '.agents', 'skills')), output(result)).toEqual(['alpha', 'beta']);
      // Linking again, and unlinking, write nothing there either.
      expect((await cli(who, ['link', 'claude-code', '--project', project])).code).toBe(1);
      expectOk(await cli(who, ['unlink', 'claude-code', '--project', project]));
      expect(await namesIn(dir)).toEqual([]);
    }
  });

  it('a skills folder linked elsewhere inside .claude is refused the same', async () => {
    const who = await teammate('harness-skills-link');
    const project = await gitProject(path.join(base, 'project-skills-link'));
    await writeFile(path.join(project, LOCKFILE), lockOf('team'));
    const home = path.join(who.home, '.claude', 'skills');
    await mkdir(home, { recursive: true });
    await mkdir(path.join(project, '.claude'));
    await symlink(home, path.join(project, '.claude', 'skills'));
    const result = await cli(who, ['link', 'claude-code', '--project', project]);
    expect(result.code, output(result)).toBe(1);
    expect(result.stdout).toContain(`claude-code: ${path.join(project, '.claude', 'skills')} is a symbolic link; link --project writes only inside the project`);
    expect(await namesIn(home)).toEqual([]);
  });

  it('link --watch does not follow a .claude that becomes a symbolic link later (a git pull)', async () => {
    const who = await teammate('harness-watch');
    const project = await gitProject(path.join(base, 'project-watch'));
    const lockfile = path.join(project, LOCKFILE);
    await writeFile(lockfile, lockText(rawLockfile({ team: { url: server.url } }, [lockedEntry('team', 'alpha', ALPHA)])));
    const root = path.join(project, '.claude', 'skills');
    const elsewhere = path.join(base, 'watch-elsewhere');
    await mkdir(elsewhere);
    const watching = startCli(who, ['link', 'claude-code', '--project', project, '--watch']);
    try {
      await until(() => namesIn(root), (names) => names.join() === 'alpha', 30_000, 'the first sync', watching.stderr);
      await rm(path.join(project, '.claude'), { recursive: true });
      await symlink('../watch-elsewhere', path.join(project, '.claude'));
      // The pull brings a lockfile with beta too: a sync follows it, and must not follow .claude.
      await replaceByRename(lockfile, lockOf('team'));
      await until(async () => watching.stderr(), (text) => text.includes(`${path.join(project, '.claude')} is a symbolic link`), 10_000, 'the refusal said', watching.stderr);
      expect(await namesIn(elsewhere), watching.stderr()).toEqual([]);
    } finally {
      await watching.stop();
    }
  }, 60_000);
});

describe('one project never undoes another', () => {
  /** Project B locking team's alpha and beta, its .mcp.json naming team; project A whose .mcp.json names only docs, locking docs' alpha. */
  async function twoProjects(name: string): Promise<{ a: string; b: string; bRoots: string[] }> {
    const b = await gitProject(path.join(base, `${name}-b`));
    await writeFile(path.join(b, '.mcp.json'), JSON.stringify({ mcpServers: { team: { type: 'http', url: server.url } } }));
    await writeFile(path.join(b, LOCKFILE), lockOf('team'));
    const a = await gitProject(path.join(base, `${name}-a`));
    await writeFile(path.join(a, '.mcp.json'), JSON.stringify({ mcpServers: { docs: { type: 'http', url: server.url } } }));
    await writeFile(path.join(a, LOCKFILE), lockText(rawLockfile({ docs: { url: server.url } }, [lockedEntry('docs', 'alpha', ALPHA)])));
    return { a, b, bRoots: [path.join(b, '.claude', 'skills'), path.join(b, '.agents', 'skills')] };
  }

  it('linking project A with a configuration lacking B\'s server leaves B\'s entries, and verify --project in B passes', async () => {
    const who = await person(base, 'two-projects');
    const { a, b, bRoots } = await twoProjects('two');
    expectOk(await cli(who, ['link', 'claude-code', 'codex', '--project', '.', '--config', '.mcp.json'], { cwd: b }));
    for (const root of bRoots) expect(await namesIn(root)).toEqual(['alpha', 'beta']);

    const linkedA = await cli(who, ['link', 'claude-code', '--project', '.', '--config', '.mcp.json'], { cwd: a });
    expectOk(linkedA);
    expect(await namesIn(path.join(a, '.claude', 'skills'))).toEqual(['alpha']);
    expect(output(linkedA)).not.toContain(b);
    for (const root of bRoots) expect(await namesIn(root), output(linkedA)).toEqual(['alpha', 'beta']);
    expectOk(await cli(who, ['verify', '--project', '.'], { cwd: b }));
  });

  it('link --watch in project A (the link keeper a mount runs too) leaves B\'s entries when B\'s lockfile changes', async () => {
    const who = await person(base, 'two-watch');
    const { a, b, bRoots } = await twoProjects('watch');
    expectOk(await cli(who, ['link', 'claude-code', 'codex', '--project', '.', '--config', '.mcp.json'], { cwd: b }));
    const watching = startCli(who, ['link', 'claude-code', '--project', a, '--config', path.join(a, '.mcp.json'), '--watch']);
    try {
      await until(() => namesIn(path.join(a, '.claude', 'skills')), (names) => names.join() === 'alpha', 30_000, 'the first sync', watching.stderr);
      // B's lockfile replaced (a pull): the keeper watches it, and syncs.
      await replaceByRename(path.join(b, LOCKFILE), lockText(rawLockfile({ team: { url: server.url } }, [lockedEntry('team', 'alpha', ALPHA)])));
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      for (const root of bRoots) expect(await namesIn(root), watching.stderr()).toEqual(['alpha', 'beta']);
    } finally {
      await watching.stop();
    }
    // B's own next link follows its own lock, with its own configuration.
    expectOk(await cli(who, ['link', 'claude-code', 'codex', '--project', '.', '--config', '.mcp.json'], { cwd: b }));
    for (const root of bRoots) expect(await namesIn(root)).toEqual(['alpha']);
    expectOk(await cli(who, ['verify', '--project', '.'], { cwd: b }));
  }, 60_000);
});
