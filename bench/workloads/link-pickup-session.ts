// From `approve` returning to the skill listed in a running Claude Code session (issue 28's bench
// row), both ways a linked root is fed: with a running mount (`approve MOUNT/LABEL/SKILL`, which
// brings the linked roots up to date before it returns) and with no FUSE (`approve LABEL/SKILL
// --config FILE`, the same from the configured server started in that process). One Claude Code
// session per way (stream-json, against the test kit's mock model), linked to its user root
// before it starts; each sample approves one more skill and asks until the model request lists it.
//
// Run by bench/workloads/link-pickup.mjs through vite-node (it reuses the harness kit in
// test/support, TypeScript). In: PICKUP_SAMPLES, PICKUP_OUT (where the JSON result goes).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ClaudeSession } from '../../test/support/harness/claude-session.js';
import { harnesses, isInstalled } from '../../test/support/harness/harnesses.js';
import { homeEnv, skillsMount, writeServeConfig } from '../../test/support/harness/link-world.js';
import { serveEntry, startMount, SKILLS_SERVE, type RunningMount } from '../../test/support/mount-harness.js';
import { makeTempDir, removeDir } from '../../test/support/temp-dir.js';
import { writeTree } from '../../test/support/skill-builder.js';

type Way = 'fuse' | 'no-fuse';
const LABEL = 'docs';
/** Claude Code lists a folder added to its watched root in about 4 s; past this a sample failed. */
const LISTED_WITHIN_MS = 20_000;

const samples = Number(process.env['PICKUP_SAMPLES'] ?? 5);
const out = process.env['PICKUP_OUT'];

const skillName = (index: number) => `pickup-${index}`;

async function expectOk(env: NodeJS.ProcessEnv, args: string[]): Promise<void> {
  const result = await skillsMount(env, args);
  if (result.code !== 0) throw new Error(`skills-mount ${args.join(' ')}: exit ${result.code}\n${result.stderr}`);
}

/** Every sample of one way: ms from approve's return to the model request that lists the skill. */
async function measureWay(way: Way): Promise<number[]> {
  const dir = await makeTempDir('skills-mount-bench-pickup-');
  let mount: RunningMount | undefined;
  let session: ClaudeSession | undefined;
  try {
    const skills = path.join(dir, 'skills');
    const tree: Record<string, string> = { 'probe/SKILL.md': '---\nname: probe\ndescription: Linked before the session starts.\n---\n# Probe\n' };
    for (let index = 0; index < samples; index++) {
      tree[`${skillName(index)}/SKILL.md`] = `---\nname: ${skillName(index)}\ndescription: Approved while the session runs (${index}).\n---\n# ${skillName(index)}\n`;
    }
    await writeTree(skills, tree);
    const home = path.join(dir, 'home');
    await mkdir(home, { mode: 0o700 });
    const env = homeEnv(home);
    const config = path.join(dir, 'config.json');
    await writeServeConfig(config, LABEL, skills, SKILLS_SERVE);
    // What approve is given: the skill's folder in the mount, or LABEL/SKILL with the configured server.
    let approveArgs: (name: string) => string[];
    if (way === 'fuse') {
      const running = await startMount({ dir, config: { [LABEL]: serveEntry(skills) }, env });
      mount = running;
      approveArgs = (name) => ['approve', path.join(running.mountpoint, LABEL, name), '--yes'];
      await expectOk(env, approveArgs('probe'));
      await expectOk(env, ['link', 'claude-code']);
    } else {
      approveArgs = (name) => ['approve', `${LABEL}/${name}`, '--config', config, '--yes'];
      await expectOk(env, approveArgs('probe'));
      await expectOk(env, ['link', 'claude-code', '--config', config]);
    }
    const cwd = path.join(dir, 'work');
    await mkdir(cwd);
    session = await ClaudeSession.start({ home, cwd });
    const first = await session.send('hello', 60_000);
    if (!harnesses['claude-code'].listedSkills(first).some((skill) => skill.name === 'probe')) throw new Error('Claude Code did not list the skill linked before it started');
    const measured: number[] = [];
    for (let index = 0; index < samples; index++) {
      await expectOk(env, approveArgs(skillName(index)));
      const returned = Date.now();
      const listed = await session.waitUntilListed(skillName(index), { timeoutMs: LISTED_WITHIN_MS });
      measured.push(listed.request.time - returned);
      process.stderr.write(`link pickup (${way}): ${skillName(index)} listed ${measured.at(-1)} ms after approve returned\n`);
    }
    await expectOk(env, ['unlink', 'claude-code']);
    return measured;
  } finally {
    await session?.close();
    await mount?.stop();
    await removeDir(dir);
  }
}

async function main(): Promise<void> {
  if (!out) throw new Error('PICKUP_OUT is not set');
  const result = isInstalled('claude-code')
    ? { version: harnesses['claude-code'].version, fuse: await measureWay('fuse'), noFuse: await measureWay('no-fuse') }
    : { skipped: 'Claude Code is not installed (scripts/harnesses.sh installs it)' };
  await writeFile(out, `${JSON.stringify(result)}\n`);
}

await main();
