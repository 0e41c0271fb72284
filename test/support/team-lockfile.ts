// Project lockfiles for tests, made without the code under test: a locked skill from the bytes of
// its files (each digest and the set's digest computed here), the raw JSON object a lockfile holds,
// and its text, so that a test can write a lockfile a person (or a hostile repository) would commit.
import { createHash } from 'node:crypto';

/** `sha256:<hex>` of `bytes`, computed here. */
export function sha256Of(bytes: string | Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** The set digest: sha256 over "uri digest\n" lines sorted (as skills.json reports it). */
export function setDigestOf(files: ReadonlyArray<{ uri: string; digest: string }>): string {
  const hash = createHash('sha256');
  for (const line of files.map((file) => `${file.uri} ${file.digest}\n`).sort()) hash.update(line);
  return `sha256:${hash.digest('hex')}`;
}

export interface RawLockedFile {
  path: string;
  size: number;
  digest: string;
  uri: string;
}

export interface RawLockedSkill {
  server: string;
  path: string;
  uri: string;
  name: string;
  skillDigest: string;
  resourcesDigest: string;
  grants: { allowedTools: string | null; exec: boolean };
  files: RawLockedFile[];
}

export interface RawLockfile {
  lockfileVersion: number;
  servers: Record<string, { url: string } | { command: string; args: string[] }>;
  skills: RawLockedSkill[];
}

/**
 * A lock entry for skill folder `dir` of server `server`, whose files (relative to the folder,
 * SKILL.md among them) hold `contents`: URIs under skill://, digests of those bytes.
 */
export function lockedEntry(server: string, dir: string, contents: Record<string, string | Uint8Array>, grants: Partial<RawLockedSkill['grants']> = {}): RawLockedSkill {
  const files = Object.entries(contents)
    .map(([relative, bytes]) => ({ path: relative, size: Buffer.byteLength(bytes), digest: sha256Of(bytes), uri: `skill://${dir}/${relative}` }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const skillMd = files.find((file) => file.path === 'SKILL.md');
  if (skillMd === undefined) throw new Error(`${dir}: no SKILL.md among the contents`);
  return {
    server,
    path: dir,
    uri: skillMd.uri,
    name: dir.split('/').at(-1)!,
    skillDigest: skillMd.digest,
    resourcesDigest: setDigestOf(files),
    grants: { allowedTools: grants.allowedTools ?? null, exec: grants.exec ?? false },
    files,
  };
}

/** A SKILL.md text named `name`. */
export function skillText(name: string, description = `Does ${name} things`, extraFrontmatter = '', body = `# ${name}\n`): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extraFrontmatter}---\n${body}`;
}

/** A lockfile object locking `skills`, each server named with `identity`. */
export function rawLockfile(servers: RawLockfile['servers'], skills: RawLockedSkill[], lockfileVersion = 1): RawLockfile {
  return { lockfileVersion, servers, skills };
}

/** Pretty JSON, as a person might write it by hand (not the serializer's layout). */
export function lockText(lock: unknown): string {
  return `${JSON.stringify(lock, null, 2)}\n`;
}

/** A deep copy to change for one hostile case. */
export function copyOf<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
