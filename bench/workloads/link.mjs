// `skills-mount link claude-code` of N approved skills into one root, no mount anywhere (link starts
// the server itself, stdio skills-serve): a cold link (a new store: every file fetched, verified,
// copied into the store, one symbolic link per skill) against `cp -r` of the same files from the
// served folder; then a second link with nothing changed (no byte read) against `cp -al` of the
// linked tree. Approvals are written straight into approvals.json, as `approve` would store them.
import { execFile } from 'node:child_process';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO, SKILLS_MOUNT, SKILLS_SERVE } from '../lib/paths.mjs';
import { connectStdio, listAllSkills } from '../lib/raw-client.mjs';
import { timed } from '../lib/stats.mjs';

const { resourcesDigest } = await import(path.join(REPO, 'dist', 'catalog', 'resources-digest.js'));

/** Samples (ms) per phase: cold (link, cp -r), unchanged (link, cp -al); and what was linked. */
export async function measureLink({ workDir, catalog, runs, log }) {
  const base = path.join(workDir, 'link');
  await mkdir(base, { recursive: true });
  const approvals = await approvalsOf(catalog.dir);
  const samples = { cold: [], copy: [], unchanged: [], copyLinks: [] };
  let linked = 0;
  for (let run = 0; run < runs; run++) {
    const home = path.join(base, `home-${run}`);
    const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local', 'share'), XDG_CACHE_HOME: path.join(home, '.cache') };
    await mkdir(path.join(home, '.config', 'skills-mount'), { recursive: true, mode: 0o700 });
    await writeFile(path.join(home, '.config', 'skills-mount', 'approvals.json'), `${JSON.stringify({ version: 1, approvals }, null, 2)}\n`, { mode: 0o600 });
    const link = () => run_(process.execPath, [SKILLS_MOUNT, 'link', 'claude-code', '--server', `bench=${process.execPath} ${SKILLS_SERVE} ${catalog.dir}`], env);
    const copy = path.join(base, `copy-${run}`);
    // Both sides cold in the page cache's sense are not reachable here: both read the same served tree.
    for (const side of run % 2 === 0 ? ['link', 'copy'] : ['copy', 'link']) {
      if (side === 'link') samples.cold.push((await timed(link)).ms);
      else samples.copy.push((await timed(() => run_('cp', ['-r', catalog.dir, copy]))).ms);
    }
    const root = path.join(home, '.claude', 'skills');
    linked = (await readdir(root)).length;
    if (linked !== approvals.length) throw new Error(`link bench: ${linked} entries in ${root}, ${approvals.length} approved`);
    samples.unchanged.push((await timed(link)).ms);
    samples.copyLinks.push((await timed(() => run_('cp', ['-al', copy, `${copy}-again`]))).ms);
    await run_('chmod', ['-R', 'u+w', home]);
    await rm(home, { recursive: true, force: true });
    await rm(copy, { recursive: true, force: true });
    await rm(`${copy}-again`, { recursive: true, force: true });
    log(`link: run ${run + 1}: cold ${samples.cold.at(-1).toFixed(0)} ms (cp -r ${samples.copy.at(-1).toFixed(0)} ms), unchanged ${samples.unchanged.at(-1).toFixed(0)} ms`);
  }
  return { samples, skills: approvals.length, files: catalog.files.length, totalBytes: catalog.totalBytes };
}

/** Every skill of the served folder approved as skills/list advertises it now. */
async function approvalsOf(dir) {
  const client = await connectStdio(dir);
  try {
    const { skills } = await listAllSkills(client);
    return skills.map((skill) => {
      const resources = skill.resources.map((resource) => ({ uri: resource.uri, digest: resource.digest, sizeBytes: resource.size })).sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
      return {
        label: 'bench',
        skillUri: skill.uri,
        name: skill.frontmatter?.name ?? skill.name,
        resources,
        resourcesDigest: resourcesDigest(resources),
        approvedAt: new Date().toISOString(),
        allowedToolsApproved: false,
        allowedTools: null,
        execApproved: false,
        revokedAt: null,
      };
    });
  } finally {
    await client.close();
  }
}

function run_(command, args, env = process.env) {
  return new Promise((resolve, reject) =>
    execFile(command, args, { env, maxBuffer: 64 << 20 }, (error, stdout, stderr) => (error ? reject(new Error(`${command} ${args[0]}: ${stderr || error.message}`)) : resolve(stdout))),
  );
}
