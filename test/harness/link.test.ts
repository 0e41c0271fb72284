// `skills-mount link` proven through the real harnesses: for each of Claude Code, Codex, Gemini
// CLI and OpenCode, in its user root and a project's (the harness run in that project), with the
// approved bytes read from a running mount and from the configured server (no FUSE), what the
// harness tells the mock model shows that: a linked approved skill is listed (name, description)
// and an unapproved one of the same server is not; the harness returns the linked SKILL.md and a
// referenced file; after `revoke` the next session does not list it; a user's own skill of the same
// name stays listed and the linked one is listed qualified; allowed-tools reaches the harness only
// when granted (Claude Code: by what it runs). And a running Claude Code session lists a skill
// approved meanwhile within 10 s. One mount, shared by the FUSE cases; the harnesses one at a time.
import { execFile, spawn } from 'node:child_process';
import { appendFile, lstat, mkdir, readFile, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopChild, type ChildExit } from '../support/children.js';
import { run } from '../support/fuse-harness.js';
import { ClaudeSession } from '../support/harness/claude-session.js';
import { HARNESS_KINDS, harnesses, harnessPrefix, isInstalled, type HarnessKind } from '../support/harness/harnesses.js';
import {
  SKILL,
  homeEnv,
  makeMarkers,
  ownCollideSkill,
  recordApprovals,
  servedApprovals,
  skillsMount,
  writeServeConfig,
  writeServedSkills,
  type CliResult,
  type ServedApprovals,
} from '../support/harness/link-world.js';
import { requestText, toolNames, type ModelScript, type RecordedRequest, type ScriptReply } from '../support/harness/mock-model.mjs';
import { DONE_TEXT } from '../support/harness/model-scripts.js';
import { runHarness, type RunResult } from '../support/harness/run-harness.js';
import { SKILLS_MOUNT, SKILLS_SERVE, makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { waitFor } from '../support/poll.js';
import { fuseAvailable } from '../support/require-fuse.js';
import { writeTree } from '../support/skill-builder.js';

type Scope = 'user' | 'project';
type Mode = 'fuse' | 'no-fuse';

/** The root `link HARNESS` uses in each scope (relative to HOME, or to the project); each is one the harness reads (checked below). */
const LINK_ROOTS: Record<HarnessKind, Record<Scope, string>> = {
  'claude-code': { user: '.claude/skills', project: '.claude/skills' },
  codex: { user: '.codex/skills', project: '.agents/skills' },
  gemini: { user: '.gemini/skills', project: '.gemini/skills' },
  opencode: { user: '.config/opencode/skills', project: '.agents/skills' },
};

const markers = makeMarkers();
const CI = process.env['CI'] === 'true';
const fileStarted = Date.now();
/** What this file measured, printed at its end. */
const timings = { harnessMs: {} as Record<string, number>, serverChangeMs: [] as Array<{ mode: Mode; ms: number }>, pickups: [] as Array<{ mode: Mode; afterReturnMs: number; afterStartMs: number; commandsChangedMs: number | undefined }> };

function addTime(key: string, ms: number): void {
  timings.harnessMs[key] = (timings.harnessMs[key] ?? 0) + ms;
}

afterAll(() => {
  const lines = Object.entries(timings.harnessMs).map(([key, ms]) => `  ${key}: ${(ms / 1000).toFixed(1)} s`);
  const pickups = timings.pickups.map((p) => `  ${p.mode}: listed ${p.afterReturnMs} ms after the approval was in place (${p.afterStartMs} ms after it began); commands_changed after ${p.commandsChangedMs ?? 'never'} ms`);
  const changes = timings.serverChangeMs.map(({ mode, ms }) => `  ${mode}: a skill changed on the server left the root ${ms} ms after the change was written`);
  console.info(`link.test.ts: ${((Date.now() - fileStarted) / 1000).toFixed(1)} s in all\n${lines.join('\n')}\nClaude Code session pickup:\n${pickups.join('\n')}\n${changes.join('\n')}`);
});

/** One harness, one scope: its HOME, working folder, project and the root link uses there. */
interface LinkCase {
  kind: HarnessKind;
  scope: Scope;
  home: string;
  env: NodeJS.ProcessEnv;
  /** Where the harness runs: the project in project scope. */
  cwd: string;
  projectDir: string | undefined;
  root: string;
}

/** Where the approved bytes come from, and how approvals are made and revoked there. */
interface World {
  mode: Mode;
  label: string;
  /** A case with the four base skills approved (link-tools-granted with its allowed-tools granted), whatever an earlier case left. */
  open(kind: HarnessKind, scope: Scope): Promise<LinkCase>;
  linkArgs: string[];
  /** Approves `name` while the case's root is linked: with a mount, `approve` (the roots current when it returns); else the approvals file written (for link --watch to follow). */
  approveLate(linkCase: LinkCase, name: string): Promise<void>;
  revoke(linkCase: LinkCase, name: string): Promise<CliResult>;
  /** Takes the case's root away again (unlink). */
  close(linkCase: LinkCase): Promise<void>;
  /** Changes a served skill's SKILL.md on the server (with a mount: the daemon then revokes its approval). */
  changeServed(name: string): Promise<void>;
  teardown(): Promise<void>;
}

const linkArgsOf = (linkCase: LinkCase) => (linkCase.projectDir === undefined ? [] : ['--project', linkCase.projectDir]);

/** `chmod -R u+w` then `rm -rf`: the store's objects are read-only folders. */
async function removeAll(dir: string): Promise<void> {
  await new Promise<void>((resolve) => execFile('chmod', ['-R', 'u+w', dir], () => resolve()));
  await new Promise<void>((resolve) => execFile('rm', ['-rf', dir], () => resolve()));
}

function expectOk(result: CliResult, what: string): CliResult {
  expect(result.code, `${what}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(0);
  return result;
}

async function caseDirs(base: string, kind: HarnessKind, scope: Scope, home: string): Promise<Omit<LinkCase, 'env'>> {
  const cwd = path.join(base, `${kind}-${scope}-work`);
  await mkdir(cwd, { recursive: true });
  const projectDir = scope === 'project' ? cwd : undefined;
  const root = scope === 'user' ? path.join(home, LINK_ROOTS[kind].user) : path.join(cwd, LINK_ROOTS[kind].project);
  return { kind, scope, home, cwd, projectDir, root };
}

/** The approved bytes from the configured server, started by `link` itself: no mount anywhere. A HOME per case. */
async function serverWorld(): Promise<World> {
  const label = 'local';
  const dir = await realpath(await makeTestDir());
  const skills = path.join(dir, 'skills');
  await writeServedSkills(skills, markers);
  const config = path.join(dir, 'config.json');
  await writeServeConfig(config, label, skills, SKILLS_SERVE);
  await mkdir(path.join(dir, 'scratch'));
  const served: ServedApprovals = await servedApprovals(config, label, path.join(dir, 'scratch'));
  // Every skill the test names is served, the unapproved and the nested one included: had link taken them, the harness would list them.
  expect(served.names).toEqual(expect.arrayContaining(Object.values(SKILL)));
  let cases = 0;
  return {
    mode: 'no-fuse',
    label,
    linkArgs: ['--config', config],
    async open(kind, scope) {
      const home = path.join(dir, `case-${++cases}`, 'home');
      await mkdir(home, { recursive: true });
      const env = homeEnv(home);
      await recordApprovals(env, [served.input(SKILL.probe), served.input(SKILL.collide), served.input(SKILL.plain), served.input(SKILL.granted, true)]);
      return { ...(await caseDirs(path.dirname(home), kind, scope, home)), env };
    },
    async approveLate(linkCase, name) {
      await recordApprovals(linkCase.env, [served.input(name)]);
    },
    revoke: (linkCase, name) => skillsMount(linkCase.env, ['revoke', '--label', label, '--uri', served.input(name).skillUri]),
    async close(linkCase) {
      expectOk(await skillsMount(linkCase.env, ['unlink', linkCase.kind, ...linkArgsOf(linkCase)]), 'unlink');
    },
    changeServed: (name) => appendFile(path.join(skills, name, 'SKILL.md'), '\nChanged on the server.\n'),
    teardown: () => removeAll(dir),
  };
}

/** The approved bytes from one running mount (skills-serve over the test's skills): one HOME, the daemon's, for every case. */
async function mountWorld(): Promise<World> {
  const label = 'docs';
  const dir = await realpath(await makeTestDir());
  const home = path.join(dir, 'home');
  await mkdir(home, { mode: 0o700 });
  const env = homeEnv(home);
  const skills = path.join(dir, 'skills');
  await writeServedSkills(skills, markers);
  const mount = await startMount({ dir, config: { [label]: serveEntry(skills) }, env });
  const skillDir = (name: string) => path.join(mount.mountpoint, label, name);
  try {
    const listed = await run('cat', [path.join(mount.mountpoint, 'skills.json')]);
    const names = (JSON.parse(listed.stdout) as { servers: Array<{ label: string; skills: Array<{ name: string }> }> }).servers.find((server) => server.label === label)!.skills.map((skill) => skill.name);
    expect(names).toEqual(expect.arrayContaining(Object.values(SKILL)));
    expectOk(await skillsMount(env, ['approve', skillDir(SKILL.probe), skillDir(SKILL.collide), skillDir(SKILL.plain), '--yes']), 'approve');
    expectOk(await skillsMount(env, ['approve', skillDir(SKILL.granted), '--yes', '--grant-allowed-tools']), 'approve --grant-allowed-tools');
  } catch (error) {
    await mount.stop();
    await removeAll(dir);
    throw error;
  }
  return mountWorldOf(mount, label, dir, home, env, skills);
}

function mountWorldOf(mount: RunningMount, label: string, dir: string, home: string, env: NodeJS.ProcessEnv, skills: string): World {
  const skillDir = (name: string) => path.join(mount.mountpoint, label, name);
  return {
    mode: 'fuse',
    label,
    linkArgs: [],
    async open(kind, scope) {
      // The shared approvals as every case starts with them, whatever an earlier case left.
      const list = (JSON.parse(expectOk(await skillsMount(env, ['approvals', '--json']), 'approvals').stdout) as { approvals: Array<{ name: string }> }).approvals;
      if (!list.some((approval) => approval.name === SKILL.probe)) expectOk(await skillsMount(env, ['approve', skillDir(SKILL.probe), '--yes']), `approve ${SKILL.probe} again`);
      if (list.some((approval) => approval.name === SKILL.late)) expectOk(await skillsMount(env, ['revoke', skillDir(SKILL.late)]), `revoke ${SKILL.late}`);
      return { ...(await caseDirs(dir, kind, scope, home)), env };
    },
    async approveLate(_linkCase, name) {
      expectOk(await skillsMount(env, ['approve', skillDir(name), '--yes']), `approve ${name}`);
    },
    revoke: (_linkCase, name) => skillsMount(env, ['revoke', skillDir(name)]),
    async close(linkCase) {
      expectOk(await skillsMount(env, ['unlink', linkCase.kind, ...linkArgsOf(linkCase)]), 'unlink');
    },
    changeServed: (name) => appendFile(path.join(skills, name, 'SKILL.md'), '\nChanged on the server.\n'),
    async teardown() {
      await mount.stop();
      await removeAll(dir);
    },
  };
}

/**
 * The model loads the probe and reads its reference; then Claude Code loads the two tools skills
 * (the ungranted one first: a skill's grant stays with the session once it loaded), and the others
 * load each and read its SKILL.md (Gemini CLI reads only in the folders of skills it activated).
 */
function probeScript(kind: HarnessKind): ModelScript {
  const harness = harnesses[kind];
  const readIn = (name: string, file: string, request: RecordedRequest) => {
    const dir = harness.skillDir(name, request);
    return dir === undefined ? `no folder reported for ${name}` : harness.readFile(path.join(dir, file));
  };
  const steps: Array<(request: RecordedRequest) => ScriptReply> = [
    (request) => harness.loadSkill(SKILL.probe, request),
    (request) => readIn(SKILL.probe, 'references/x.md', request),
    ...(kind === 'claude-code'
      ? [(request: RecordedRequest) => harness.loadSkill(SKILL.plain, request), (request: RecordedRequest) => harness.loadSkill(SKILL.granted, request)]
      : [SKILL.granted, SKILL.plain].flatMap((name) => [(request: RecordedRequest) => harness.loadSkill(name, request), (request: RecordedRequest) => readIn(name, 'SKILL.md', request)])),
  ];
  return (_kind, request, turn) => (toolNames(request).length === 0 ? DONE_TEXT : (steps[turn]?.(request) ?? DONE_TEXT));
}

function modelRequests(result: RunResult): RecordedRequest[] {
  return result.requests.filter((request) => request.api !== undefined);
}

function ran(result: RunResult, what: string): RunResult {
  const context = `${what}: exit ${result.exitCode}\nstderr: ${result.stderr.slice(-2_000)}`;
  expect(result.timedOut, context).toBe(false);
  expect(result.exitCode, context).toBe(0);
  expect(result.requests.filter((request) => request.outbound !== undefined).map((request) => request.outbound)).toEqual([]);
  return result;
}

async function exists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

async function proveLinked(world: World, kind: HarnessKind, scope: Scope): Promise<void> {
  const harness = harnesses[kind];
  const started = Date.now();
  const linkCase = await world.open(kind, scope);
  const { root, label } = { root: linkCase.root, label: world.label };
  const qualified = `${label}-${SKILL.collide}`;
  let closed = false;
  try {
    // A root this harness reads, or the case proves nothing.
    expect(scope === 'user' ? harness.userRoots : harness.projectRoots).toContain(LINK_ROOTS[kind][scope]);
    // The person's own skill of a name the server uses, there before link.
    const own = ownCollideSkill(markers);
    await writeTree(path.join(root, SKILL.collide), { 'SKILL.md': own });

    const linked = expectOk(await skillsMount(linkCase.env, ['link', kind, ...linkArgsOf(linkCase), ...world.linkArgs, '--json']), `link ${kind}`);
    const report = (JSON.parse(linked.stdout) as { roots: Array<{ root: string; added: string[]; problems: string[] }> }).roots;
    expect(report.map((r) => r.root)).toEqual([root]);
    expect([...report[0]!.added].sort()).toEqual([SKILL.probe, qualified, SKILL.granted, SKILL.plain].sort());
    expect(report[0]!.problems.join('\n')).toContain(`is linked as ${qualified}`);
    // Where the bytes came from: the server started by link, or the mount (then no server was started).
    if (world.mode === 'no-fuse') expect(linked.stderr).toContain(`reading approved skills of ${label} from the server`);
    else expect(linked.stderr).not.toContain('reading approved skills of');
    for (const name of [SKILL.probe, qualified]) expect((await lstat(path.join(root, name))).isSymbolicLink(), name).toBe(true);

    // 1, 2, 4, 5: one session lists, loads, reads.
    const first = ran(
      await runHarness(kind, {
        home: linkCase.home,
        cwd: linkCase.cwd,
        prompt: 'Use the link probe skill and read its details, then the tools skills.',
        script: probeScript(kind),
        timeoutMs: 120_000,
        // Claude Code loads a skill with allowed-tools only when the Skill tool is allowed; then its grant decides what its body's !`cmd` may run.
        extraArgs: kind === 'claude-code' ? ['--allowedTools', 'Skill'] : [],
      }),
      `${kind} first session`,
    );
    const requests = modelRequests(first);
    expect(requests.length).toBeGreaterThanOrEqual(5);
    const listed = harness.listedSkills(first.requests);
    const listedNames = listed.map((skill) => skill.name);
    const where = (name: string) => listed.find((skill) => skill.name === name);
    expect(listedNames, `listed: ${listedNames.join(', ')}`).toEqual(expect.arrayContaining([SKILL.probe, SKILL.collide, qualified, SKILL.granted, SKILL.plain]));
    expect(where(SKILL.probe)!.description).toContain(markers.probeDescription);
    expect(where(SKILL.collide)!.description).toContain(markers.collideOwn);
    expect(where(qualified)!.description).toContain(markers.collideServed);
    // The server's identity reaches the model where the harness lists a linked skill (SEP-2640), and only for those.
    for (const name of [SKILL.probe, qualified]) expect(where(name)!.description, name).toMatch(/^\[from MCP server [a-z0-9_-]+\] /);
    expect(where(SKILL.collide)!.description).not.toMatch(/from MCP server/);
    // Where each was found (Claude Code names no location in its listing; its loaded skill does, below).
    for (const name of [SKILL.probe, SKILL.collide, qualified]) {
      const location = where(name)!.location;
      if (kind === 'claude-code') expect(location).toBeUndefined();
      else expect(location, name).toBe(path.join(root, name, 'SKILL.md'));
    }
    // Served, never approved (or approved only as a part of the probe's folder): not there.
    expect(listedNames).not.toContain(SKILL.unapproved);
    expect(listedNames).not.toContain(SKILL.nested);
    expect(listedNames).not.toContain(SKILL.late);
    for (const request of requests) {
      const text = requestText(request);
      for (const absent of [markers.unapproved, markers.nested, markers.lateDescription]) expect(text).not.toContain(absent);
    }

    // 2: the SKILL.md and a referenced file, as the harness returns them.
    const loaded = harness.loadedSkillText(first.requests, SKILL.probe);
    expect(loaded, `${kind}: the probe's SKILL.md was not returned\n${first.stderr.slice(-1_000)}`).toContain(markers.probeBody);
    const probeDir = harness.skillDir(SKILL.probe, requests.at(-1)!);
    expect(probeDir, 'the folder the harness gave for the probe').toBe(path.join(root, SKILL.probe));
    const reference = harness.readFileText(first.requests, path.join(probeDir!, 'references/x.md'));
    expect(reference, `${kind}: references/x.md was not returned (read from ${probeDir})`).toContain(markers.reference);
    expect(requestText(requests[0]!)).not.toContain(markers.reference);

    // 5: allowed-tools only where granted.
    if (kind === 'claude-code') {
      // Granted: the body's git init ran when the skill loaded. Not granted: the entry has no allowed-tools, and Claude Code refused the command.
      expect(await exists(path.join(linkCase.cwd, markers.granted.repo, '.git')), 'the granted skill ran git init').toBe(true);
      expect(await exists(path.join(linkCase.cwd, markers.plain.repo)), 'the ungranted skill ran git init').toBe(false);
      const sent = requests.map(requestText).join('\n');
      expect(sent).toContain(`Repo: ${markers.granted.marker}`);
      expect(sent).toContain(`!\`git init -q ${markers.plain.repo} && echo ${markers.plain.marker}\``);
      expect(sent).not.toContain(`Repo: ${markers.plain.marker}`);
    } else {
      for (const [name, granted] of [[SKILL.granted, true], [SKILL.plain, false]] as const) {
        const dir = harness.skillDir(name, requests.at(-1)!);
        expect(dir, name).toBe(path.join(root, name));
        const text = harness.readFileText(first.requests, path.join(dir!, 'SKILL.md'));
        expect(text, `${kind}: ${name}/SKILL.md was not returned`).toContain(`name: ${name}`);
        expect(text!.includes('allowed-tools: Bash(git:*)'), `${name}: allowed-tools`).toBe(granted);
        expect(text).not.toContain('hooks');
        expect(text).toContain(`skills-mount-uri: skill://${name}/SKILL.md`);
      }
    }

    // 3: revoked, gone from the root when revoke returns, and from the next session.
    // With a mount, the daemon may take the entry away before revoke's own sync: the root is what counts.
    const revoked = expectOk(await world.revoke(linkCase, SKILL.probe), 'revoke');
    if (world.mode === 'no-fuse') expect(revoked.stdout).toContain(`linked ${root}: -${SKILL.probe}`);
    expect(await exists(path.join(root, SKILL.probe))).toBe(false);
    const second = ran(await runHarness(kind, { home: linkCase.home, cwd: linkCase.cwd, prompt: 'hello', timeoutMs: 120_000 }), `${kind} after revoke`);
    const after = harness.listedSkills(second.requests).map((skill) => skill.name);
    expect(after, `listed after revoke: ${after.join(', ')}`).toEqual(expect.arrayContaining([SKILL.collide, qualified, SKILL.granted]));
    expect(after).not.toContain(SKILL.probe);
    for (const request of modelRequests(second)) expect(requestText(request)).not.toContain(markers.probeDescription);

    // unlink takes exactly link's entries: the person's own skill stays as it was.
    closed = true;
    await world.close(linkCase);
    expect(await readFile(path.join(root, SKILL.collide, 'SKILL.md'), 'utf8')).toBe(own);
    const left = (await readdir(root)).filter((name) => name !== '.system');
    expect(left).toEqual([SKILL.collide]);
  } finally {
    if (!closed) await world.close(linkCase).catch(() => {});
    // OpenCode also reads ~/.claude/skills: no case leaves a skill for the next one.
    await removeAll(path.join(root, SKILL.collide));
    addTime(`${world.mode} ${kind}`, Date.now() - started);
  }
}

/** Stops what keeps a linked root current; resolves how `link --watch` exited (nothing to stop with a mount). */
type Keeper = () => Promise<ChildExit | undefined>;

/** Links the case's root and keeps it current: with a mount, its daemon does; without, `link --watch`. */
async function linkAndKeep(world: World, linkCase: LinkCase): Promise<Keeper> {
  if (world.mode === 'fuse') {
    expectOk(await skillsMount(linkCase.env, ['link', linkCase.kind, ...linkArgsOf(linkCase), ...world.linkArgs]), 'link');
    return async () => undefined;
  }
  const child = spawn(process.execPath, [SKILLS_MOUNT, 'link', linkCase.kind, ...linkArgsOf(linkCase), ...world.linkArgs, '--watch'], { env: linkCase.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stop: Keeper = () => stopChild(child, { graceMs: 5_000 });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  try {
    await waitFor(() => stderr.includes('keeping the linked skills roots current') || child.exitCode !== null, 30_000, 'link --watch to be linked and watching');
    expect(child.exitCode, stderr).toBe(null);
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}

/** Claude Code running before the approval: the root exists (link made it), then a skill is approved. */
async function proveSessionPickup(world: World, scope: Scope): Promise<void> {
  const kind = 'claude-code';
  const harness = harnesses[kind];
  const started = Date.now();
  const linkCase = await world.open(kind, scope);
  let keeper: Keeper | undefined;
  let session: ClaudeSession | undefined;
  let watcherExit: ChildExit | undefined;
  try {
    keeper = await linkAndKeep(world, linkCase);
    expect(await exists(path.join(linkCase.root, SKILL.probe))).toBe(true);
    session = await ClaudeSession.start({ home: linkCase.home, cwd: linkCase.cwd });
    const hello = await session.send('hello', 60_000);
    expect(hello.length).toBeGreaterThan(0);
    const before = harness.listedSkills(session.mock.requests).map((skill) => skill.name);
    expect(before).toContain(SKILL.probe);
    expect(before).not.toContain(SKILL.late);

    const approving = Date.now();
    await world.approveLate(linkCase, SKILL.late);
    const approved = Date.now();
    // FUSE: `approve` brought the root up to date before it returned. No FUSE: --watch does, soon after.
    if (world.mode === 'fuse') expect(await exists(path.join(linkCase.root, SKILL.late))).toBe(true);
    const listed = await session.waitUntilListed(SKILL.late, { timeoutMs: 10_000 });
    expect(harness.listedSkills([listed.request]).find((skill) => skill.name === SKILL.late)!.description).toContain(markers.lateDescription);
    const changed = session.events.find((event) => event.subtype === 'commands_changed' && event.at >= approved);
    timings.pickups.push({ mode: world.mode, afterReturnMs: listed.request.time - approved, afterStartMs: listed.request.time - approving, commandsChangedMs: changed === undefined ? undefined : changed.at - approved });
    expect(listed.request.time - approved).toBeLessThanOrEqual(10_000);
  } finally {
    await session?.close();
    watcherExit = await keeper?.();
    await world.close(linkCase);
    addTime(`${world.mode} claude-code session`, Date.now() - started);
  }
  // link --watch ends on SIGTERM with exit 0.
  if (watcherExit !== undefined) expect(watcherExit.code).toBe(0);
}

/**
 * A skill its server changes loses its approval (SEP-2640: a later entry with another set revokes
 * it) and so its entry: the daemon (with a mount) or link --watch takes it out of the root, and
 * the next session does not list it. Changes the served skills for good: run last.
 */
async function proveServerChange(world: World): Promise<void> {
  const kind = 'claude-code';
  const harness = harnesses[kind];
  const started = Date.now();
  const linkCase = await world.open(kind, world.mode === 'fuse' ? 'user' : 'project');
  let keeper: Keeper | undefined;
  let watcherExit: ChildExit | undefined;
  try {
    keeper = await linkAndKeep(world, linkCase);
    const entry = path.join(linkCase.root, SKILL.collide);
    expect(await exists(entry)).toBe(true);
    const changed = Date.now();
    await world.changeServed(SKILL.collide);
    // Nothing reads the mount meanwhile: the keeper must act on the server's change by itself.
    await waitFor(async () => !(await exists(entry)), 10_000, `${entry} to leave the root once its server changed the skill`);
    timings.serverChangeMs.push({ mode: world.mode, ms: Date.now() - changed });
    expect(await exists(path.join(linkCase.root, SKILL.probe))).toBe(true);
    const result = ran(await runHarness(kind, { home: linkCase.home, cwd: linkCase.cwd, prompt: 'hello', timeoutMs: 120_000 }), `${kind} after the change`);
    const listed = harness.listedSkills(result.requests).map((skill) => skill.name);
    expect(listed, `listed: ${listed.join(', ')}`).toContain(SKILL.probe);
    expect(listed).not.toContain(SKILL.collide);
  } finally {
    watcherExit = await keeper?.();
    await world.close(linkCase).catch(() => {});
    addTime(`${world.mode} server change`, Date.now() - started);
  }
  if (watcherExit !== undefined) expect(watcherExit.code).toBe(0);
}

/**
 * link makes each project root with its parents (.claude/, .agents/, .gemini/); unlink must take
 * back all it made. (OpenCode's project root is .agents/skills: a .opencode/ made for it would be a
 * config folder to OpenCode, which writes its .gitignore into it, and online installs its plugin there.)
 */
async function proveProjectLeftClean(world: World): Promise<void> {
  const linkCase = await world.open('claude-code', 'project');
  const project = linkCase.projectDir!;
  const kinds = [...HARNESS_KINDS];
  expect(await readdir(project)).toEqual([]);
  expectOk(await skillsMount(linkCase.env, ['link', ...kinds, '--project', project, ...world.linkArgs]), 'link');
  for (const kind of kinds) expect(await exists(path.join(project, LINK_ROOTS[kind].project, SKILL.probe)), kind).toBe(true);
  expectOk(await skillsMount(linkCase.env, ['unlink', ...kinds, '--project', project]), 'unlink');
  for (const kind of kinds) expect(await exists(path.join(project, LINK_ROOTS[kind].project)), `${kind}'s root`).toBe(false);
  expect((await readdir(project)).sort(), 'what unlink left in the project').toEqual([]);
}

const WORLDS: Array<{ mode: Mode; title: string; make: () => Promise<World>; available: () => string | undefined }> = [
  { mode: 'no-fuse', title: 'approved bytes from the configured server (no FUSE)', make: serverWorld, available: () => undefined },
  { mode: 'fuse', title: 'approved bytes from a running mount', make: mountWorld, available: () => (fuseAvailable() ? undefined : '/dev/fuse is not usable') },
];

for (const { mode, title, make, available } of WORLDS) {
  describe(`skills-mount link, ${title}`, () => {
    const missing = available();
    if (missing !== undefined) {
      if (CI) it('can run', () => expect.fail(missing));
      else it.skip(`skipped: ${missing}`, () => {});
      return;
    }
    let world: World | undefined;
    beforeAll(async () => {
      world = await make();
    }, 120_000);
    afterAll(async () => {
      await world?.teardown();
    });

    for (const kind of HARNESS_KINDS) {
      if (!isInstalled(kind)) {
        const why = `${kind} is not installed under ${harnessPrefix()} (scripts/harnesses.sh installs it)`;
        if (CI) it(`${kind} is installed`, () => expect.fail(why));
        else it.skip(`skipped: ${why}`, () => {});
        continue;
      }
      for (const scope of ['user', 'project'] as const) {
        it(`${kind} ${harnesses[kind].version}, ${scope} root: lists the approved skills only, returns SKILL.md and a reference, forgets a revoked one, qualifies a taken name, allowed-tools only when granted`, async () => {
          await proveLinked(world!, kind, scope);
        });
      }
    }

    if (mode === 'no-fuse') {
      // No harness runs here: what unlink leaves in a project is the same whatever serves the bytes.
      it('unlink leaves nothing of its own in a project: the folders link made for the four roots go too', async () => {
        await proveProjectLeftClean(world!);
      });
    }

    const sessionScope: Scope = mode === 'fuse' ? 'user' : 'project';
    if (isInstalled('claude-code')) {
      it(`claude-code: a running session lists a skill approved meanwhile within 10 s (${sessionScope} root${mode === 'fuse' ? ', approve with the mount' : ', link --watch'})`, async () => {
        await proveSessionPickup(world!, sessionScope);
      });
    }
    if (isInstalled('claude-code')) {
      it(`claude-code: a skill its server changes leaves the root and the next session (${mode === 'fuse' ? 'the daemon' : 'link --watch'} acts on the change)`, async () => {
        await proveServerChange(world!);
      });
    }
  });
}
