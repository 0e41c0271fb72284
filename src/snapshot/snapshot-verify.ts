// `skills-mount verify DEST`: re-hashes a snapshot against its manifest and names each file
// that differs (bytes, size, mode), is missing, or is extra (any name the manifest does not list,
// and anything that is not a plain file or directory). DEST is the published link or any folder
// holding a `.snapshot.json` (a copy: `cp -r`, an image, rsync); the report says which, and what
// in it, or on the way to it, others than this user and root can change.
import type { Stats } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { APPROVED_DIR, SKILLS_JSON } from '../fs/mount-layout.js';
import { sha256Digest } from '../format/digest.js';
import { currentUid, entryControl, pathControl, type ControlReason, type PathControlFinding } from '../path-control.js';
import { errorMessage, kindOf } from '../private-files.js';
import { nodeSnapshotFs, type SnapshotFs } from './snapshot-fs.js';
import { asCatalogDocument, type CatalogDocument, type ServerComparison, type SnapshotSide } from './server-comparison.js';
import { MANIFEST_NAME, parseManifest, type SnapshotManifest, type VerifyProblem } from './snapshot-manifest.js';
import { treeProblems, type TreeNode, type TreeSource } from './tree-check.js';

export type { VerifyProblem } from './snapshot-manifest.js';
import { resolvePublished, snapshotsDirOf } from './snapshot-store.js';

/** What DEST was: the link `snapshot` publishes, a folder holding a manifest (a copy of one), or an OCI image layout (`snapshot --oci`). */
export type VerifiedGiven = 'link' | 'folder' | 'oci-layout';

export interface VerifyReport {
  dest: string;
  given: VerifiedGiven;
  /** The folder checked: the link's target, or DEST itself. */
  dir: string;
  /** The link's snapshot id, or the manifest's for a folder; null when a folder's manifest cannot be read. */
  id: string | null;
  /** sha256 of the manifest's exact bytes; null when it cannot be read. */
  manifestDigest: string | null;
  /** What --expect said it must be; null without --expect. */
  expectedDigest: string | null;
  /** Files the manifest lists. */
  files: number;
  bytes: number;
  problems: VerifyProblem[];
  /**
   * What others than the user running verify (and root) can change: the snapshot's folder, a
   * folder or file in it, its manifest, the snapshots folder and DEST's link, and the folders on
   * the way. Its own manifest proves nothing against them (--expect, --against-server do).
   */
  controlledByOthers: ControlledEntry[];
  /** With --against-server: the servers compared and how much; null without. */
  againstServer: Omit<ServerComparison, 'problems'> | null;
  /** For an OCI image layout: the image index's digest (what --expect names), its layer's, its platforms, the harness it is laid out for; null otherwise. */
  image: { indexDigest: string; layerDigest: string | null; platforms: string[]; harness: string | null } | null;
}

/** One entry someone else can change: its owner is another user, or others can write it. */
export interface ControlledEntry {
  /** Absolute. */
  path: string;
  ownerUid: number;
  mode: number;
  reason: ControlReason;
}

export interface VerifyOptions {
  fs?: SnapshotFs | undefined;
  /** Whose view the control check takes (default this process's uid). */
  uid?: number | undefined;
  /** sha256:<hex> the manifest's bytes must hash to (the digest `snapshot` printed): the anchor a folder's own manifest cannot be. */
  expectDigest?: string | undefined;
  /** Compares the manifest (and skills.json) with what the servers list now: the other anchor. */
  againstServer?: ((snapshot: SnapshotSide) => Promise<ServerComparison>) | undefined;
}

/** Checks the snapshot DEST names, or the snapshot folder DEST is; throws ConfigError when it is neither. */
export async function verifySnapshot(dest: string, options: VerifyOptions = {}): Promise<VerifyReport> {
  const fs = options.fs ?? nodeSnapshotFs;
  const target = await verifyTarget(dest, fs);
  const { dir } = target;
  const expectedDigest = options.expectDigest ?? null;
  let manifestDigest: string | null = null;
  const uid = 'uid' in options ? options.uid : currentUid();
  const controlled = new Map<string, ControlledEntry>();
  const record = (finding: PathControlFinding | undefined): void => {
    if (finding !== undefined) controlled.set(finding.path, { path: finding.path, ownerUid: finding.ownerUid, mode: finding.mode, reason: finding.reason });
  };
  const note = (absolute: string, stats: Stats | undefined): void => record(stats && entryControl(absolute, stats, uid));
  // The way to it first: the folders above (a sticky one is fine), DEST's link, the snapshots folder.
  for (const finding of await pathControl(dest, { uid, strictTarget: true })) record(finding);
  // A sticky snapshots folder is not enough: whoever can make names in it can plant a snapshot.
  if (target.given === 'link') note(path.dirname(dir), await fs.lstat(path.dirname(dir)));
  note(path.join(dir, MANIFEST_NAME), await fs.lstat(path.join(dir, MANIFEST_NAME)));
  let againstServer: VerifyReport['againstServer'] = null;
  const report = (id: string | null, problems: VerifyProblem[], manifest?: SnapshotManifest): VerifyReport => ({
    dest,
    given: target.given,
    dir,
    id,
    manifestDigest,
    expectedDigest,
    files: manifest?.files.length ?? 0,
    bytes: manifest?.files.reduce((sum, file) => sum + file.sizeBytes, 0) ?? 0,
    problems,
    controlledByOthers: [...controlled.values()],
    againstServer,
    image: null,
  });
  if ((await fs.lstat(dir))?.isDirectory() !== true) {
    return report(target.id, [{ path: '', kind: 'missing', detail: `${dest} points to ${dir}, which is not a directory` }]);
  }
  let manifest: SnapshotManifest;
  const problems: VerifyProblem[] = [];
  try {
    const bytes = await fs.readFile(`${dir}/${MANIFEST_NAME}`);
    manifestDigest = sha256Digest(bytes);
    // First: a manifest that is not the one expected says so, whatever else it holds.
    if (expectedDigest !== null && manifestDigest !== expectedDigest) {
      problems.push({ path: MANIFEST_NAME, kind: 'differs', detail: `hashes to ${manifestDigest}, not the ${expectedDigest} --expect says: not the snapshot you expect (another one, or its manifest was rewritten)` });
    }
    manifest = parseManifest(bytes.toString('utf8'), MANIFEST_NAME);
  } catch (error) {
    return report(target.id, [...problems, { path: MANIFEST_NAME, kind: 'missing', detail: `the manifest cannot be read: ${errorMessage(error)}` }]);
  }
  if (target.id !== null && manifest.id !== target.id) problems.push({ path: MANIFEST_NAME, kind: 'differs', detail: `it names snapshot ${manifest.id}, the link ${target.id}` });
  problems.push(...(await treeProblems(diskTree(fs, dir, note), manifest)));
  if (options.againstServer !== undefined) {
    const { problems: differences, ...summary } = await options.againstServer({ manifest, documents: await readDocuments(fs, dir, manifest) });
    problems.push(...differences);
    againstServer = summary;
  }
  return report(target.id ?? manifest.id, problems, manifest);
}

/** The folder `dir` as a tree to check; `note` sees every entry's stats (who else controls it). */
function diskTree(fs: SnapshotFs, dir: string, note: (absolute: string, stats: Stats | undefined) => void): TreeSource {
  const at = (relative: string): string => (relative === '' ? dir : `${dir}/${relative}`);
  return {
    async list(relative) {
      const listed: Array<{ name: string; node: TreeNode; visited: () => void }> = [];
      for (const entry of await fs.readdir(at(relative))) {
        const absolute = `${at(relative)}/${entry.name}`;
        const stats = await fs.lstat(absolute);
        if (stats === undefined) continue;
        const mode = stats.mode & 0o7777;
        const node: TreeNode = stats.isDirectory() ? { kind: 'directory', mode } : stats.isFile() ? { kind: 'file', mode, sizeBytes: stats.size } : { kind: 'other', mode, description: kindOf(stats) };
        listed.push({ name: entry.name, node, visited: () => note(absolute, stats) });
      }
      return listed;
    },
    read: (relative) => fs.readFile(at(relative)),
    async root() {
      const stats = await fs.lstat(dir);
      return stats && { kind: 'directory', mode: stats.mode & 0o7777 };
    },
  };
}

/** The snapshot's skills.json files (those the manifest lists), parsed; undefined for one that cannot be read as JSON. */
async function readDocuments(fs: SnapshotFs, dir: string, manifest: SnapshotManifest): Promise<Map<string, CatalogDocument | undefined>> {
  const documents = new Map<string, CatalogDocument | undefined>();
  for (const file of manifest.files) {
    if (file.path !== SKILLS_JSON && file.path !== `${APPROVED_DIR}/${SKILLS_JSON}`) continue;
    try {
      documents.set(file.path, asCatalogDocument(JSON.parse((await fs.readFile(path.join(dir, file.path))).toString('utf8'))));
    } catch {
      documents.set(file.path, undefined);
    }
  }
  return documents;
}

/** The folder to check and how DEST names it; ConfigError when DEST is neither a snapshot link nor a folder with a manifest. */
async function verifyTarget(dest: string, fs: SnapshotFs): Promise<{ given: VerifiedGiven; dir: string; id: string | null }> {
  const stats = await fs.lstat(dest);
  if (stats === undefined) throw new ConfigError(`${dest}: no snapshot there (it does not exist)`);
  if (stats.isSymbolicLink()) {
    try {
      const published = await resolvePublished(dest, fs);
      // Real paths: what is checked, and what the walk to it finds, named alike.
      if (published !== undefined) return { given: 'link', id: published.id, dir: await realpathOr(published.dir) };
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
    }
    throw new ConfigError(`${dest} is a symbolic link, but not one \`skills-mount snapshot\` published (to ${path.basename(snapshotsDirOf(dest))}/<id>); to check the folder it leads to, give that folder: skills-mount verify "$(realpath ${dest})"`);
  }
  if (!stats.isDirectory()) throw new ConfigError(`${dest} is ${kindOf(stats)}, not a snapshot (give the published link, or a folder holding ${MANIFEST_NAME})`);
  if ((await fs.lstat(path.join(dest, MANIFEST_NAME))) === undefined) {
    throw new ConfigError(`${dest} is a folder without ${MANIFEST_NAME}: not a snapshot, nor a copy of one (give the published link, or a folder holding ${MANIFEST_NAME})`);
  }
  return { given: 'folder', dir: await realpathOr(dest), id: null };
}

/** The real path, or the path made absolute when it cannot be resolved (a link to nothing). */
async function realpathOr(where: string): Promise<string> {
  try {
    return await realpath(where);
  } catch {
    return path.resolve(where);
  }
}
