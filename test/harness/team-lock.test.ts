// A project's skills-lock.json proven end to end with the real Claude Code (mock model) and a real
// mount: two HOMEs share one git repository; A locks two skills of a skills-serve server; B, with
// no approvals, clones and runs `link claude-code --project .`, and Claude Code lists exactly the
// locked skills (not the server's third) and loads the locked SKILL.md. The server changes a file:
// `outdated` exits 1 with the diff and Claude Code still gets the locked bytes; A's `update --yes`,
// pushed and pulled, brings the new ones. The same through a mount run with B's HOME and `--lock`:
// `_approved/` keeps serving the locked bytes, follows the replaced lockfile within 1 s, and so does
// the project's .claude/skills. A tampered entry fails `verify --project`; a policy of B's that
// does not let the server be linked makes `link` refuse, naming the file and rule.
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { run } from '../support/fuse-harness.js';
import { harnesses, harnessPrefix, isInstalled } from '../support/harness/harnesses.js';
import type { CliResult } from '../support/harness/link-world.js';
import { requestText } from '../support/harness/mock-model.mjs';
import { loadSkillScript } from '../support/harness/model-scripts.js';
import { runHarness, type RunResult } from '../support/harness/run-harness.js';
import { CONFIG, LABEL, LOCKFILE, alphaMd, report, startTeamWorld, type TeamWorld } from '../support/harness/team-world.js';
import { startMount, type RunningMount } from '../support/mount-harness.js';
import { fuseAvailable } from '../support/require-fuse.js';

const claude = harnesses['claude-code'];
const CI = process.env['CI'] === 'true';
const fileStarted = Date.now();
const LOCKED = ['alpha', 'beta'];
const SERVER = ['--config', CONFIG];

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((error: unknown) => console.error('team-lock: cleanup failed', error));
});

function ok(result: CliResult, what: string): CliResult {
  expect(result.code, `${what}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0);
  return result;
}

/** What Claude Code told the model in one session, run by B in B's clone: the skills of our server it listed, and the alpha it loaded. */
interface Seen {
  result: RunResult;
  /** Every skill the session listed. */
  listed: string[];
  /** Those listed as coming from an MCP server (link marks its entries so). */
  linked: string[];
  /** alpha's SKILL.md body as the Skill tool returned it, when the model could load it. */
  alpha: string | undefined;
  /** All the text the model received. */
  text: string;
}

/** One Claude Code session in B's clone with B's HOME; the model loads alpha when listed. */
async function claudeInB(world: TeamWorld, why: string): Promise<Seen> {
  const result = await world.timed(`(B) claude -p "Use the alpha skill."   # ${why}`, () =>
    runHarness('claude-code', { home: world.home.B, cwd: world.repo.B, prompt: 'Use the alpha skill.', script: loadSkillScript('claude-code', 'alpha'), timeoutMs: 90_000 }),
  );
  const context = `Claude Code (${why}): exit ${result.exitCode}\nstderr: ${result.stderr.slice(-2_000)}`;
  expect(result.timedOut, context).toBe(false);
  expect(result.exitCode, context).toBe(0);
  expect(result.requests.filter((request) => request.outbound !== undefined).map((request) => request.outbound), 'hosts Claude Code tried to reach').toEqual([]);
  const listedSkills = claude.listedSkills(result.requests);
  console.log(`team-lock:          Claude Code listed: ${listedSkills.map((skill) => skill.name).join(', ') || 'no skill'}; loaded alpha: ${/Marker: (\S+)/.exec(claude.loadedSkillText(result.requests, 'alpha') ?? '')?.[1] ?? 'no'}`);
  const models = result.requests.filter((request) => request.api !== undefined);
  return {
    result,
    listed: listedSkills.map((skill) => skill.name),
    linked: listedSkills.filter((skill) => skill.description.startsWith('[from MCP server ')).map((skill) => skill.name).sort(),
    alpha: claude.loadedSkillText(result.requests, 'alpha'),
    text: models.map(requestText).join('\n'),
  };
}

/** What Claude Code lists in B's clone before anything is linked (its own bundled skills): measured once. */
let bundled: string[] | undefined;

/** Exactly the locked skills listed beside Claude Code's own (the unlocked one of the same server nowhere), and alpha loaded with `marker` (never `not`). */
function expectLocked(world: TeamWorld, seen: Seen, marker: string, not: string): void {
  expect(seen.linked, `listed: ${seen.listed.join(', ')}`).toEqual(LOCKED);
  expect(seen.listed.filter((name) => !bundled!.includes(name)).sort(), `listed: ${seen.listed.join(', ')}`).toEqual(LOCKED);
  expect(seen.listed).not.toContain('gamma');
  expect(seen.text).not.toContain(world.markers.gamma);
  expect(seen.alpha, `alpha was not loaded\n${seen.result.stderr.slice(-1_000)}`).toBeDefined();
  expect(seen.alpha).toContain(`Marker: ${marker}`);
  expect(seen.text).not.toContain(not);
}

/** A locks alpha and beta and pushes; B clones and links. The start of both scenarios. */
async function lockAndLink(world: TeamWorld): Promise<void> {
  const locked = ok(await world.cli('A', ['lock', `${LABEL}/alpha`, `${LABEL}/beta`, '--project', '.', ...SERVER, '--yes']), 'lock');
  expect(locked.stdout).toContain(`locked ${LABEL}/alpha`);
  expect(locked.stdout).toContain(`locked ${LABEL}/beta: 2 files`);
  const lock = JSON.parse(await readFile(path.join(world.repo.A, LOCKFILE), 'utf8')) as { servers: Record<string, { url: string }>; skills: Array<{ path: string }> };
  expect(lock.servers).toEqual({ [LABEL]: { url: world.url } });
  expect(lock.skills.map((skill) => skill.path)).toEqual(LOCKED);
  await world.git('A', ['add', CONFIG, LOCKFILE]);
  await world.git('A', ['commit', '-q', '-m', 'Lock the team skills']);
  await world.git('A', ['push', '-q', 'origin', 'main']);

  await world.cloneB();
  if (bundled === undefined) {
    const before = await claudeInB(world, 'before link: none of the server\'s skills');
    expect(before.linked).toEqual([]);
    for (const name of [...LOCKED, 'gamma']) expect(before.listed).not.toContain(name);
    bundled = before.listed;
  }
  // B approved nothing: what link puts in the project is the lock's.
  const linked = ok(await world.cli('B', ['link', 'claude-code', '--project', '.', ...SERVER]), 'link');
  expect(linked.stdout).toContain(`${path.join(world.repo.B, '.claude/skills')}: 2 skills linked (added alpha, beta)`);
}

/** A updates alpha in the lock, commits and pushes; B pulls. */
async function updateAndPull(world: TeamWorld): Promise<void> {
  const updated = ok(await world.cli('A', ['update', `${LABEL}/alpha`, '--project', '.', ...SERVER, '--yes']), 'update');
  expect(updated.stdout).toContain(`updated ${LABEL}/alpha`);
  await world.git('A', ['commit', '-q', '-a', '-m', 'Update alpha']);
  await world.git('A', ['push', '-q', 'origin', 'main']);
  await world.git('B', ['pull', '-q', '--ff-only']);
}

/** `outdated` on a machine: exit 1, alpha changed with its SKILL.md diff, beta current. */
function expectOutdated(world: TeamWorld, result: CliResult, who: string): void {
  expect(result.code, `${who}: outdated\n${result.stdout}\n${result.stderr}`).toBe(1);
  expect(result.stdout).toContain(`${LABEL}/alpha: the server serves another version`);
  expect(result.stdout).toContain('changed  SKILL.md');
  expect(result.stdout).toContain(`${LABEL}/beta: current`);
  expect(result.stdout).toContain('2 locked skills: 1 current, 1 changed');
  // The diff: the one line that changed, both ways. (soft: the rest of the scenario still runs when it is missing)
  expect.soft(result.stdout, `${who}: outdated shows no diff of SKILL.md`).toContain(`-Marker: ${world.markers.alphaV1}`);
  expect.soft(result.stdout, `${who}: outdated shows no diff of SKILL.md`).toContain(`+Marker: ${world.markers.alphaV2}`);
}

async function world(): Promise<TeamWorld> {
  const made = await startTeamWorld();
  cleanups.push(() => made.stop());
  return made;
}

const missing = !isInstalled('claude-code') ? `claude-code is not installed under ${harnessPrefix()} (scripts/harnesses.sh installs it)` : undefined;

describe(`a project lockfile, two HOMEs, one git repository, Claude Code ${claude.version}`, () => {
  if (missing !== undefined) {
    if (CI) it('can run', () => expect.fail(missing));
    else it.skip(`skipped: ${missing}`, () => {});
    return;
  }

  it('B links exactly the locked versions; the server moves on and B keeps them until A updates; a tampered lock fails verify; B\'s policy makes link refuse', async () => {
    const started = Date.now();
    const w = await world();
    await lockAndLink(w);

    // Exactly the locked skills, and the locked alpha.
    expectLocked(w, await claudeInB(w, 'lists alpha and beta, loads alpha v1'), w.markers.alphaV1, w.markers.alphaV2);
    ok(await w.cli('B', ['verify', '--project', '.']), 'verify');

    // The server changes one file of alpha.
    await w.changeAlpha();
    expectOutdated(w, await w.cli('B', ['outdated', '--project', '.', ...SERVER]), 'B (linked the locked version, never locked it)');
    expectOutdated(w, await w.cli('A', ['outdated', '--project', '.', ...SERVER]), 'A (locked it)');
    // B links again, as after any pull: the lock still names v1, so alpha stays v1.
    const relinked = ok(await w.cli('B', ['link', 'claude-code', '--project', '.', ...SERVER]), 'link after the change');
    expect(relinked.stdout).not.toContain('replaced');
    expectLocked(w, await claudeInB(w, 'the server changed: still alpha v1'), w.markers.alphaV1, w.markers.alphaV2);

    // A takes the new version into the lock; B pulls and links.
    await updateAndPull(w);
    const stale = await w.cli('B', ['verify', '--project', '.']);
    expect(stale.code, stale.stdout).toBe(1);
    expect(stale.stdout).toContain(`${path.join(w.repo.B, '.claude/skills/alpha')}: ${LABEL} skill://alpha/SKILL.md is locked with other files`);
    const updated = ok(await w.cli('B', ['link', 'claude-code', '--project', '.', ...SERVER]), 'link after the update');
    expect(updated.stdout).toContain('(replaced alpha)');
    expectLocked(w, await claudeInB(w, 'after update --yes: alpha v2'), w.markers.alphaV2, w.markers.alphaV1);
    ok(await w.cli('B', ['verify', '--project', '.']), 'verify after the update');

    // Tampered: alpha's entry rolled back to the earlier, valid one (every digest consistent) fails verify, naming alpha.
    const lockB = path.join(w.repo.B, LOCKFILE);
    const current = await readFile(lockB, 'utf8');
    const previous = (await w.git('B', ['show', 'HEAD~1:skills-lock.json'])).stdout;
    const entryOf = (text: string, name: string) => (JSON.parse(text) as { skills: Array<{ path: string }> }).skills.find((skill) => skill.path === name)!;
    const rolledBack = JSON.parse(current) as { skills: unknown[] };
    rolledBack.skills = rolledBack.skills.map((skill) => ((skill as { path: string }).path === 'alpha' ? entryOf(previous, 'alpha') : skill));
    await writeFile(lockB, JSON.stringify(rolledBack, null, 2));
    const rolled = await w.cli('B', ['verify', '--project', '.']);
    expect(rolled.code, rolled.stdout).toBe(1);
    expect(rolled.stdout).toContain(`${path.join(w.repo.B, '.claude/skills/alpha')}: ${LABEL} skill://alpha/SKILL.md is locked with other files`);
    expect(rolled.stdout).not.toContain('beta');
    expect(rolled.stdout).toContain('1 difference');
    // Tampered by hand: alpha's set digest swapped for beta's (a valid digest, not its files') is refused, naming the entry.
    const beta = entryOf(current, 'beta') as unknown as { resourcesDigest: string };
    const alpha = entryOf(current, 'alpha') as unknown as { resourcesDigest: string };
    await writeFile(lockB, current.replace(alpha.resourcesDigest, beta.resourcesDigest));
    const edited = await w.cli('B', ['verify', '--project', '.']);
    expect(edited.code, edited.stdout).toBe(1);
    expect(edited.stderr).toContain(`${lockB}: skills[0] (${LABEL}/alpha): has a resourcesDigest that does not match its files`);
    await w.git('B', ['checkout', '-q', '--', LOCKFILE]);
    ok(await w.cli('B', ['verify', '--project', '.']), 'verify with the committed lock');

    // B's own policy lets the server be mounted, approved and locked, not linked: link refuses the locked skills.
    const policyFile = path.join(w.home.B, '.config/skills-mount/policy.json');
    await mkdir(path.dirname(policyFile), { recursive: true, mode: 0o700 });
    await writeFile(policyFile, `${JSON.stringify({ policyVersion: 1, servers: [{ url: w.url, may: ['mount', 'approve', 'lock'] }] }, null, 2)}\n`, { mode: 0o600 });
    const refused = await w.cli('B', ['link', 'claude-code', '--project', '.', ...SERVER]);
    expect(refused.code, `${refused.stdout}\n${refused.stderr}`).toBe(1);
    for (const name of LOCKED) {
      expect(refused.stdout).toContain(`${LABEL}/${name} is not linked: refused by policy ${policyFile} (servers[0]): skill "${name}" of server "${LABEL}" (${w.url}) may not be linked`);
    }
    expect(refused.stdout).toContain('0 skills linked (removed alpha, beta)');
    const none = await claudeInB(w, 'B\'s policy refuses the server: none listed');
    expect(none.linked, `listed: ${none.listed.join(', ')}`).toEqual([]);
    expect(none.listed.filter((name) => !bundled!.includes(name))).toEqual([]);
    for (const name of [...LOCKED, 'gamma']) expect(none.listed).not.toContain(name);
    expect(none.alpha).toBeUndefined();
    expect(none.text).not.toContain(w.markers.alphaV2);
    report('the whole no-mount scenario', Date.now() - started);
  });

  const noFuse = fuseAvailable() ? undefined : '/dev/fuse is not usable';
  if (noFuse !== undefined) {
    if (CI) it('can mount', () => expect.fail(noFuse));
    else it.skip(`skipped: ${noFuse}`, () => {});
    return;
  }

  it('through a mount with --lock, run with B\'s HOME: _approved keeps the locked bytes when the server moves on, follows the pulled lock within 1 s, and so does the project\'s .claude/skills', async () => {
    const started = Date.now();
    const w = await world();
    await lockAndLink(w);
    const lockB = path.join(w.repo.B, LOCKFILE);
    const mount: RunningMount = await w.timed(`(B) skills-mount ~/skills --config ${CONFIG} --lock ${LOCKFILE}   # until mounted`, () =>
      startMount({ dir: w.dir, env: w.env.B, args: ['--config', path.join(w.repo.B, CONFIG), '--lock', lockB] }),
    );
    cleanups.push(() => mount.stop());
    const approvedAlpha = path.join(mount.mountpoint, '_approved', LABEL, 'alpha', 'SKILL.md');
    const servedAlpha = path.join(mount.mountpoint, LABEL, 'alpha', 'SKILL.md');
    const cat = async (file: string) => (await run('cat', [file])).stdout;
    const linkedAlpha = path.join(w.repo.B, '.claude/skills/alpha/SKILL.md');

    expect(mount.log()).toContain(`the approved view shows the versions locked in ${lockB}`);
    expect((await run('ls', [path.join(mount.mountpoint, '_approved', LABEL)])).stdout.split('\n').filter(Boolean)).toEqual(LOCKED);
    expect((await run('ls', [path.join(mount.mountpoint, LABEL)])).stdout.split('\n').filter(Boolean)).toEqual(expect.arrayContaining([...LOCKED, 'gamma']));
    expect(await cat(approvedAlpha)).toBe(alphaMd(w.markers, 1));

    // The server changes alpha; once the mount serves v2 in its plain view, _approved still serves the locked v1.
    await w.changeAlpha();
    await w.timed('(B) cat ~/skills/demo/alpha/SKILL.md   # until the mount shows the server\'s change', async () => {
      const deadline = Date.now() + 30_000;
      while (!(await cat(servedAlpha)).includes(w.markers.alphaV2)) {
        if (Date.now() > deadline) throw new Error(`the mount did not show the server's change of alpha within 30 s\n${mount.log()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    });
    expect(await cat(approvedAlpha)).toBe(alphaMd(w.markers, 1));
    expect(await readFile(linkedAlpha, 'utf8')).toContain(`Marker: ${w.markers.alphaV1}`);
    // Claude Code reads its own folder, never the mount: the entries lead into the link store.
    for (const name of LOCKED) expect(await realpath(path.join(w.repo.B, '.claude/skills', name))).not.toContain(mount.mountpoint);
    expectLocked(w, await claudeInB(w, 'the mount saw the change; the daemon kept alpha v1'), w.markers.alphaV1, w.markers.alphaV2);

    // A updates, B pulls: the lockfile replaced. The mount watches it.
    await updateAndPull(w);
    const pulled = Date.now();
    let approvedMs: number | undefined;
    while (Date.now() - pulled < 5_000) {
      if ((await cat(approvedAlpha)) === alphaMd(w.markers, 2)) {
        approvedMs = Date.now() - pulled;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    report(`_approved/demo/alpha/SKILL.md showed v2 ${approvedMs === undefined ? 'not within 5 s' : `${approvedMs} ms`} after the pull`, approvedMs ?? Date.now() - pulled);
    expect(approvedMs, `_approved did not show the pulled lock's alpha within 5 s\n${mount.log()}`).toBeDefined();
    expect(approvedMs!).toBeLessThanOrEqual(1_000);

    // The daemon keeps the project's root linked under its lockfile: it follows the pulled lock too (no link run by B).
    let linkedMs: number | undefined;
    while (Date.now() - pulled < 15_000) {
      if ((await readFile(linkedAlpha, 'utf8').catch(() => '')).includes(`Marker: ${w.markers.alphaV2}`)) {
        linkedMs = Date.now() - pulled;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    report(`.claude/skills/alpha followed the pulled lock ${linkedMs === undefined ? 'not within 15 s' : `${linkedMs} ms`} after the pull`, linkedMs ?? Date.now() - pulled);
    expect.soft(linkedMs, `the daemon did not bring ${linkedAlpha} to the pulled lock within 15 s\n${mount.log().slice(-3_000)}`).toBeDefined();
    if (linkedMs === undefined) {
      // What a person would do then: link again (the running mount serves the bytes).
      ok(await w.cli('B', ['link', 'claude-code', '--project', '.', ...SERVER]), 'link after the pull');
    }
    expectLocked(w, await claudeInB(w, 'the daemon linked the pulled lock: alpha v2'), w.markers.alphaV2, w.markers.alphaV1);
    ok(await w.cli('B', ['verify', '--project', '.']), 'verify');
    report('the whole mount scenario', Date.now() - started);
  });
});

afterAll(() => report('this file in all', Date.now() - fileStarted));
