// What a person reviewing a hostile server's skill is shown, through the built CLI against a real
// skills-serve over Streamable HTTP: a served file named `SKILL.md` + U+200B is shown escaped in
// `lock`'s review and in `outdated`, never as a second `SKILL.md`, and so is every invisible
// character of a diff line; `lock` with no terminal to ask on (stdin from /dev/null or a pipe)
// refuses as `approve` and `update` do, writing nothing; `outdated`'s text is bounded (each diff,
// the whole report) and says how many lines it left out, while --json and --full have them all.
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

/**
 * `outdated ARGS` with its stdout in a file, as a person's `> report` gets it all: a pipe may not yet
 * (issue 50, item 6: the process exits with its output still queued).
 */
async function outdated(args: readonly string[] = []): Promise<CliResult> {
  const file = path.join(base, `outdated-${Date.now()}-${Math.random().toString(16).slice(2)}.out`);
  const result = await inProject(['outdated', ...args], ['sh', '-c', 'out=$1; shift; exec "$@" >"$out"', 'sh', file]);
  return { ...result, stdout: await readFile(file, 'utf8') };
}

/** Until `outdated --json` says each skill of `keys` is `state`: skills-serve sees a change once its watch settles. */
async function untilOutdated(keys: readonly string[], state: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const report = JSON.parse((await outdated(['--json'])).stdout) as { skills: Array<{ server: string; path: string; state: string }> };
    const states = new Map(report.skills.map((skill) => [`${skill.server}/${skill.path}`, skill.state]));
    if (keys.every((key) => states.get(key) === state)) return;
    if (Date.now() > deadline) throw new Error(`not all ${state} within 15 s: ${JSON.stringify([...states])}`);
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
    await untilOutdated(['team/gamma'], 'changed');
    const report = await outdated();
    expect(report.code, report.stderr).toBe(1);
    expect(report.stdout).not.toMatch(INVISIBLE);
    expect(report.stdout).toMatch(/^ {2}changed {2}SKILL\.md {2}\d+ B -> \d+ B$/m);
    expect(report.stdout).toMatch(/^ {2}changed {2}SKILL\.md\\u200b {2}\d+ B -> \d+ B$/m);
    expect(report.stdout.split('\n')).toContain('  +run\\u200b this\\u202e first');
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

describe('outdated against a server that grows a SKILL.md by 60,000 lines and adds 2,500 files', () => {
  const GROWN_LINES = 60_000;
  /** Five skills of 500 added files each (a skill holds at most 512). */
  const MANY = ['many1', 'many2', 'many3', 'many4', 'many5'];
  const ADDED_FILES = 500;

  beforeAll(async () => {
    await writeTree(served, Object.fromEntries(['big', ...MANY].map((name) => [`${name}/SKILL.md`, skillMd(name)])));
    const deadline = Date.now() + 15_000;
    let locked: CliResult;
    // skills-serve lists the new skills once its watch settles.
    while ((locked = await inProject(['lock', 'team/big', ...MANY.map((name) => `team/${name}`), '--yes'])).code !== 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(locked.code, `${locked.stdout}\n${locked.stderr}`).toBe(0);
    const grown = Array.from({ length: GROWN_LINES }, (_, index) => `line ${index} of what the server added`).join('\n');
    await writeTree(served, {
      'big/SKILL.md': `${skillMd('big')}${grown}\n`,
      ...Object.fromEntries(MANY.flatMap((name) => Array.from({ length: ADDED_FILES }, (_, index) => [`${name}/refs/f${String(index).padStart(3, '0')}.md`, `${index}\n`]))),
    });
    await untilOutdated(['team/big', ...MANY.map((name) => `team/${name}`)], 'changed');
  }, 60_000);

  it('the text shows 200 lines of the diff and 2,000 of the whole report, counting what it left out and saying how to see it; --json and --full have everything', async () => {
    const [text, json, full] = await Promise.all([outdated(), outdated(['--json']), outdated(['--full'])]);
    const added = (report: string) => report.split('\n').filter((line) => /^ {2}added {4}refs\/f\d{3}\.md/.test(line)).length;
    const grownLines = (report: string) => report.split('\n').filter((line) => /^ {2}\+line \d+ of what the server added$/.test(line)).length;

    expect(json.code, json.stderr).toBe(1);
    const report = JSON.parse(json.stdout) as { skills: Array<{ path: string; files?: unknown[]; skillMdDiff?: string }> };
    const diffLines = report.skills.find((skill) => skill.path === 'big')!.skillMdDiff!.split('\n').filter((line, index, all) => line !== '' || index < all.length - 1);
    expect(diffLines.filter((line) => /^\+line \d+ of what the server added$/.test(line))).toHaveLength(GROWN_LINES);
    for (const name of MANY) expect(report.skills.find((skill) => skill.path === name)!.files).toHaveLength(ADDED_FILES);

    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout.length).toBeLessThan(200_000);
    const lines = text.stdout.split('\n');
    expect(lines.length).toBeLessThan(2_100);
    const diffCut = /^ {2}\.\.\. (\d+) more lines of this diff left out$/m.exec(text.stdout);
    expect(Number(diffCut?.[1])).toBe(diffLines.length - 200);
    expect(grownLines(text.stdout)).toBeLessThan(200);
    const filesCut = [...text.stdout.matchAll(/^ {2}\.\.\. (\d+) more files? left out$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
    expect(filesCut).toBeGreaterThan(0);
    expect(added(text.stdout)).toBe(MANY.length * ADDED_FILES - filesCut);
    expect(lines).toContain(`${Number(diffCut?.[1]) + filesCut} lines left out: --full prints them all, --json has everything`);
    expect(lines.at(-2)).toBe(`${2 + MANY.length} locked skills: 0 current, ${2 + MANY.length} changed`);

    expect(full.code, full.stderr).toBe(1);
    expect(full.stdout).not.toMatch(/left out/);
    expect(grownLines(full.stdout)).toBe(GROWN_LINES);
    expect(added(full.stdout)).toBe(MANY.length * ADDED_FILES);
  }, 60_000);

  it('update shows each skill bounded the same way, says what it left out, and takes the change', async () => {
    const updated = await inProject(['update', 'team/big', '--yes']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout.length).toBeLessThan(50_000);
    expect(updated.stdout).toMatch(/^ {2}\.\.\. \d+ more lines of this diff left out$/m);
    expect(updated.stdout).toMatch(/^\(\d+ lines of team\/big's changes left out: --full prints them all\)$/m);
    expect(updated.stdout).toMatch(/^updated team\/big: set sha256:[0-9a-f]{64}$/m);
  });
});
