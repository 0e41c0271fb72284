// The view `skills-mount serve` re-serves, as a ServedTree for the reference server's
// SkillsService: the approved view (a person's approvals, or a project's lock; the policy already
// applied by the approvals source) or, with --all, every verified skill of the servers. Upstream
// skill://P of server LABEL is served as skill://LABEL/P, with the upstream digests and sizes (the
// bytes are the same). No rule of its own: which skills show is the view's answer, and every byte
// comes through the filesystem core (fetched when a client asks, verified, cached), checked again
// against the entry before it leaves. No MCP wiring here.
import { IntegrityError, NotFoundError, SkillsMountError } from '../errors.js';
import type { ApprovedView } from '../fs/approved-view.js';
import type { SkillsFilesystem } from '../fs/skills-filesystem.js';
import type { ServerCatalog } from '../catalog/server-catalog.js';
import { skillDirectory, type SkillRecord } from '../catalog/skill-record.js';
import { uriToSegments } from '../catalog/uri-path.js';
import { sha256Digest } from '../format/digest.js';
import { escapeForLog } from '../format/escape.js';
import { parseFrontmatter } from '../format/frontmatter.js';
import { APPROVED_DIR } from '../fs/mount-layout.js';
import type { Log } from '../log.js';
import { DIRECTORY_MIME_TYPE, type SkillEntry } from '../protocol/skills-wire.js';
import type { DirectoryChild, FileNode, ServedTree, SkillNode, TreeChange, TreeSnapshot } from '../server/served-tree.js';
import { mimeTypeForName } from '../server/mime.js';
import { isCanonicalUri, parseSkillUri, uriForPath } from '../server/skill-uri.js';
import type { ServerIdentity } from '../team/lockfile.js';

/** What is served: the approved view (approvals or a lock), or every verified skill (--all). */
export type ServedMode = 'approved' | 'all';

/** The `_meta` key of each served entry's origin (an intermediary's own prefix, as SEP-2640 asks). */
export const ORIGIN_META_KEY = 'io.github.skills-mount/origin';

export interface GatewayTreeOptions {
  core: SkillsFilesystem;
  catalogs: readonly ServerCatalog[];
  /** Each label's server as a lock records it (no secret): the entries' origin. */
  identities: ReadonlyMap<string, ServerIdentity>;
  mode: ServedMode;
  /** With --all: also serve skills whose server publishes no digests, marked as such. */
  includeDynamic: boolean;
  log: Log;
  /** How long a burst of changes settles before the view is read again (default 50 ms). */
  settleMs?: number;
}

/** Where a served skill comes from, as its entry's `_meta` says. */
export interface SkillOrigin {
  label: string;
  /** The upstream URI of its SKILL.md. */
  uri: string;
  server: ServerIdentity | undefined;
  dynamic: boolean;
}

/** A served file's upstream: the server's label and the URI it has there. */
export interface FileOrigin {
  label: string;
  uri: string;
}

interface ServedSkill {
  label: string;
  directory: string;
  upstreamUri: string;
  frontmatter: Record<string, unknown>;
  files: Array<{ path: string; uri: string; digest: string; sizeBytes: number }> | 'dynamic';
  /** The core path the label's files are read under: `/_approved/LABEL` or `/LABEL`. */
  corePrefix: string;
}

interface GatewaySnapshot extends TreeSnapshot {
  readonly origins: ReadonlyMap<SkillNode, SkillOrigin>;
  readonly fileOrigins: ReadonlyMap<string, FileOrigin>;
  /** Served directory URIs of "dynamic" skills, whose files are found when asked for. */
  readonly dynamicRoots: ReadonlyMap<string, { label: string; corePrefix: string; directory: string }>;
  readonly signature: string;
}

const EMPTY: GatewaySnapshot = {
  files: new Map(),
  skills: [],
  skillsByUri: new Map(),
  directories: new Map(),
  origins: new Map(),
  fileOrigins: new Map(),
  dynamicRoots: new Map(),
  signature: '',
};

/** The gateway's view, read again whenever the core reports a change. */
export class GatewayTree implements ServedTree {
  private current: GatewaySnapshot = EMPTY;
  private readonly listeners = new Set<(change: TreeChange) => void>();
  private readonly entries = new WeakMap<SkillNode, SkillEntry>();
  private readonly indexes = new WeakMap<TreeSnapshot, string>();
  /** Frontmatter of kept SKILL.md versions (a lock's, when the server moved on), by digest. */
  private readonly keptFrontmatter = new Map<string, Record<string, unknown>>();
  private readonly reported = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private building: Promise<void> | undefined;
  private again = false;
  private opened = false;
  private closed = false;

  private constructor(private readonly options: GatewayTreeOptions) {}

  /** Reads the view once and follows the core's changes from then on. */
  static async open(options: GatewayTreeOptions): Promise<GatewayTree> {
    const tree = new GatewayTree(options);
    options.core.onChange(() => tree.schedule());
    await tree.rebuild();
    return tree;
  }

  get snapshot(): GatewaySnapshot {
    return this.current;
  }

  onChange(listener: (change: TreeChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Where a served skill comes from (its label, upstream URI and server). */
  originOf(skill: SkillNode): SkillOrigin | undefined {
    return this.current.origins.get(skill);
  }

  entry(skill: SkillNode): Promise<SkillEntry> {
    let entry = this.entries.get(skill);
    if (entry === undefined) {
      const origin = this.current.origins.get(skill);
      const meta = origin && { [ORIGIN_META_KEY]: { label: origin.label, uri: origin.uri, ...(origin.server && { server: origin.server }), ...(origin.dynamic && { dynamic: true }) } };
      entry = {
        uri: skill.uri,
        frontmatter: skill.frontmatter,
        resources: origin?.dynamic ? 'dynamic' : skill.files.map((file) => ({ uri: file.uri, digest: file.version, size: file.size })),
        ...(meta && { _meta: meta }),
      };
      this.entries.set(skill, entry);
    }
    return Promise.resolve(entry);
  }

  lookup(uri: string): FileNode | undefined {
    const parsed = parseSkillUri(uri);
    if (!parsed.ok) return undefined;
    for (let cut = parsed.segments.length - 1; cut > 1; cut--) {
      const root = this.current.dynamicRoots.get(uriForPath(parsed.segments.slice(0, cut).join('/')));
      if (root === undefined) continue;
      const below = parsed.segments.slice(1).join('/');
      return { uri: parsed.canonical, rel: parsed.segments.join('/'), name: parsed.segments.at(-1)!, path: `${root.corePrefix}/${below}`, size: 0, version: DYNAMIC, mimeType: mimeTypeForName(parsed.segments.at(-1)!) };
    }
    return undefined;
  }

  /** The file's bytes through the core (fetched when not held, verified), checked against the served digest. */
  async read(file: FileNode): Promise<Buffer> {
    const { core, log } = this.options;
    const origin = this.current.fileOrigins.get(file.uri) ?? { label: file.rel.split('/')[0]!, uri: file.uri };
    let handle: number;
    try {
      handle = await core.open(file.path);
    } catch (error) {
      if (!(error instanceof NotFoundError)) {
        log(`[${origin.label}] ${escapeForLog(origin.uri)}: not served: ${escapeForLog((error as Error).message)}`);
        // A SKILL.md that failed verification rejects its skill, and the catalog reports no change for
        // that: the view is read again so the skill leaves skills/list (and clients are told).
        if (error instanceof IntegrityError) this.schedule();
      }
      throw error;
    }
    try {
      const bytes = core.read(handle, 0, core.fgetattr(handle).sizeBytes);
      // The core served verified bytes of the version it holds; a client gets only the version its entry names.
      if (file.version !== DYNAMIC && (bytes.length !== file.size || sha256Digest(bytes) !== file.version)) {
        const message = `the version held (${bytes.length} bytes) is not the one served (${file.size} bytes, ${file.version}); the listing is being read again`;
        log(`[${origin.label}] ${escapeForLog(origin.uri)}: not served: ${message}`);
        this.schedule();
        throw new IntegrityError(`${file.uri}: ${message}`);
      }
      return bytes;
    } finally {
      core.release(handle);
    }
  }

  indexText(snapshot: TreeSnapshot = this.current): string {
    let text = this.indexes.get(snapshot);
    if (text === undefined) {
      // The index generation carries a SKILL.md digest per skill: "dynamic" skills have none.
      const skills = snapshot.skills.filter((skill) => skill.skillMdDigest !== DYNAMIC).map((skill) => ({ url: skill.uri, digest: skill.skillMdDigest, frontmatter: skill.frontmatter }));
      text = `${JSON.stringify({ skills }, null, 2)}\n`;
      this.indexes.set(snapshot, text);
    }
    return text;
  }

  /** Reads the view again now (coalescing with a read under way). */
  rebuild(): Promise<void> {
    if (this.building) {
      this.again = true;
      return this.building;
    }
    this.building = (async () => {
      do {
        this.again = false;
        const next = await this.build();
        // The first view is served as read, even an empty one: its signature equals EMPTY's, and
        // were it not taken, the first change after it (the first approval) would tell nobody.
        const first = !this.opened;
        this.opened = true;
        if (this.closed || (!first && next.signature === this.current.signature)) continue;
        const previous = this.current;
        this.current = next;
        if (!first) for (const listener of this.listeners) listener({ previous, current: next });
      } while (this.again && !this.closed);
    })().finally(() => {
      this.building = undefined;
    });
    return this.building;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.listeners.clear();
  }

  private schedule(): void {
    if (this.closed || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.rebuild().catch((error: unknown) => this.options.log(`serve: reading the view failed: ${escapeForLog((error as Error).message)}`));
    }, this.options.settleMs ?? 50);
    this.timer.unref();
  }

  private async build(): Promise<GatewaySnapshot> {
    const { core, mode } = this.options;
    const view = core.approvedView;
    const served = mode === 'approved' ? (view ? await this.approvedSkills(view) : []) : this.allSkills();
    return this.snapshotOf(served);
  }

  /** The approved view's skills, each with the set its approval (or lock) names. */
  private async approvedSkills(view: ApprovedView): Promise<ServedSkill[]> {
    await view.refresh();
    const catalogs = new Map(this.options.catalogs.map((catalog) => [catalog.label, catalog]));
    const served: ServedSkill[] = [];
    for (const { label, skills } of view.skills()) {
      for (const skill of skills) {
        const approval = view.source.approval(label, skill.uri);
        if (approval === undefined) continue;
        const files = approval.resources.flatMap((resource) => {
          const segments = uriToSegments(resource.uri);
          return 'problem' in segments ? [] : [{ path: segments.join('/'), uri: resource.uri, digest: resource.digest, sizeBytes: resource.sizeBytes }];
        });
        const skillMd = files.find((file) => file.uri === approval.skillUri);
        if (skillMd === undefined) continue;
        const corePrefix = `/${APPROVED_DIR}/${label}`;
        const record = catalogs.get(label)?.skillRecord(approval.skillUri);
        const frontmatter = record?.skillMdDigest === skillMd.digest ? record.frontmatter : await this.frontmatterOf(label, `${corePrefix}/${skillMd.path}`, skillMd.digest, approval.skillUri);
        if (frontmatter === undefined) continue;
        served.push({ label, directory: skillMd.path.slice(0, -'/SKILL.md'.length), upstreamUri: approval.skillUri, frontmatter, files, corePrefix });
      }
    }
    return served;
  }

  /** Every skill the servers serve verified (--all): not declined, not rejected, with a manifest (or "dynamic" when asked). */
  private allSkills(): ServedSkill[] {
    const served: ServedSkill[] = [];
    for (const catalog of this.options.catalogs) {
      for (const record of catalog.skillRecords()) {
        const refusal = this.allRefusal(catalog, record);
        if (refusal !== undefined) {
          this.reportOnce(`[${catalog.label}] ${escapeForLog(record.uri)}: not served: ${refusal}`);
          continue;
        }
        const files = record.files === 'dynamic' ? 'dynamic' : (record.files as Exclude<SkillRecord['files'], 'dynamic' | 'unlisted'>).map((file) => ({ path: file.path, uri: file.uri, digest: file.digest, sizeBytes: file.sizeBytes }));
        served.push({ label: catalog.label, directory: skillDirectory(record), upstreamUri: record.uri, frontmatter: record.frontmatter, files, corePrefix: `/${catalog.label}` });
      }
    }
    return served;
  }

  private allRefusal(catalog: ServerCatalog, record: SkillRecord): string | undefined {
    if (record.declined !== undefined) return record.declined;
    const rejected = catalog.rejection(record.uri);
    if (rejected !== undefined) return `its SKILL.md failed verification: ${rejected}`;
    if (record.files === 'unlisted') return 'its server lists it in skill://index.json only, with no manifest to verify its files against';
    if (record.files === 'dynamic' && !this.options.includeDynamic) return 'its resources are "dynamic" (no digests to verify): --include-dynamic serves it, marked';
    return undefined;
  }

  /** A kept SKILL.md's frontmatter (a lock's version the server no longer serves), read through the core once per digest. */
  private async frontmatterOf(label: string, corePath: string, digest: string, upstreamUri: string): Promise<Record<string, unknown> | undefined> {
    const known = this.keptFrontmatter.get(digest);
    if (known !== undefined) return known;
    const { core } = this.options;
    try {
      const handle = await core.open(corePath);
      try {
        const bytes = core.read(handle, 0, core.fgetattr(handle).sizeBytes);
        if (sha256Digest(bytes) !== digest) throw new IntegrityError(`the SKILL.md held is not the locked version ${digest}`);
        const frontmatter = parseFrontmatter(bytes.toString('utf8'));
        this.keptFrontmatter.set(digest, frontmatter);
        return frontmatter;
      } finally {
        core.release(handle);
      }
    } catch (error) {
      if (!(error instanceof SkillsMountError)) throw error;
      this.reportOnce(`[${label}] ${escapeForLog(upstreamUri)}: not served: its locked SKILL.md cannot be read: ${escapeForLog(error.message)}`);
      return undefined;
    }
  }

  private snapshotOf(served: readonly ServedSkill[]): GatewaySnapshot {
    const files = new Map<string, FileNode>();
    const fileOrigins = new Map<string, FileOrigin>();
    const skills: SkillNode[] = [];
    const origins = new Map<SkillNode, SkillOrigin>();
    const dynamicRoots = new Map<string, { label: string; corePrefix: string; directory: string }>();
    for (const skill of served) {
      const rel = `${skill.label}/${skill.directory}`;
      const uri = uriForPath(`${rel}/SKILL.md`);
      if (!isCanonicalUri(uri)) {
        this.reportOnce(`[${skill.label}] ${escapeForLog(skill.upstreamUri)}: not served: its path has no canonical skill:// URI here (${escapeForLog(uri)})`);
        continue;
      }
      const listed = skill.files === 'dynamic' ? undefined : skill.files;
      const dynamic = listed === undefined;
      const nodes: FileNode[] = (listed ?? []).map((file) => {
        const name = file.path.slice(file.path.lastIndexOf('/') + 1);
        return { uri: uriForPath(`${skill.label}/${file.path}`), rel: `${skill.label}/${file.path}`, name, path: `${skill.corePrefix}/${file.path}`, size: file.sizeBytes, version: file.digest, mimeType: mimeTypeForName(name) };
      });
      // SKILL.md first, as every manifest this project serves.
      nodes.sort((a, b) => (a.uri === uri ? -1 : b.uri === uri ? 1 : compare(a.uri, b.uri)));
      for (const file of listed ?? []) fileOrigins.set(uriForPath(`${skill.label}/${file.path}`), { label: skill.label, uri: file.uri });
      const node: SkillNode = { uri, rel, frontmatter: skill.frontmatter, skillMdDigest: dynamic ? DYNAMIC : (nodes[0]?.version ?? DYNAMIC), files: nodes };
      for (const file of nodes) files.set(file.uri, file);
      if (dynamic) dynamicRoots.set(uriForPath(rel), { label: skill.label, corePrefix: skill.corePrefix, directory: skill.directory });
      skills.push(node);
      origins.set(node, { label: skill.label, uri: skill.upstreamUri, server: this.options.identities.get(skill.label), dynamic });
    }
    skills.sort((a, b) => compare(a.uri, b.uri));
    const signature = skills.map((skill) => `${skill.uri}\n${skill.files.map((file) => `${file.uri} ${file.version}`).join('\n')}${origins.get(skill)!.dynamic ? '\ndynamic' : ''}`).join('\n\n');
    return { files, skills, skillsByUri: new Map(skills.map((skill) => [skill.uri, skill])), directories: directoriesOf(skills), origins, fileOrigins, dynamicRoots, signature };
  }

  private reportOnce(line: string): void {
    if (this.reported.has(line)) return;
    this.reported.add(line);
    this.options.log(line);
  }
}

/** The version of a "dynamic" skill's files: no digest to check them against. */
const DYNAMIC = 'dynamic';

/**
 * Directory resources: each skill's directories as its manifest fills them, and the prefixes
 * leading to skills (`skill://`, `skill://docs`, `skill://docs/acme`), which list only the
 * subdirectories on the way.
 */
function directoriesOf(skills: readonly SkillNode[]): Map<string, DirectoryChild[]> {
  const children = new Map<string, Map<string, DirectoryChild>>();
  const childrenOf = (rel: string): Map<string, DirectoryChild> => {
    let map = children.get(rel);
    if (!map) children.set(rel, (map = new Map()));
    return map;
  };
  const addDirectories = (rel: string, upTo: number): void => {
    const segments = rel.split('/');
    for (let i = upTo; i < segments.length; i++) {
      const prefix = segments.slice(0, i).join('/');
      const name = segments[i]!;
      const child = prefix === '' ? name : `${prefix}/${name}`;
      childrenOf(prefix).set(name, { uri: uriForPath(child), name, mimeType: DIRECTORY_MIME_TYPE });
    }
    childrenOf(rel);
  };
  for (const skill of skills) {
    addDirectories(skill.rel, 0);
    const depth = skill.rel.split('/').length;
    for (const file of skill.files) {
      const parent = file.rel.slice(0, file.rel.lastIndexOf('/'));
      if (parent !== skill.rel) addDirectories(parent, depth);
      childrenOf(parent).set(file.name, { uri: file.uri, name: file.name, mimeType: file.mimeType, size: file.size });
    }
  }
  const directories = new Map<string, DirectoryChild[]>();
  for (const [rel, map] of children) directories.set(uriForPath(rel), [...map.values()].sort((a, b) => compare(a.uri, b.uri)));
  return directories;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
