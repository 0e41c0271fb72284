// What Claude Code does with a skill's allowed-tools in -p mode, and how soon a running session
// lists a skill folder added to its root: the two facts a test of `link --grant-allowed-tools` and
// of approving while a session runs stand on. Measured on plain folders.
import { mkdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClaudeSession } from '../support/harness/claude-session.js';
import { harnesses, isInstalled } from '../support/harness/harnesses.js';
import { toolExchanges, type RecordedRequest } from '../support/harness/mock-model.mjs';
import { stepsScript } from '../support/harness/model-scripts.js';
import { runHarness } from '../support/harness/run-harness.js';
import { skillMd, writeTree } from '../support/skill-builder.js';
import { TempDirs } from '../support/temp-dir.js';

const claude = harnesses['claude-code'];
const temps = new TempDirs('skills-mount-harness-claude-');
const sessions: ClaudeSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close();
  await temps.removeAll();
});

async function layout(): Promise<{ home: string; cwd: string }> {
  const base = await realpath(await temps.make());
  const home = path.join(base, 'home');
  const cwd = path.join(base, 'work');
  await mkdir(home, { recursive: true });
  await mkdir(cwd, { recursive: true });
  return { home, cwd };
}

/** The result the harness sent back for the `index`th tool call of the conversation. */
function resultOf(requests: RecordedRequest[], index: number): string | undefined {
  const last = requests.filter((r) => r.api !== undefined).at(-1);
  return last === undefined ? undefined : toolExchanges(last)[index]?.result;
}

describe.skipIf(!isInstalled('claude-code'))(`claude-code ${claude.version}: allowed-tools in -p mode`, () => {
  // `!`cmd`` in a skill's body runs when the skill loads, under the skill's allowed-tools; its
  // output replaces it in what the model gets. git init is not read-only: it needs a grant.
  const body = 'Repo: !`git init -q granted-repo && echo granted-marker`';

  it('a skill with allowed-tools is not loaded without permission for the Skill tool: the load is denied', async () => {
    const { home, cwd } = await layout();
    await writeTree(path.join(home, '.claude/skills/granted'), { 'SKILL.md': `${skillMd('granted', 'Granted skill.', 'allowed-tools: Bash(git:*)\n')}\n${body}\n` });
    const result = await runHarness('claude-code', { home, cwd, prompt: 'go', script: stepsScript([{ tool: 'Skill', input: { skill: 'granted' } }]) });
    expect(result.exitCode).toBe(0);
    expect(resultOf(result.requests, 0)).toBe('Execute skill: granted');
    expect(JSON.parse(result.stdout).permission_denials.map((d: { tool_name: string }) => d.tool_name)).toEqual(['Skill']);
    expect(claude.loadedSkillText(result.requests, 'granted')).toBeUndefined();
  });

  it('with the Skill tool allowed, the grant runs the body’s command; the same skill without allowed-tools is refused it', async () => {
    for (const granted of [true, false]) {
      const { home, cwd } = await layout();
      const extra = granted ? 'allowed-tools: Bash(git:*)\n' : '';
      await writeTree(path.join(home, '.claude/skills/granted'), { 'SKILL.md': `${skillMd('granted', 'Granted skill.', extra)}\n${body}\n` });
      const result = await runHarness('claude-code', { home, cwd, prompt: 'go', script: stepsScript([{ tool: 'Skill', input: { skill: 'granted' } }]), extraArgs: ['--allowedTools', 'Skill'] });
      expect(result.exitCode).toBe(0);
      const created = await stat(path.join(cwd, 'granted-repo/.git')).then(() => true, () => false);
      expect(created, `granted=${granted}`).toBe(granted);
      if (granted) expect(claude.loadedSkillText(result.requests, 'granted')).toContain('Repo: granted-marker');
      else expect(resultOf(result.requests, 0)).toContain('Shell command permission check failed for pattern "!`git init -q granted-repo && echo granted-marker`"');
    }
  });

  it('echo needs no grant: Bash `echo granted-marker` runs after a skill without allowed-tools', async () => {
    const { home, cwd } = await layout();
    await writeTree(path.join(home, '.claude/skills/plain'), { 'SKILL.md': `${skillMd('plain', 'Plain skill.')}\nBody.\n` });
    const steps = [{ tool: 'Skill', input: { skill: 'plain' } }, { tool: 'Bash', input: { command: 'echo granted-marker' } }];
    const result = await runHarness('claude-code', { home, cwd, prompt: 'go', script: stepsScript(steps) });
    expect(resultOf(result.requests, 1)).toBe('granted-marker');
  });
});

describe.skipIf(!isInstalled('claude-code'))(`claude-code ${claude.version}: a running session`, () => {
  it('lists a skill folder added to its existing user root within 10 s (commands_changed first)', async () => {
    const { home, cwd } = await layout();
    await mkdir(path.join(home, '.claude/skills'), { recursive: true });
    const session = await ClaudeSession.start({ home, cwd });
    sessions.push(session);
    expect((await session.send('hello')).length).toBeGreaterThan(0);
    expect(claude.listedSkills(session.mock.requests).map((s) => s.name)).not.toContain('late-skill');
    const added = Date.now();
    await writeTree(path.join(home, '.claude/skills/late-skill'), { 'SKILL.md': skillMd('late-skill', 'Added while the session runs.') });
    const listed = await session.waitUntilListed('late-skill', { timeoutMs: 10_000 });
    const changed = session.events.find((e) => e.subtype === 'commands_changed' && e.at >= added);
    console.info(`claude-code session: late-skill listed ${listed.request.time - added} ms after it was written; commands_changed after ${changed ? changed.at - added : 'never'} ms`);
    expect(changed).toBeDefined();
  });

  it('does not list a skill whose root did not exist when the session started (12 s)', async () => {
    const { home, cwd } = await layout();
    const session = await ClaudeSession.start({ home, cwd });
    sessions.push(session);
    await session.send('hello');
    await writeTree(path.join(home, '.claude/skills/late-skill'), { 'SKILL.md': skillMd('late-skill', 'Added while the session runs.') });
    await expect(session.waitUntilListed('late-skill', { timeoutMs: 12_000, intervalMs: 1_000 })).rejects.toThrow('did not list late-skill');
  });
});
