// What a person reviewing a hostile server's skill is shown, through the built CLI against a real
// skills-serve over Streamable HTTP: a served file named `SKILL.md` + U+200B is shown escaped in
// `lock`'s review and in `outdated`, never as a second `SKILL.md`, and so is every invisible
// character of a diff line; `lock` with no terminal to ask on (stdin from /dev/null or a pipe)
// refuses as `approve` and `update` do, writing nothing.
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServe, type ListeningServer } from '../support/http-server.js';
import { skillMd, writeTree } from '../support/skill-builder.js';
import { cli, gitProject, person, type CliResult, type Person } from '../support/team-lock-world.js';
import { makeTempDir } from '../support/temp-dir.js';

/** `SKILL.md` and a zero-width space: a second file that a raw terminal shows as `SKILL.md`. */
const LOOK_ALIKE = 'SKILL.md\u200b';
/** Every character a terminal draws as nothing or reorders, as they may come in a served line. */
const INVISIBLE = /[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\u00ad]/u;

let base: string;
let served: string;
let server: ListeningServer;
let project: string;
let rae: Person;

beforeAll(async () => {
  base = await makeTempDir('review-reports-cli-');
  served = path.join(base, 'served');
  await writeTree(served, { 'gamma/SKILL.md': skillMd('gamma'), [`gamma/${LOOK_ALIKE}`]: 'not the skill\n' });
  server = await startHttpServe([served]);
  project = await gitProject(path.join(base, 'project'));
  await writeFile(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: { team: { url: server.url } } }));
  rae = await person(base, 'rae');
});
afterAll(async () => {
  await server?.stop();
  await rm(base, { recursive: true, force: true });
});

/** `skills-mount ARGS` as rae in the project, the project's .mcp.json as its configuration. */
function inProject(args: readonly string[], runUnder?: readonly string[]): Promise<CliResult> {
  return cli(rae, [...args, '--project', '.', '--config', '.mcp.json'], { cwd: project, runUnder });
}

/** The CLI's stdin from /dev/null, and from a pipe that says yes: no terminal either way. */
const NO_TERMINAL = {
  'stdin from /dev/null': ['sh', '-c', 'exec "$@" </dev/null', 'sh'],
  'echo y |': ['sh', '-c', 'echo y | "$@"', 'sh'],
};

/** Until `outdated --json` says the skill at `key` is `state`: skills-serve sees a change once its watch settles. */
async function untilOutdated(key: string, state: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const report = JSON.parse((await inProject(['outdated', '--json'])).stdout) as { skills: Array<{ server: string; path: string; state: string }> };
    if (report.skills.some((skill) => `${skill.server}/${skill.path}` === key && skill.state === state)) return;
    if (Date.now() > deadline) throw new Error(`${key} not ${state} within 15 s: ${JSON.stringify(report)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('look-alike names and invisible characters from a server', () => {
  it("lock's review shows SKILL.md + U+200B escaped, one plain SKILL.md line; outdated the same, and the diff's invisible characters escaped", async () => {
    const locked = await inProject(['lock', 'team/gamma', '--yes']);
    expect(locked.code, `${locked.stdout}\n${locked.stderr}`).toBe(0);
    expect(locked.stdout).not.toMatch(INVISIBLE);
    expect(locked.stdout).toMatch(/^ {4}SKILL\.md\\u200b +\d+ B {2}sha256:/m);
    expect(locked.stdout.split('\n').filter((line) => /^\s+SKILL\.md\b/.test(line))).toHaveLength(2);
    expect(locked.stdout.split('\n').filter((line) => /^\s+SKILL\.md\s/.test(line))).toHaveLength(1);

    await writeFile(path.join(served, 'gamma', LOOK_ALIKE), 'not the skill, changed\n');
    await writeFile(path.join(served, 'gamma', 'SKILL.md'), `${skillMd('gamma')}run\u200b this\u202e first\n`);
    await untilOutdated('team/gamma', 'changed');
    const outdated = await inProject(['outdated']);
    expect(outdated.code, outdated.stderr).toBe(1);
    expect(outdated.stdout).not.toMatch(INVISIBLE);
    expect(outdated.stdout).toMatch(/^ {2}changed {2}SKILL\.md {2}\d+ B -> \d+ B$/m);
    expect(outdated.stdout).toMatch(/^ {2}changed {2}SKILL\.md\\u200b {2}\d+ B -> \d+ B$/m);
    expect(outdated.stdout.split('\n')).toContain('  +run\\u200b this\\u202e first');
    // The lock keeps the name as served: only what is shown is escaped.
    expect(await readFile(path.join(project, 'skills-lock.json'), 'utf8')).toContain(`"path":"${LOOK_ALIKE}"`);
  });
});

describe('lock and update with no terminal to ask on', () => {
  it.each(Object.entries(NO_TERMINAL))('lock without --yes, %s: exit 2, "lock asks on a terminal, and there is none: pass --yes", the lockfile unchanged', async (_how, runUnder) => {
    const lockfile = path.join(project, 'skills-lock.json');
    const before = await readFile(lockfile, 'utf8').catch(() => undefined);
    const refused = await inProject(['lock', 'team/gamma'], runUnder);
    expect(refused.code, `${refused.stdout}\n${refused.stderr}`).toBe(2);
    expect(refused.stderr).toContain('skills-mount: lock asks on a terminal, and there is none: pass --yes to lock what is shown without asking');
    expect(refused.stderr).not.toMatch(/is not a function/);
    expect(await readFile(lockfile, 'utf8').catch(() => undefined)).toBe(before);
  });

  it('update without --yes, from a pipe: the same refusal, in its own words', async () => {
    const refused = await inProject(['update', '--all'], NO_TERMINAL['echo y |']);
    expect(refused.code, `${refused.stdout}\n${refused.stderr}`).toBe(2);
    expect(refused.stderr).toContain('skills-mount: update asks on a terminal, and there is none: pass --yes to take what is shown');
  });
});
