// The served skill namespace: scans DIR, validates skills, and publishes an immutable
// snapshot (files, skills with complete manifests, directories). Caches digests per file
// version and rescans when the watcher reports a change. Knows nothing of MCP.
import { stat as statPath, realpath } from 'node:fs/promises';
import { DIRECTORY_MIME_TYPE, MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, type SkillEntry } from '../protocol/skills-wire.js';
import { ConfigError } from '../errors.js';
import { sha256Digest } from '../format/digest.js';
import { parseFrontmatter } from '../format/frontmatter.js';
import { frontmatterLengthProblem, frontmatterStructureProblem } from '../format/skill-rules.js';
import { checkConfinement } from './confined-open.js';
import { createLimiter } from '../concurrency.js';
import { decodeText, mimeTypeForName } from './mime.js';
import { readWithinRoot, versionKey } from './safe-read.js';
import { scanDirectory, type ScanResult, type ScannedFile } from './scan.js';
import { isCanonicalUri, uriForPath } from './skill-uri.js';
import { DirectoryWatcher } from './watch.js';
import type { Log } from '../log.js';
import type { DirectoryChild, FileNode, ServedTree, SkillNode, TreeChange, TreeSnapshot } from './served-tree.js';

export type { DirectoryChild, FileNode, SkillNode, TreeChange, TreeSnapshot } from './served-tree.js';

/** One line per event, without the `skills-serve:` prefix. */

export interface SkillTreeOptions {
  root: string;
  /** Serve skills that break only a length limit, with a warning (default: refuse them, as the rules say). */
  lenient?: boolean;
  /** Rescan on changes under root (default true). */
  watch?: boolean;
  debounceMs?: number;
  /** Rescan period when file watching is unavailable. */
  pollMs?: number;
  log?: Log;
}

interface SkillMdInfo {
  file: FileNode;
  digest: string;
  frontmatter?: Record<string, unknown>;
  problem?: string;
  lengthProblem?: string;
}

interface Described {
  digest: string;
  size: number;
}

const EMPTY: TreeSnapshot = { files: new Map(), skills: [], skillsByUri: new Map(), directories: new Map() };
const readLimit = createLimiter(32);

/** The skills under one directory, kept current by rescans. */
export class SkillTree implements ServedTree {
  readonly root: string;
  readonly realRoot: string;
  private current: TreeSnapshot = EMPTY;
  private readonly lenient: boolean;
  private readonly log: Log;
  private readonly listeners = new Set<(change: TreeChange) => void>();
  private digests = new Map<string, Promise<Described>>();
  private skillMds = new Map<string, Promise<SkillMdInfo>>();
  private readonly entries = new WeakMap<SkillNode, Promise<SkillEntry>>();
  private readonly indexes = new WeakMap<TreeSnapshot, string>();
  private reportedWarnings = new Set<string>();
  private scanning: Promise<void> | undefined;
  private scanAgain = false;
  private watcher: DirectoryWatcher | undefined;
  private watchedDirs: string[] = [];
  private closed = false;

  private constructor(root: string, realRoot: string, options: SkillTreeOptions) {
    this.root = root;
    this.realRoot = realRoot;
    this.lenient = options.lenient ?? false;
    this.log = options.log ?? (() => {});
  }

  /** Scans `root` once and, unless `watch: false`, keeps watching it. Throws ConfigError for a bad root. */
  static async open(options: SkillTreeOptions): Promise<SkillTree> {
    let realRoot: string;
    try {
      realRoot = await realpath(options.root);
      if (!(await statPath(realRoot)).isDirectory()) throw new ConfigError(`${options.root} is not a directory`);
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'does not exist' : code === 'ENOTDIR' ? 'is not a directory' : code === 'EACCES' ? 'permission denied' : (code ?? String(error));
      throw new ConfigError(`cannot serve ${options.root}: ${why}`);
    }
    await checkConfinement(realRoot);
    const tree = new SkillTree(options.root, realRoot, options);
    await tree.rescan();
    const { skills, files } = tree.current;
    tree.log(`serving ${skills.length} skills (${files.size} files) from ${options.root}`);
    if (options.watch ?? true) {
      tree.watcher = new DirectoryWatcher({
        onChange: () => void tree.rescan().catch((error: unknown) => tree.log(`rescan failed: ${(error as Error).message}`)),
        log: tree.log,
        debounceMs: options.debounceMs ?? 100,
        pollMs: options.pollMs ?? 2000,
      });
      tree.watcher.update(tree.watchedDirs);
    }
    return tree;
  }

  /** The current snapshot; replaced whole on change, never mutated. */
  get snapshot(): TreeSnapshot {
    return this.current;
  }

  /** Subscribes to snapshot changes; returns the unsubscribe function. */
  onChange(listener: (change: TreeChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Rescans now (coalescing with a scan in progress); resolves when the snapshot is current. */
  rescan(): Promise<void> {
    if (this.scanning) {
      this.scanAgain = true;
      return this.scanning;
    }
    this.scanning = (async () => {
      do {
        this.scanAgain = false;
        await this.scanOnce();
      } while (this.scanAgain && !this.closed);
    })().finally(() => {
      this.scanning = undefined;
    });
    return this.scanning;
  }

  /** Digest and size of a file's current version, computed once per version. */
  describe(file: FileNode): Promise<Described> {
    const cached = this.digests.get(file.version);
    if (cached) return cached;
    const pending = readLimit(() => readWithinRoot(file.path, this.realRoot)).then(({ bytes }) => ({
      digest: sha256Digest(bytes),
      size: bytes.length,
    }));
    this.digests.set(file.version, pending);
    pending.catch(() => this.digests.delete(file.version));
    return pending;
  }

  /** The skill's listing entry (uri, verbatim frontmatter, complete manifest), memoized per snapshot. */
  entry(skill: SkillNode): Promise<SkillEntry> {
    let pending = this.entries.get(skill);
    if (!pending) {
      pending = Promise.all(skill.files.map((file) => this.describe(file))).then((described) => ({
        uri: skill.uri,
        frontmatter: skill.frontmatter,
        resources: skill.files.map((file, i) => ({ uri: file.uri, digest: described[i]!.digest, size: described[i]!.size })),
      }));
      this.entries.set(skill, pending);
      pending.catch(() => this.entries.delete(skill));
    }
    return pending;
  }

  /** The exact bytes of a served file, read now. */
  async read(file: FileNode): Promise<Buffer> {
    return (await readLimit(() => readWithinRoot(file.path, this.realRoot))).bytes;
  }

  /** The index-generation catalog (`skill://index.json`) of a snapshot. */
  indexText(snapshot: TreeSnapshot = this.current): string {
    let text = this.indexes.get(snapshot);
    if (text === undefined) {
      const skills = snapshot.skills.map((skill) => ({ url: skill.uri, digest: skill.skillMdDigest, frontmatter: skill.frontmatter }));
      text = `${JSON.stringify({ skills }, null, 2)}\n`;
      this.indexes.set(snapshot, text);
    }
    return text;
  }

  /** Stops watching; the last snapshot stays readable. */
  close(): void {
    this.closed = true;
    this.watcher?.close();
    this.listeners.clear();
  }

  private async scanOnce(): Promise<void> {
    const scan = await scanDirectory(this.realRoot);
    if (this.closed) return;
    const next = await this.build(scan);
    this.watchedDirs = [...scan.dirs.values()].map((dir) => dir.path);
    this.watcher?.update(this.watchedDirs);
    const previous = this.current;
    if (previous !== EMPTY && sameSnapshot(previous, next)) return;
    this.current = next;
    this.pruneCaches(next, scan);
    if (previous === EMPTY) return;
    this.log(`rescanned: serving ${next.skills.length} skills (${next.files.size} files)`);
    for (const listener of this.listeners) listener({ previous, current: next });
  }

  private async build(scan: ScanResult): Promise<TreeSnapshot> {
    const nodes = new Map<string, FileNode>();
    for (const dir of scan.dirs.values()) for (const file of dir.files) nodes.set(file.rel, fileNode(file));

    const warnings: string[] = [];
    const skillDirs = [...scan.dirs.values()].filter((dir) => dir.files.some((file) => file.name === 'SKILL.md'));
    const candidates = await Promise.all(
      skillDirs.map(async (dir) => {
        const skillMdRel = dir.rel === '' ? 'SKILL.md' : `${dir.rel}/SKILL.md`;
        if (dir.rel === '') {
          warnings.push(`SKILL.md: not served: a skill must be a subdirectory of the served directory`);
          return undefined;
        }
        const info = await this.parseSkillMd(nodes.get(skillMdRel)!, dir.rel.slice(dir.rel.lastIndexOf('/') + 1));
        if (info.problem) {
          warnings.push(`${skillMdRel}: not served: ${info.problem}`);
          return undefined;
        }
        if (info.lengthProblem) {
          if (!this.lenient) {
            warnings.push(`${skillMdRel}: not served: ${info.lengthProblem} (--lenient serves it)`);
            return undefined;
          }
          warnings.push(`${skillMdRel}: served although ${info.lengthProblem} (--lenient)`);
        }
        nodes.set(skillMdRel, info.file);
        return { dir, info };
      }),
    );

    const skills: SkillNode[] = [];
    for (const candidate of candidates) {
      if (!candidate) continue;
      const { dir, info } = candidate;
      const files = [info.file];
      collectFiles(scan, dir.rel, nodes, files, info.file.rel);
      // The SDK drops an entry whose URIs are not in canonical (WHATWG) form, e.g. a
      // top-level directory named `a:b`; refuse it here, where the warning can name it.
      const odd = files.find((file) => !isCanonicalUri(file.uri));
      if (odd) {
        warnings.push(`${info.file.rel}: not served: ${odd.rel} has no canonical skill:// URI (${odd.uri})`);
        continue;
      }
      const totalBytes = files.reduce((sum, file) => sum + file.size, 0);
      if (files.length > MAX_FILES_PER_SKILL || totalBytes > MAX_BYTES_PER_SKILL) {
        warnings.push(
          `${info.file.rel}: not served: ${files.length} files, ${totalBytes} bytes exceed the limits of ` +
            `${MAX_FILES_PER_SKILL} files and ${MAX_BYTES_PER_SKILL} bytes per skill`,
        );
        continue;
      }
      skills.push({ uri: info.file.uri, rel: dir.rel, frontmatter: info.frontmatter!, skillMdDigest: info.digest, files });
    }
    skills.sort((a, b) => compare(a.uri, b.uri));

    const skillDirRels = new Set(skillDirs.map((dir) => dir.rel));
    for (const warning of scan.warnings) {
      if (insideAny(warning.rel, skillDirRels)) warnings.push(`${warning.rel}: ${warning.message}`);
    }
    this.report(warnings);

    return {
      files: new Map(skills.flatMap((skill) => skill.files.map((file) => [file.uri, file] as const))),
      skills,
      skillsByUri: new Map(skills.map((skill) => [skill.uri, skill])),
      directories: directoriesOf(scan, skills, nodes),
    };
  }

  private parseSkillMd(file: FileNode, directoryName: string): Promise<SkillMdInfo> {
    let pending = this.skillMds.get(file.version);
    if (!pending) {
      pending = readLimit(() => readWithinRoot(file.path, this.realRoot)).then(
        ({ bytes, stat, realPath }): SkillMdInfo => {
          // Describe the version actually read, so digest, size and frontmatter agree.
          const read: FileNode = { ...file, size: bytes.length, version: versionKey(realPath, stat) };
          const digest = sha256Digest(bytes);
          this.digests.set(read.version, Promise.resolve({ digest, size: bytes.length }));
          const text = decodeText(bytes);
          if (text === undefined) return { file: read, digest, problem: 'SKILL.md is not UTF-8 text' };
          let frontmatter: Record<string, unknown>;
          try {
            frontmatter = parseFrontmatter(text);
          } catch (error) {
            return { file: read, digest, problem: (error as Error).message };
          }
          const problem = frontmatterStructureProblem(frontmatter, directoryName);
          const lengthProblem = frontmatterLengthProblem(frontmatter);
          return { file: read, digest, frontmatter, ...(problem && { problem }), ...(lengthProblem && { lengthProblem }) };
        },
        (error: unknown): SkillMdInfo => ({ file, digest: '', problem: `cannot read: ${(error as Error).message}` }),
      );
      this.skillMds.set(file.version, pending);
    }
    return pending;
  }

  private report(warnings: string[]): void {
    // A lasting problem is reported once, not at every rescan.
    const now = new Set(warnings);
    for (const warning of now) if (!this.reportedWarnings.has(warning)) this.log(`warning: ${warning}`);
    this.reportedWarnings = now;
  }

  private pruneCaches(snapshot: TreeSnapshot, scan: ScanResult): void {
    const served = new Set<string>();
    for (const file of snapshot.files.values()) served.add(file.version);
    this.digests = new Map([...this.digests].filter(([version]) => served.has(version)));
    // Parses of refused SKILL.md files are kept too, so an unchanged invalid skill is not re-read.
    const scanned = new Set<string>();
    for (const dir of scan.dirs.values()) for (const file of dir.files) if (file.name === 'SKILL.md') scanned.add(file.version);
    this.skillMds = new Map([...this.skillMds].filter(([version]) => scanned.has(version)));
  }
}

function fileNode(file: ScannedFile): FileNode {
  return { ...file, uri: uriForPath(file.rel), mimeType: mimeTypeForName(file.name) };
}

/** Appends every file below `rel` (depth first, by name) except `skip`. */
function collectFiles(scan: ScanResult, rel: string, nodes: Map<string, FileNode>, out: FileNode[], skip: string): void {
  const dir = scan.dirs.get(rel);
  if (!dir) return;
  for (const file of [...dir.files].sort((a, b) => compare(a.name, b.name))) {
    if (file.rel !== skip) out.push(nodes.get(file.rel)!);
  }
  for (const sub of [...dir.subdirs].sort(compare)) collectFiles(scan, `${rel}/${sub}`, nodes, out, skip);
}

/**
 * Directory resources: each served skill's root and every directory below it, listed whole;
 * plus the prefix directories leading to skills (`skill://`, `skill://acme`, `skill://acme/billing`),
 * which list only the subdirectories on the way to a skill, since nothing else there is served.
 */
function directoriesOf(scan: ScanResult, skills: readonly SkillNode[], nodes: Map<string, FileNode>): Map<string, DirectoryChild[]> {
  const children = new Map<string, Map<string, DirectoryChild>>();
  const childrenOf = (rel: string): Map<string, DirectoryChild> => {
    let map = children.get(rel);
    if (!map) children.set(rel, (map = new Map()));
    return map;
  };
  const full = new Set<string>();
  for (const skill of skills) {
    const stack = [skill.rel];
    while (stack.length > 0) {
      const rel = stack.pop()!;
      if (full.has(rel)) continue;
      full.add(rel);
      const dir = scan.dirs.get(rel);
      const map = childrenOf(rel);
      for (const sub of dir?.subdirs ?? []) {
        map.set(sub, { uri: uriForPath(`${rel}/${sub}`), name: sub, mimeType: DIRECTORY_MIME_TYPE });
        stack.push(`${rel}/${sub}`);
      }
      for (const file of dir?.files ?? []) {
        const node = nodes.get(file.rel)!;
        map.set(file.name, { uri: node.uri, name: node.name, mimeType: node.mimeType, size: node.size });
      }
    }
  }
  for (const skill of skills) {
    const segments = skill.rel.split('/');
    // i = 0 is `skill://` itself: a root listing, beyond the spec, so a mount can list its top level.
    for (let i = 0; i < segments.length; i++) {
      const prefix = segments.slice(0, i).join('/');
      if (full.has(prefix)) continue;
      const name = segments[i]!;
      const rel = prefix === '' ? name : `${prefix}/${name}`;
      childrenOf(prefix).set(name, { uri: uriForPath(rel), name, mimeType: DIRECTORY_MIME_TYPE });
    }
  }
  const directories = new Map<string, DirectoryChild[]>();
  for (const [rel, map] of children) {
    // Sorted by URI: the key of the directory read's stable cursors, as in the SDK.
    directories.set(uriForPath(rel), [...map.values()].sort((a, b) => compare(a.uri, b.uri)));
  }
  return directories;
}

function insideAny(rel: string, dirs: ReadonlySet<string>): boolean {
  for (let cut = rel.lastIndexOf('/'); cut > 0; cut = rel.lastIndexOf('/', cut - 1)) {
    if (dirs.has(rel.slice(0, cut))) return true;
  }
  return false;
}

function sameSnapshot(a: TreeSnapshot, b: TreeSnapshot): boolean {
  if (a.files.size !== b.files.size || a.skills.length !== b.skills.length || a.directories.size !== b.directories.size) return false;
  for (const [uri, file] of a.files) if (b.files.get(uri)?.version !== file.version) return false;
  for (let i = 0; i < a.skills.length; i++) if (a.skills[i]!.uri !== b.skills[i]!.uri) return false;
  for (const [uri, children] of a.directories) {
    const other = b.directories.get(uri);
    if (!other || other.length !== children.length) return false;
    for (let i = 0; i < children.length; i++) if (children[i]!.uri !== other[i]!.uri) return false;
  }
  return true;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
