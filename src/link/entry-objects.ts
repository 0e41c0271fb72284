// The read-only copies of approved skills that linked entries point to, one folder per entry
// version, in `<store>/objects/<label>/<hash>/` (the object's key is `<label>/<hash>`: every path
// where a server's content lies names that server, SEP-2640's rule for materialized content):
//   skill/              the entry as a harness reads it: every approved file (nested SKILL.md files
//                       left out: Codex and OpenCode would list them as skills of their own), the
//                       SKILL.md as entry-transform.ts makes it; files 0444 (0555 for those that
//                       start with #! when the approval granted exec), folders 0555
//   approved-SKILL.md   the approved SKILL.md, byte for byte: verify derives the entry's from it
//   entry.json          what the entry is: origin, grants, and every file's digest, size and mode
// Built in `objects/.build-<key>-<random>` from bytes that hashed to the approval's digests, then
// renamed into place whole; never changed after. The key names the content, so a version that
// exists is never built again. Knows files; the roots are link-sync.ts's.
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, readdir, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Approval } from '../approvals/approval-store.js';
import { splitPath, uriToSegments } from '../catalog/uri-path.js';
import { sha256Digest } from '../format/digest.js';
import { PRIVATE_DIRECTORY_MODE, PRIVATE_READ_ONLY_FILE_MODE, READ_ONLY_EXEC_MODE, READ_ONLY_FILE_MODE } from '../file-modes.js';
import { errorCode } from '../private-files.js';
import { removeReadOnlyTree, sealReadOnlyTree } from '../read-only-tree.js';
import { transformSkillMdBytes, type EntryGrants } from './entry-transform.js';
import { LABEL_PATTERN, isValidLabel } from '../labels.js';

/** Changes when what an entry holds for the same approval changes (the transform, the layout): old objects are then rebuilt. */
const FORMAT = 3;
export const OBJECTS_DIR = 'objects';
const BUILD_PREFIX = '.build-';
const HASH_PATTERN = /^[0-9a-f]{64}$/;
/** An object key: `<label>/<hash>`; a bare hash is the layout before format 2 (found in old roots, replaced at their next sync). */
export const OBJECT_KEY_PATTERN = new RegExp(`^(?:${LABEL_PATTERN.source.slice(1, -1)}/)?[0-9a-f]{64}$`);
export const ENTRY_JSON = 'entry.json';
export const APPROVED_SKILL_MD = 'approved-SKILL.md';
export const SKILL_DIR = 'skill';

export interface LinkGrants extends EntryGrants {
  /** Files that start with #! are executable. */
  exec: boolean;
}

/** One file of an entry: where it lies in the skill folder, and what the approval says of it. */
export interface EntryFile {
  relative: string;
  uri: string;
  digest: string;
  sizeBytes: number;
}

/** What one entry version is made of. */
export interface EntrySpec {
  key: string;
  entryName: string;
  label: string;
  skillUri: string;
  resourcesDigest: string;
  grants: LinkGrants;
  files: EntryFile[];
}

/** entry.json. */
export interface EntryRecord {
  format: number;
  entryName: string;
  label: string;
  skillUri: string;
  resourcesDigest: string;
  grants: LinkGrants;
  files: Array<EntryFile & { mode: number }>;
  /** The entry's SKILL.md as written (differs from the approved one in its frontmatter only). */
  skillMd: { digest: string; sizeBytes: number };
}

/** Bytes of an approved file, or undefined when none can be had now (the server is away). */
export type ReadApproved = (file: EntryFile) => Promise<Buffer | undefined>;

/** The files of an approved skill, relative to its folder; a problem when a resource lies outside it. */
export function entryFiles(approval: Approval): EntryFile[] | { problem: string } {
  const skill = uriToSegments(approval.skillUri);
  if ('problem' in skill) return { problem: `its URI ${approval.skillUri}: ${skill.problem}` };
  const folder = skill.slice(0, -1);
  const files: EntryFile[] = [];
  for (const resource of approval.resources) {
    const segments = uriToSegments(resource.uri);
    if ('problem' in segments) return { problem: `${resource.uri}: ${segments.problem}` };
    if (segments.length <= folder.length || folder.some((segment, i) => segments[i] !== segment)) return { problem: `${resource.uri} is not inside the skill's folder` };
    const relative = segments.slice(folder.length);
    // A nested skill's SKILL.md: not a file of this entry (it would be listed as a skill of its own).
    if (relative.length > 1 && relative[relative.length - 1] === 'SKILL.md') continue;
    files.push({ relative: relative.join('/'), uri: resource.uri, digest: resource.digest, sizeBytes: resource.sizeBytes });
  }
  if (!files.some((file) => file.relative === 'SKILL.md')) return { problem: 'its approval lists no SKILL.md in its folder' };
  return files;
}

/** The entry version an approval makes under `entryName`. */
export function entrySpec(approval: Approval, entryName: string, files: EntryFile[]): EntrySpec {
  const grants: LinkGrants = { allowedTools: approval.allowedToolsApproved, exec: approval.execApproved };
  const identity = { format: FORMAT, entryName, label: approval.label, skillUri: approval.skillUri, resourcesDigest: approval.resourcesDigest, grants };
  const key = `${approval.label}/${createHash('sha256').update(JSON.stringify(identity)).digest('hex')}`;
  return { key, entryName, label: approval.label, skillUri: approval.skillUri, resourcesDigest: approval.resourcesDigest, grants, files };
}

/** The folder of the object `key`: `<store>/objects/<label>/<hash>`. */
export function objectDir(store: string, key: string): string {
  return path.join(store, OBJECTS_DIR, ...key.split('/'));
}

/** Where a linked entry points: `<store>/objects/<label>/<hash>/skill`. */
export function objectTarget(store: string, key: string): string {
  return path.join(objectDir(store, key), SKILL_DIR);
}

/** The key of the object `target` (a symbolic link's text) points to, when it is one of this store's; else undefined. */
export function objectOfTarget(store: string, target: string): string | undefined {
  const prefix = path.join(store, OBJECTS_DIR) + path.sep;
  if (!target.startsWith(prefix)) return undefined;
  const parts = target.slice(prefix.length).split(path.sep);
  if (parts.at(-1) !== SKILL_DIR) return undefined;
  const key = parts.slice(0, -1).join('/');
  return OBJECT_KEY_PATTERN.test(key) ? key : undefined;
}

export async function readEntryRecord(store: string, key: string): Promise<EntryRecord | undefined> {
  try {
    return JSON.parse(await readFile(path.join(objectDir(store, key), ENTRY_JSON), 'utf8')) as EntryRecord;
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/**
 * One file of an entry as a harness gets it, from its approved bytes (already checked against the
 * approval): SKILL.md with its frontmatter made by entry-transform.ts, every other file byte for
 * byte; 0444, or 0555 for a file that starts with #! when the approval granted exec. What `link`
 * writes, and what `snapshot --oci --for HARNESS` puts in its layer. Throws FrontmatterError.
 */
export function entryFileContent(spec: Pick<EntrySpec, 'entryName' | 'label' | 'skillUri' | 'grants'>, file: Pick<EntryFile, 'relative'>, approved: Buffer): { bytes: Buffer; mode: number } {
  const bytes = file.relative === 'SKILL.md' ? transformSkillMdBytes(approved, { entryName: spec.entryName, label: spec.label, skillUri: spec.skillUri }, spec.grants) : approved;
  return { bytes, mode: spec.grants.exec && startsWithShebang(approved) ? READ_ONLY_EXEC_MODE : READ_ONLY_FILE_MODE };
}

/**
 * Makes the object of `spec` unless it exists: reads each file, keeps only bytes whose sha256
 * and size are the approval's, transforms SKILL.md. Resolves why it could not (a file not
 * available, bytes that do not match), or undefined once the object is in place.
 */
export async function ensureObject(store: string, spec: EntrySpec, read: ReadApproved): Promise<string | undefined> {
  const objects = path.join(store, OBJECTS_DIR);
  const final = objectDir(store, spec.key);
  if (await exists(path.join(final, ENTRY_JSON))) return undefined;
  // A folder there without its entry.json is no object of ours (renames put objects in place whole).
  if (await exists(final)) await removeReadOnlyTree(final);
  await mkdir(path.dirname(final), { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  const build = path.join(objects, `${BUILD_PREFIX}${path.basename(final)}-${randomBytes(4).toString('hex')}`);
  try {
    const skillDir = path.join(build, SKILL_DIR);
    await mkdir(skillDir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
    const files: EntryRecord['files'] = [];
    let skillMd: EntryRecord['skillMd'] | undefined;
    const made = new Set([skillDir]);
    for (const file of spec.files) {
      const bytes = await read(file);
      if (bytes === undefined) return `${file.relative} is not available now`;
      const digest = sha256Digest(bytes);
      if (digest !== file.digest || bytes.length !== file.sizeBytes) return `${file.relative}: the bytes read (${bytes.length} bytes, ${digest}) are not the approved ones (${file.sizeBytes} bytes, ${file.digest})`;
      const { bytes: written, mode } = entryFileContent(spec, file, bytes);
      if (file.relative === 'SKILL.md') {
        await writeFile(path.join(build, APPROVED_SKILL_MD), bytes, { mode: READ_ONLY_FILE_MODE });
        skillMd = { digest: sha256Digest(written), sizeBytes: written.length };
      }
      const where = path.join(skillDir, ...splitPath(file.relative));
      if (!made.has(path.dirname(where))) {
        await mkdir(path.dirname(where), { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
        made.add(path.dirname(where));
      }
      await writeFile(where, written, { mode });
      await chmod(where, mode); // the umask must not decide
      files.push({ ...file, mode });
    }
    const record: EntryRecord = {
      format: FORMAT,
      entryName: spec.entryName,
      label: spec.label,
      skillUri: spec.skillUri,
      resourcesDigest: spec.resourcesDigest,
      grants: spec.grants,
      files,
      skillMd: skillMd!,
    };
    await writeFile(path.join(build, ENTRY_JSON), `${JSON.stringify(record, null, 2)}\n`, { mode: PRIVATE_READ_ONLY_FILE_MODE });
    await sealReadOnlyTree(skillDir);
    try {
      await rename(build, final);
    } catch (error) {
      // Another linker made the same version meanwhile: theirs is the same bytes.
      if (errorCode(error) !== 'ENOTEMPTY' && errorCode(error) !== 'EEXIST') throw error;
    }
    return undefined;
  } finally {
    await removeReadOnlyTree(build);
  }
}

/**
 * Removes objects no root points to any more: built more than `retainMs` ago, so a harness that
 * read an entry's path just before it was replaced can still finish; and builds left by a crash.
 * Call under the links lock (no build is then in flight).
 */
export async function removeUnreferenced(store: string, referenced: ReadonlySet<string>, retired: Record<string, string>, now: Date, retainMs: number): Promise<void> {
  const objects = path.join(store, OBJECTS_DIR);
  const present = new Set<string>();
  const judge = async (key: string): Promise<void> => {
    present.add(key);
    if (referenced.has(key)) {
      delete retired[key];
      return;
    }
    retired[key] ??= now.toISOString();
    if (now.getTime() - Date.parse(retired[key]) >= retainMs) {
      await removeReadOnlyTree(objectDir(store, key));
      delete retired[key];
    }
  };
  for (const name of await readdir(objects).catch(absentAsEmpty)) {
    if (name.startsWith(BUILD_PREFIX)) await removeReadOnlyTree(path.join(objects, name));
    else if (HASH_PATTERN.test(name)) await judge(name);
    else if (isValidLabel(name)) {
      const hashes = await readdir(path.join(objects, name)).catch(absentAsEmpty);
      for (const hash of hashes) if (HASH_PATTERN.test(hash)) await judge(`${name}/${hash}`);
      // A label none of whose objects is left: its folder goes too.
      await rmdir(path.join(objects, name)).catch(() => {});
    }
  }
  for (const key of Object.keys(retired)) if (!present.has(key)) delete retired[key];
}

function absentAsEmpty(error: unknown): string[] {
  if (errorCode(error) === 'ENOENT') return [];
  throw error;
}

function startsWithShebang(bytes: Buffer): boolean {
  return bytes.length >= 2 && bytes[0] === 0x23 && bytes[1] === 0x21;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
