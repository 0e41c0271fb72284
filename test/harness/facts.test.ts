// The facts about the real harnesses that `skills-mount link` is designed on, measured on plain
// folders and pinned: which roots each reads (exactly the descriptors' roots), symlinks, the name
// rule, nesting, unknown frontmatter, what each writes into its roots and whether a read-only root
// works. A harness update that changes one of them fails here, naming the fact.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readdir, realpath, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HARNESS_KINDS, harnesses, isInstalled, type HarnessKind } from '../support/harness/harnesses.js';
import { requestText, toolNames, type ModelScript } from '../support/harness/mock-model.mjs';
import { runHarness, type RunResult } from '../support/harness/run-harness.js';
import { skillMd, writeTree } from '../support/skill-builder.js';
import { TempDirs } from '../support/temp-dir.js';

interface Expected {
  /** Which name a skill in folder `folder-x` with `name: name-y` is listed under. */
  listedAs: 'folder-x' | 'name-y';
  /** Whether `root/outer/sub/SKILL.md` and `root/group/inner/SKILL.md` are skills of their own. */
  nested: boolean;
  /** Whether project roots are found from a subfolder of a git repository (walking up). */
  walksUp: boolean;
  /** Whether unknown frontmatter reaches the model (Codex: the model cats the whole file). */
  frontmatterReachesModel: boolean;
  /** What the harness writes into its user roots (relative to HOME), first levels only. */
  writes: string[];
}

const EXPECTED: Record<HarnessKind, Expected> = {
  'claude-code': { listedAs: 'folder-x', nested: false, walksUp: true, frontmatterReachesModel: false, writes: [] },
  codex: { listedAs: 'name-y', nested: true, walksUp: true, frontmatterReachesModel: true, writes: ['.codex/skills/.system/'] },
  gemini: { listedAs: 'name-y', nested: false, walksUp: false, frontmatterReachesModel: false, writes: [] },
  opencode: { listedAs: 'name-y', nested: true, walksUp: true, frontmatterReachesModel: false, writes: [] },
};

/** Every skills root some harness reads, or a neighbour documented for another agent. */
const USER_CANDIDATES = ['.claude/skills', '.codex/skills', '.agents/skills', '.gemini/skills', '.config/opencode/skills', '.config/opencode/skill', '.opencode/skills', '.opencode/skill', '.config/agents/skills', '.copilot/skills', '.cursor/skills'];
const PROJECT_CANDIDATES = ['.claude/skills', '.agents/skills', '.codex/skills', '.gemini/skills', '.opencode/skills', '.opencode/skill', '.github/skills', '.cursor/skills'];
const slug = (root: string) => root.replace(/[^a-z]+/g, '-').replace(/^-|-$/g, '');

const temps = new TempDirs('skills-mount-harness-facts-');
afterEach(() => temps.removeAll());

async function writeSkill(dir: string, name: string, extraFrontmatter = ''): Promise<void> {
  await writeTree(dir, { 'SKILL.md': `${skillMd(name, `Description of ${name}.`, extraFrontmatter)}\nBody of ${name}.\n` });
}

/** A temp base (traversable by another uid) with home/ and work/. */
async function layout(): Promise<{ base: string; home: string; cwd: string }> {
  const base = await realpath(await temps.make());
  await chmod(base, 0o755);
  const home = path.join(base, 'home');
  const cwd = path.join(base, 'work');
  await mkdir(home, { recursive: true });
  await mkdir(cwd, { recursive: true });
  return { base, home, cwd };
}

/** The model loads each listed skill of `names` in turn. */
function loads(kind: HarnessKind, names: string[]): ModelScript {
  return (_kind, request, turn) => (toolNames(request).length > 0 && turn < names.length ? harnesses[kind].loadSkill(names[turn]!, request) : 'done');
}

function ran(result: RunResult): RunResult {
  expect(result.timedOut, result.stderr.slice(-1_500)).toBe(false);
  expect(result.exitCode, result.stderr.slice(-1_500)).toBe(0);
  return result;
}

async function tree(dir: string, depth: number, prefix = ''): Promise<string[]> {
  if (depth === 0) return [];
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries) {
    const relative = `${prefix}${entry.name}${entry.isDirectory() ? '/' : ''}`;
    found.push(relative);
    if (entry.isDirectory()) found.push(...(await tree(path.join(dir, entry.name), depth - 1, relative)));
  }
  return found;
}

for (const kind of HARNESS_KINDS) {
  const harness = harnesses[kind];
  const expected = EXPECTED[kind];
  describe.skipIf(!isInstalled(kind))(`${kind} ${harness.version}: facts`, () => {
    it(`reads exactly its descriptor's roots; project roots from a subfolder of a git repo: ${expected.walksUp}`, async () => {
      const { home, cwd } = await layout();
      for (const root of USER_CANDIDATES) await writeSkill(path.join(home, root, `u-${slug(root)}`), `u-${slug(root)}`);
      for (const root of PROJECT_CANDIDATES) await writeSkill(path.join(cwd, root, `p-${slug(root)}`), `p-${slug(root)}`);
      execFileSync('git', ['init', '-q'], { cwd });
      const listedFrom = async (at: string) => {
        const result = ran(await runHarness(kind, { home, cwd: at, prompt: 'hello' }));
        return harness.listedSkills(result.requests).map((skill) => skill.name);
      };
      const atRoot = await listedFrom(cwd);
      expect(atRoot.filter((name) => name.startsWith('u-')).sort()).toEqual(harness.userRoots.map((root) => `u-${slug(root)}`).sort());
      expect(atRoot.filter((name) => name.startsWith('p-')).sort()).toEqual(harness.projectRoots.map((root) => `p-${slug(root)}`).sort());
      const sub = path.join(cwd, 'src/deeper');
      await mkdir(sub, { recursive: true });
      const atSub = await listedFrom(sub);
      expect(atSub.filter((name) => name.startsWith('p-')).sort()).toEqual(expected.walksUp ? harness.projectRoots.map((root) => `p-${slug(root)}`).sort() : []);
    });

    it('lists and loads a skill folder that is a symlink out of the root, and skills in a root that is a symlink', async () => {
      const { base, home, cwd } = await layout();
      await writeSkill(path.join(base, 'elsewhere/linked-skill'), 'linked-skill');
      await mkdir(path.join(home, harness.userRoots[0]!), { recursive: true });
      await symlink(path.join(base, 'elsewhere/linked-skill'), path.join(home, harness.userRoots[0]!, 'linked-skill'));
      await writeSkill(path.join(base, 'real-root/rooted-skill'), 'rooted-skill');
      await mkdir(path.dirname(path.join(cwd, harness.projectRoots[0]!)), { recursive: true });
      await symlink(path.join(base, 'real-root'), path.join(cwd, harness.projectRoots[0]!));
      const result = ran(await runHarness(kind, { home, cwd, prompt: 'hello', script: loads(kind, ['linked-skill', 'rooted-skill']) }));
      expect(harness.listedSkills(result.requests).map((skill) => skill.name)).toEqual(expect.arrayContaining(['linked-skill', 'rooted-skill']));
      expect(harness.loadedSkillText(result.requests, 'linked-skill')).toContain('Body of linked-skill.');
      expect(harness.loadedSkillText(result.requests, 'rooted-skill')).toContain('Body of rooted-skill.');
    });

    it(`lists folder-x (name: name-y) as ${expected.listedAs}; nested SKILL.md files are skills: ${expected.nested}; unknown metadata is harmless`, async () => {
      const { home, cwd } = await layout();
      const root = path.join(home, harness.userRoots[0]!);
      await writeSkill(path.join(root, 'folder-x'), 'name-y');
      await writeSkill(path.join(root, 'outer'), 'outer');
      await writeSkill(path.join(root, 'outer/sub'), 'outer-sub');
      await writeSkill(path.join(root, 'group/inner'), 'group-inner');
      await writeSkill(path.join(root, 'meta-skill'), 'meta-skill', 'metadata:\n  skills-mount-server: server-marker\n  skills-mount-uri: "skill://server-marker/meta-skill"\n');
      const result = ran(await runHarness(kind, { home, cwd, prompt: 'hello', script: loads(kind, ['meta-skill', expected.listedAs]) }));
      const listed = harness.listedSkills(result.requests).map((skill) => skill.name);
      expect(listed).toContain(expected.listedAs);
      expect(listed).not.toContain(expected.listedAs === 'folder-x' ? 'name-y' : 'folder-x');
      expect(listed).toContain('outer');
      for (const nested of ['outer-sub', 'group-inner']) expect(listed.includes(nested), nested).toBe(expected.nested);
      expect(harness.loadedSkillText(result.requests, expected.listedAs)).toContain('Body of name-y.');
      expect(harness.loadedSkillText(result.requests, 'meta-skill')).toContain('Body of meta-skill.');
      const sent = result.requests.filter((r) => r.api !== undefined).map(requestText).join('\n');
      expect(sent.includes('skill://server-marker/meta-skill')).toBe(expected.frontmatterReachesModel);
      // Claude Code asks permission for a skill whose frontmatter holds fields beyond its safe set;
      // -p mode would deny it. metadata is not one of them.
      if (kind === 'claude-code') expect(JSON.parse(result.stdout).permission_denials).toEqual([]);
    });

    it(`writes ${JSON.stringify(expected.writes)} into its roots, and works with read-only roots read by another uid`, async () => {
      for (const readOnly of [false, true]) {
        const { base, home, cwd } = await layout();
        const roots = [...harness.userRoots.map((root) => path.join(home, root)), ...harness.projectRoots.map((root) => path.join(cwd, root))];
        for (const root of roots) await writeSkill(path.join(root, `r-${slug(path.relative(base, root))}`), `r-${slug(path.relative(base, root))}`);
        if (readOnly) for (const root of roots) execFileSync('sh', ['-c', 'find "$1" -type d -exec chmod 0555 {} + && find "$1" -type f -exec chmod 0444 {} +', 'sh', root]);
        // Root ignores modes: run as nobody when the tests run as root.
        const other = readOnly && process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
        const first = `r-${slug(path.relative(base, roots[0]!))}`;
        const result = ran(await runHarness(kind, { home, cwd, prompt: 'hello', script: loads(kind, [first]), ...other }));
        expect(harness.listedSkills(result.requests).filter((skill) => skill.name.startsWith('r-')).length).toBe(roots.length);
        expect(harness.loadedSkillText(result.requests, first)).toContain(`Body of ${first}.`);
        const written: string[] = [];
        for (const root of roots) for (const entry of await tree(root, 1)) if (!entry.startsWith('r-')) written.push(`${path.relative(home, root)}/${entry}`);
        expect(written).toEqual(readOnly ? [] : expected.writes);
        execFileSync('chmod', ['-R', 'u+w', base]);
      }
    });
  });
}
