// Writes one snapshot: walks the same filesystem core the mount serves (readdir, getattr, the
// digest xattr, open/read/release), in process, and writes each file's verified bytes, or links
// an earlier snapshot's file whose bytes still hash to the listed digest (no request at all).
// A skill any of whose files cannot be fetched and verified is left out whole. Knows the core's
// interface and the mount's layout, nothing of MCP, catalogs or FUSE.
import { IntegrityError, SkillsMountError } from '../errors.js';
import { mapLimited } from '../concurrency.js';
import type { FilesystemCore } from '../fs/filesystem-core.js';
import { APPROVED_DIR } from '../fs/mount-layout.js';
import { sha256Digest } from '../format/digest.js';
import type { Log } from '../log.js';
import { errorCode, errorMessage } from '../private-files.js';
import { MANIFEST_FORMAT, type ManifestFile, type ManifestOmission, type ManifestServer, type SnapshotManifest } from './snapshot-manifest.js';
import type { PublishedSnapshot, SnapshotBuild, SnapshotStore } from './snapshot-store.js';
import type { SnapshotFs } from './snapshot-fs.js';
import { nodeSnapshotFs } from './snapshot-fs.js';
import { readCatalog, readWhole, serverProblem, walkView, type SnapshotViewName, type WalkedFile, type WalkResult } from './view-walk.js';

export type { SnapshotViewName } from './view-walk.js';

/** Files fetched or linked at once. */
const DEFAULT_CONCURRENCY = 8;
/** A build during which the core reported a change is built again (incrementally), at most this often. */
const DEFAULT_MAX_ATTEMPTS = 3;
const LINK_FALLBACK_CODES = new Set(['EXDEV', 'EPERM', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP']);

/** What a snapshot run reports as it goes (the terminal's progress line). */
export interface SnapshotProgressSink {
  walked?(files: number, skills: number): void;
  fileDone?(bytes: number, how: 'linked' | 'fetched'): void;
}

export interface WriteSnapshotOptions {
  core: FilesystemCore;
  store: SnapshotStore;
  view: SnapshotViewName;
  includeDynamic: boolean;
  log: Log;
  /** Counts the core's change notifications; a change while a build runs builds it again. */
  changes?: () => number;
  concurrency?: number;
  maxAttempts?: number;
  progress?: SnapshotProgressSink;
  signal?: AbortSignal;
  /** How earlier snapshots' files are read back (default node:fs). */
  fs?: SnapshotFs;
  now?: () => number;
}

export interface SnapshotResult {
  /** published: DEST names a new snapshot; unchanged: the published one already holds exactly this. */
  outcome: 'published' | 'unchanged';
  id: string;
  manifest: SnapshotManifest;
  /** sha256 of the published manifest's exact bytes: what `verify --expect` takes. */
  manifestDigest: string;
  /** Servers whose part is incomplete (unreachable, a listing cut short, a file that could not be read). */
  failures: Array<{ label: string; reason: string }>;
  files: number;
  bytes: number;
  linked: number;
  fetched: number;
  skills: number;
}

/** A build's result before it is committed: no manifest on disk yet, so no digest of it. */
type BuiltSnapshot = Omit<SnapshotResult, 'manifestDigest'>;

/** Builds a snapshot of the core's view and publishes it, unless it equals the published one. */
export async function writeSnapshot(options: WriteSnapshotOptions): Promise<SnapshotResult> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  // The build of an attempt the servers changed under: kept until the next attempt has linked what still holds of it.
  let earlier: { build: SnapshotBuild; files: PreviousFiles } | undefined;
  try {
    for (let attempt = 1; ; attempt++) {
      const before = options.changes?.() ?? 0;
      const published = await options.store.published();
      const walk = await walkView(options.core, options.view, options.signal);
      // Nothing differs from what is published: no build, and no file of it read again.
      if (published?.manifest !== undefined && (await unchangedSince(published.manifest, walk, options))) {
        return unchangedResult(published.id, published.manifest, published.manifestDigest);
      }
      const build = await options.store.begin();
      let result: BuiltSnapshot;
      try {
        result = await buildInto(build, walk, published, earlier?.files, options);
      } catch (error) {
        await build.abort().catch(() => {});
        throw error;
      }
      await earlier?.build.abort();
      earlier = undefined;
      // A notification is not yet a change: a listing refreshed after its ttlMs notifies even when it
      // found the same skills, and a build of 10,000 skills outlasts many. Built again only when the
      // view, walked again, is no longer exactly what this build holds.
      const changed = (options.changes?.() ?? 0) !== before && !(await unchangedSince(result.manifest, await walkView(options.core, options.view, options.signal), options));
      if (changed && attempt < maxAttempts) {
        options.log(`snapshot: the servers changed while snapshot ${build.id} was built; building again`);
        earlier = { build, files: linkSource(build.dir, result.manifest) };
        continue;
      }
      if (published?.manifest !== undefined && sameContent(published.manifest, result.manifest)) {
        await build.abort();
        return { ...result, outcome: 'unchanged', id: published.id, manifest: published.manifest, manifestDigest: published.manifestDigest };
      }
      return { ...result, manifestDigest: await build.commit(result.manifest) };
    }
  } finally {
    await earlier?.build.abort().catch(() => {});
  }
}

/** `earlier`: the files of an attempt of this run the servers changed under, linked rather than fetched again (and counted as fetched). */
async function buildInto(build: SnapshotBuild, walk: WalkResult, published: PublishedSnapshot | undefined, earlier: PreviousFiles | undefined, options: WriteSnapshotOptions): Promise<BuiltSnapshot> {
  const { core, view } = options;
  const fs = options.fs ?? nodeSnapshotFs;
  options.progress?.walked?.(walk.files.length, walk.files.filter((file) => file.path.endsWith('/SKILL.md')).length);
  for (const dir of walk.directories) await build.ensureDirectory(dir);

  const previous = published?.manifest === undefined ? undefined : linkSource(published.dir, published.manifest);
  const written: ManifestFile[] = [];
  const failures = [...walk.failures];
  let linked = 0;
  let fetched = 0;
  // Skill by skill (path order, not the walk's level order): a supporting file is served only after
  // its skill's SKILL.md verified, and that SKILL.md is then still in the content cache. In level
  // order 10,000 SKILL.md came first and most were evicted before their files: one more read each.
  const fetchOrder = [...walk.files].sort((a, b) => compare(a.path, b.path));
  await mapLimited(fetchOrder, options.concurrency ?? DEFAULT_CONCURRENCY, async (file) => {
    options.signal?.throwIfAborted();
    // From the published snapshot it counts as linked; from this run's earlier attempt, as fetched.
    for (const [source, kind] of [[previous, 'linked'], [earlier, 'fetched']] as const) {
      const reused = await linkFromPrevious(build, fs, file, source);
      if (!reused) continue;
      if (kind === 'linked') linked += 1;
      else fetched += 1;
      written.push(reused);
      options.progress?.fileDone?.(reused.sizeBytes, kind);
      return;
    }
    let bytes: Buffer;
    let sha256: string;
    try {
      ({ bytes, sha256 } = await readVerified(core, file));
    } catch (error) {
      if (!(error instanceof SkillsMountError)) throw error;
      failures.push({ path: file.path, error });
      return;
    }
    // A local failure (a full disk) fails the build: the published snapshot stays.
    await build.writeFile(file.path, bytes);
    fetched += 1;
    written.push({ path: file.path, sizeBytes: bytes.length, sha256, verified: file.verified });
    options.progress?.fileDone?.(bytes.length, 'fetched');
  });

  // Read last: skills.json then shows what the reads found (a SKILL.md that failed is "rejected", with the reason).
  const catalog = await readCatalog(core);
  const skillDirs = new Set(catalog?.servers.flatMap((server) => server.skills.map((skill) => skill.path)) ?? []);
  const ownerOf = (relative: string): string => ownerIn(skillDirs, view === 'approved' ? relative.slice(APPROVED_DIR.length + 1) : relative) ?? relative;
  const omitted = new Map<string, string>();
  const serverFailures = new Map<string, string>();
  // A rejected skill first: the catalog's reason stays the same from run to run (a read of it now only says it is rejected).
  for (const server of catalog?.servers ?? []) {
    for (const skill of server.skills) {
      if (skill.state === 'rejected') omitted.set(skill.path, `rejected: ${skill.rejected ?? 'its SKILL.md failed verification'}`);
    }
  }
  for (const { path, error } of failures) {
    const owner = ownerOf(path);
    const verification = error instanceof IntegrityError;
    if (!omitted.has(owner)) omitted.set(owner, `${verification ? 'failed verification' : 'could not be read'}: ${errorMessage(error)}`);
    if (!verification) serverFailures.set(labelOf(path, view), `${path}: ${errorMessage(error)}`);
  }
  for (const server of catalog?.servers ?? []) {
    const problem = serverProblem(server);
    if (problem !== undefined && !serverFailures.has(server.label)) serverFailures.set(server.label, problem);
  }

  // A skill is shown whole or not at all: drop what was written of the skills left out.
  const kept: ManifestFile[] = [];
  for (const file of written) {
    if (omitted.has(ownerOf(file.path))) await build.removeFile(file.path);
    else kept.push(file);
  }
  const omittedPaths = new Set([...omitted.keys()].map((owner) => (view === 'approved' ? `${APPROVED_DIR}/${owner}` : owner)));
  const insideOmitted = (dir: string): boolean => {
    for (let at = dir; ; at = at.slice(0, at.lastIndexOf('/'))) {
      if (omittedPaths.has(at)) return true;
      if (!at.includes('/')) return false;
    }
  };
  for (const dir of [...build.directoryPaths()].reverse()) {
    if (omittedPaths.size > 0 && insideOmitted(dir)) await build.removeDirectoryIfEmpty(dir);
  }

  // A server that showed nothing this time keeps its part of the previous snapshot rather than losing it.
  const carried = new Set<string>();
  for (const label of serverFailures.keys()) {
    const prefix = view === 'approved' ? `${APPROVED_DIR}/${label}/` : `${label}/`;
    if (previous === undefined || kept.some((file) => file.path.startsWith(prefix))) continue;
    const files = published?.manifest?.files.filter((file) => file.path.startsWith(prefix)) ?? [];
    if (files.length === 0) continue;
    for (const dir of published!.manifest!.directories.filter((dir) => dir.startsWith(prefix))) await build.ensureDirectory(dir);
    for (const file of files) {
      const reused = await linkFromPrevious(build, fs, { path: file.path, corePath: '', sizeBytes: file.sizeBytes, digest: file.sha256, verified: file.verified }, previous, true);
      if (reused) kept.push({ ...reused, verified: file.verified });
    }
    carried.add(label);
    options.log(`snapshot: [${label}] kept its part of snapshot ${published!.id} (${files.length} files): ${serverFailures.get(label)!}`);
  }

  for (const document of walk.documents) {
    const bytes = await readWhole(core, `/${document}`);
    await build.writeFile(document, bytes);
    kept.push({ path: document, sizeBytes: bytes.length, sha256: sha256Digest(bytes), verified: false });
  }
  kept.sort((a, b) => compare(a.path, b.path));

  const servers: ManifestServer[] = (catalog?.servers ?? []).map((server) => ({
    label: server.label,
    state: server.state,
    ...(serverFailures.has(server.label) ? { failed: serverFailures.get(server.label)! } : {}),
    ...(carried.has(server.label) ? { keptFromPrevious: true } : {}),
  }));
  const omissions: ManifestOmission[] = [...omitted.entries()].map(([owner, reason]) => ({ path: view === 'approved' ? `${APPROVED_DIR}/${owner}` : owner, reason })).sort((a, b) => compare(a.path, b.path));
  for (const omission of omissions) options.log(`snapshot: left out ${omission.path}: ${omission.reason}`);
  const manifest: SnapshotManifest = {
    format: MANIFEST_FORMAT,
    id: build.id,
    createdAt: new Date((options.now ?? Date.now)()).toISOString(),
    view,
    includeDynamic: options.includeDynamic,
    servers,
    omitted: omissions,
    directories: build.directoryPaths(),
    files: kept,
  };
  const skills = kept.filter((file) => file.path.endsWith('/SKILL.md')).length;
  return {
    outcome: 'published',
    id: build.id,
    manifest,
    failures: [...serverFailures.entries()].map(([label, reason]) => ({ label, reason })),
    files: kept.length,
    bytes: kept.reduce((sum, file) => sum + file.sizeBytes, 0),
    linked,
    fetched,
    skills,
  };
}

/** An earlier snapshot's file with the listed digest, hashed again now, linked in; undefined when none still holds those bytes. */
async function linkFromPrevious(build: SnapshotBuild, fs: SnapshotFs, file: WalkedFile, previous: PreviousFiles | undefined, samePath = false): Promise<ManifestFile | undefined> {
  if (previous === undefined || file.digest === undefined) return undefined;
  const candidates = samePath ? [{ path: file.path, sizeBytes: file.sizeBytes }] : (previous.byDigest.get(file.digest) ?? []);
  for (const candidate of candidates) {
    if (candidate.sizeBytes !== file.sizeBytes) continue;
    const source = `${previous.dir}/${candidate.path}`;
    let bytes: Buffer;
    try {
      bytes = await fs.readFile(source);
    } catch {
      continue;
    }
    // Only bytes that hash to the listed digest now are reused: someone may have changed the old file.
    if (bytes.length !== file.sizeBytes || sha256Digest(bytes) !== file.digest) continue;
    try {
      await build.linkFile(file.path, source);
    } catch (error) {
      if (!LINK_FALLBACK_CODES.has(errorCode(error) ?? '')) throw error;
      await build.writeFile(file.path, bytes);
    }
    return { path: file.path, sizeBytes: bytes.length, sha256: file.digest, verified: true };
  }
  return undefined;
}

/**
 * The file's bytes through open/read/release, as a reader of the mount gets them, and their sha256
 * (hashed once: the manifest records it), checked against the listed digest once more.
 */
async function readVerified(core: FilesystemCore, file: WalkedFile): Promise<{ bytes: Buffer; sha256: string }> {
  const bytes = await readWhole(core, file.corePath);
  const sha256 = sha256Digest(bytes);
  if (file.digest !== undefined && sha256 !== file.digest) {
    throw new IntegrityError(`${file.path}: the bytes served hash to ${sha256}, the listing says ${file.digest}`);
  }
  return { bytes, sha256 };
}

interface PreviousFiles {
  dir: string;
  byDigest: Map<string, ManifestFile[]>;
}

/** The verified files of a snapshot (or of a build), by digest: what a new build may link. */
function linkSource(dir: string, manifest: SnapshotManifest): PreviousFiles {
  const byDigest = new Map<string, ManifestFile[]>();
  for (const file of manifest.files) {
    if (!file.verified) continue;
    const same = byDigest.get(file.sha256);
    if (same) same.push(file);
    else byDigest.set(file.sha256, [file]);
  }
  return { dir, byDigest };
}

/** The deepest skill directory holding `relative`, if any. */
function ownerIn(skillDirs: ReadonlySet<string>, relative: string): string | undefined {
  for (let end = relative.lastIndexOf('/'); end > 0; end = relative.lastIndexOf('/', end - 1)) {
    const dir = relative.slice(0, end);
    if (skillDirs.has(dir)) return dir;
  }
  return skillDirs.has(relative) ? relative : undefined;
}

function labelOf(relative: string, view: SnapshotViewName): string {
  const segments = relative.split('/');
  return (view === 'approved' ? segments[1] : segments[0]) ?? relative;
}

/**
 * Whether the view, as walked, is exactly what `manifest` holds: every file listed with the
 * digest recorded, the same directories, the generated documents with the same bytes, every
 * server whole then and now. Reads no file of the snapshot and fetches nothing.
 */
async function unchangedSince(manifest: SnapshotManifest, walk: WalkResult, options: WriteSnapshotOptions): Promise<boolean> {
  if (manifest.view !== options.view || manifest.includeDynamic !== options.includeDynamic) return false;
  if (manifest.omitted.length > 0 || manifest.servers.some((server) => server.failed !== undefined) || walk.failures.length > 0) return false;
  if ([...walk.directories].sort(compare).join('\0') !== manifest.directories.join('\0')) return false;
  const recorded = new Map(manifest.files.map((file) => [file.path, file]));
  if (recorded.size !== walk.files.length + walk.documents.length) return false;
  for (const file of walk.files) {
    const known = recorded.get(file.path);
    if (file.digest === undefined || known === undefined || !known.verified || known.sha256 !== file.digest || known.sizeBytes !== file.sizeBytes) return false;
  }
  const catalog = await readCatalog(options.core);
  if (catalog === undefined) return false;
  const states = catalog.servers.map((server) => ({ label: server.label, state: server.state }));
  if (JSON.stringify(states) !== JSON.stringify(manifest.servers) || catalog.servers.some((server) => serverProblem(server) !== undefined)) return false;
  for (const document of walk.documents) {
    const bytes = await readWhole(options.core, `/${document}`);
    if (recorded.get(document)?.sha256 !== sha256Digest(bytes)) return false;
  }
  return true;
}

function unchangedResult(id: string, manifest: SnapshotManifest, manifestDigest: string): SnapshotResult {
  const bytes = manifest.files.reduce((sum, file) => sum + file.sizeBytes, 0);
  const skills = manifest.files.filter((file) => file.path.endsWith('/SKILL.md')).length;
  return { outcome: 'unchanged', id, manifest, manifestDigest, failures: [], files: manifest.files.length, bytes, linked: 0, fetched: 0, skills };
}

/** Same files, directories, servers and omissions (id and time aside). */
function sameContent(a: SnapshotManifest, b: SnapshotManifest): boolean {
  const content = (m: SnapshotManifest) => JSON.stringify([m.view, m.includeDynamic, m.servers, m.omitted, m.directories, m.files.map((f) => [f.path, f.sizeBytes, f.sha256, f.verified])]);
  return content(a) === content(b);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
