// A served folder's skills, every one approved by a person and every one locked for a team, built
// from skills/list as `approve` and `lock` bind them (every file's uri, size and digest), so the link
// rows need no interactive command. The lockfile's text is the project's own writer's (dist/), and
// is parsed back by its own reader before it is used.
import path from 'node:path';
import { REPO } from './paths.mjs';
import { connectStdio, listAllSkills, uriToPath } from './raw-client.mjs';

const { resourcesDigest } = await import(path.join(REPO, 'dist', 'catalog', 'resources-digest.js'));
const { parseLockfile, serializeLockfile } = await import(path.join(REPO, 'dist', 'team', 'lockfile.js'));

const SKILL_MD = 'SKILL.md';

/**
 * Every skill `dir` serves, as approvals.json entries of `label` and as a skills-lock.json text
 * naming `server` ({command, args}: the configured server, as the lock records it). Also the
 * LABEL/SKILLDIR of each, sorted, for `approve` and `lock`.
 */
export async function approvedAndLocked(dir, { label, server }) {
  const client = await connectStdio(dir);
  let skills;
  try {
    ({ skills } = await listAllSkills(client));
  } finally {
    await client.close();
  }
  const approvals = [];
  const locked = [];
  for (const skill of skills) {
    const resources = skill.resources.map((resource) => ({ uri: resource.uri, digest: resource.digest, sizeBytes: resource.size })).sort((a, b) => compare(a.uri, b.uri));
    const setDigest = resourcesDigest(resources);
    const name = skill.frontmatter?.name ?? skill.name;
    approvals.push({
      label,
      skillUri: skill.uri,
      name,
      resources,
      resourcesDigest: setDigest,
      approvedAt: new Date().toISOString(),
      allowedToolsApproved: false,
      allowedTools: null,
      execApproved: false,
      revokedAt: null,
    });
    const skillMdPath = uriToPath(skill.uri);
    if (path.posix.basename(skillMdPath) !== SKILL_MD) throw new Error(`locked catalog: ${skill.uri} is not a SKILL.md`);
    const directory = path.posix.dirname(skillMdPath);
    const files = resources.map((resource) => ({ path: path.posix.relative(directory, uriToPath(resource.uri)), uri: resource.uri, sizeBytes: resource.sizeBytes, digest: resource.digest }));
    const skillMd = files.find((file) => file.uri === skill.uri);
    locked.push({ server: label, path: directory, uri: skill.uri, name, skillDigest: skillMd.digest, resourcesDigest: setDigest, files, grants: { allowedTools: null, exec: false } });
  }
  const lockText = serializeLockfile({ servers: { [label]: { command: server.command, args: [...server.args] } }, skills: locked });
  // The project's own reader checks every entry (digests recomputed): a wrong lock fails here, not in a timed run.
  if (parseLockfile(lockText, 'built lockfile').skills.length !== skills.length) throw new Error('locked catalog: the built lockfile lost skills');
  const paths = locked.map((skill) => `${label}/${skill.path}`).sort(compare);
  return { approvals, lockText, paths };
}

function compare(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}
