// An in-memory SkillSource: a server's skills as plain data (files by URI, entries built
// from them or set by hand), with a request log and fault hooks, so catalog behaviour can be
// tested at unit speed. Two ways to fill it: by hand (addSkill, files, entries: any server,
// lying ones too) or as a tree of files served the way skills-serve serves one (serveTree).
// test/integration/skill-source-contract.test.ts holds the tree mode to the same contract as
// the real MCP-backed source.
import { sha256 } from './digest.mjs';
import { NotFoundError, NotSupportedError, UnavailableError } from '../../src/errors.js';
import { parseFrontmatter } from '../../src/format/frontmatter.js';
import type { CacheHint, ConnectionStatus, Listing, SkillSource, SourceEvent, SourceFeatures, UnverifiedContent } from '../../src/mcp/skill-source.js';
import { DIRECTORY_MIME_TYPE, INDEX_URI, type DirectoryChild, type IndexEntry, type SkillEntry } from '../../src/protocol/skills-wire.js';
import { mimeTypeForName } from '../../src/server/mime.js';
import { uriForPath } from '../../src/server/skill-uri.js';

export interface RecordedRequest {
  method: string;
  uri?: string;
}

export { sha256 };

/** A SKILL.md text with the given frontmatter lines. */
export function skillMarkdown(name: string, description = `Does ${name} things`, extra = ''): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n# ${name}\n`;
}

export class MemorySkillSource implements SkillSource {
  readonly requests: RecordedRequest[] = [];
  /** Served bytes by URI. */
  readonly files = new Map<string, Buffer>();
  /** Entries served by skills/list and skills/get, by SKILL.md URI; `listed: false` ones only by skills/get. */
  readonly entries = new Map<string, { entry: SkillEntry; listed: boolean }>();
  featureFlags: SourceFeatures = { extension: true, directoryRead: false, subscribe: false, listChanged: false, liveChannel: false };
  status: ConnectionStatus = { status: 'connected', protocolVersion: '2026-07-28' };
  hint: CacheHint = {};
  /**
   * The discovery generations served: skills/list + skills/get (else -32601, as an index-generation
   * server answers although it declares the extension) and skill://index.json.
   */
  generations = { listing: true, index: false };
  /** Throw this from the next requests of a method (until cleared). */
  readonly failures = new Map<string, Error>();
  /** URIs subscribe() was called for: the tree mode announces their changes. */
  readonly subscriptions = new Set<string>();
  private readonly listeners: Array<(event: SourceEvent) => void> = [];
  /** The tree mode's files by path under the served root (undefined: filled by hand). */
  private tree: Map<string, Buffer> | undefined;

  constructor(readonly label = 'mem') {}

  /**
   * Adds a skill: its files (paths under the skill directory) and an entry that lists them truthfully,
   * with the frontmatter of its SKILL.md (or `options.frontmatter`, or an invented one when it has none).
   */
  addSkill(path: string, files: Record<string, string | Buffer>, options: { listed?: boolean; frontmatter?: Record<string, unknown> } = {}): SkillEntry {
    const name = path.split('/').pop()!;
    const resources = Object.entries(files).map(([rel, content]) => {
      const bytes = Buffer.from(content);
      const uri = uriForPath(`${path}/${rel}`);
      this.files.set(uri, bytes);
      return { uri, digest: sha256(bytes), size: bytes.length };
    });
    const uri = uriForPath(`${path}/SKILL.md`);
    const skillMd = files['SKILL.md'];
    const entry: SkillEntry = {
      uri,
      frontmatter: options.frontmatter ?? (skillMd === undefined ? undefined : frontmatterOf(Buffer.from(skillMd))) ?? { name, description: `Does ${name} things` },
      resources: resources.sort((a, b) => (a.uri === uri ? -1 : b.uri === uri ? 1 : a.uri.localeCompare(b.uri))),
    };
    this.entries.set(uri, { entry, listed: options.listed ?? true });
    return entry;
  }

  /**
   * Serves `tree` (paths under the served root) as skills-serve serves a directory: every
   * directory below the root holding a SKILL.md with frontmatter is a skill, listed with that
   * frontmatter and every file below it (nested skills' too); files outside skills are not
   * served. Unlike skills-serve, skill rules (name matches directory, lengths) are not checked.
   * Replaces whatever was added by hand.
   */
  serveTree(tree: ReadonlyMap<string, string | Uint8Array> | Record<string, string | Uint8Array>): void {
    const entries = tree instanceof Map ? [...tree] : Object.entries(tree);
    this.tree = new Map(entries.map(([path, content]) => [path, Buffer.from(content)]));
    this.rebuild(false);
  }

  /** Tree mode: creates or replaces a file, and announces the change as skills-serve would. */
  writeTreeFile(path: string, content: string | Uint8Array): void {
    this.requireTree().set(path, Buffer.from(content));
    this.rebuild();
  }

  /** Tree mode: removes a file, and announces the change as skills-serve would. */
  removeTreeFile(path: string): void {
    this.requireTree().delete(path);
    this.rebuild();
  }

  /** Changes a file's bytes; with `updateEntry`, the entry too (as an honest server would). */
  changeFile(uri: string, content: string | Buffer, updateEntry = true): void {
    const bytes = Buffer.from(content);
    this.files.set(uri, bytes);
    if (!updateEntry) return;
    for (const { entry } of this.entries.values()) {
      if (!Array.isArray(entry.resources)) continue;
      for (const file of entry.resources) {
        if (file.uri !== uri) continue;
        file.digest = sha256(bytes);
        file.size = bytes.length;
      }
    }
  }

  emit(event: SourceEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  count(method: string, uri?: string): number {
    return this.requests.filter((request) => request.method === method && (uri === undefined || request.uri === uri)).length;
  }

  features(): SourceFeatures {
    return this.featureFlags;
  }

  connection(): ConnectionStatus {
    return this.status;
  }

  onEvent(listener: (event: SourceEvent) => void): void {
    this.listeners.push(listener);
  }

  async listSkills(_onProgress?: (soFar: Listing<SkillEntry>) => void): Promise<Listing<SkillEntry> & CacheHint> {
    // As the MCP source: never sent to a server that did not declare the extension.
    if (!this.featureFlags.extension) throw new NotSupportedError('no extension', { server: this.label, method: 'skills/list' });
    this.record('skills/list');
    if (!this.generations.listing) throw new NotSupportedError('method not supported by the server', { server: this.label, method: 'skills/list' });
    const items = [...this.entries.values()].filter((item) => item.listed).map((item) => structuredClone(item.entry));
    return { items, problems: [], complete: true, ...this.hint };
  }

  async getSkill(uri: string): Promise<{ entry: SkillEntry } & CacheHint> {
    if (!this.featureFlags.extension) throw new NotSupportedError('no extension', { server: this.label, method: 'skills/get', uri });
    this.record('skills/get', uri);
    if (!this.generations.listing) throw new NotSupportedError('method not supported by the server', { server: this.label, method: 'skills/get', uri });
    const found = this.entries.get(uri);
    if (!found) throw new NotFoundError('not a skill', { server: this.label, method: 'skills/get', uri });
    return { entry: structuredClone(found.entry), ...this.hint };
  }

  async readIndex(): Promise<Listing<IndexEntry> & { content: UnverifiedContent }> {
    this.record('resources/read', INDEX_URI);
    if (!this.generations.index) throw new NotFoundError('no index', { server: this.label, method: 'resources/read', uri: INDEX_URI });
    const { items, problems } = this.indexItems();
    return { items, problems, complete: true, content: { uri: INDEX_URI, bytes: Buffer.from(indexText(items)), mimeType: 'application/json' } };
  }

  async readResource(uri: string): Promise<UnverifiedContent> {
    this.record('resources/read', uri);
    if (uri === INDEX_URI && this.generations.index) return { uri, bytes: Buffer.from(indexText(this.indexItems().items)), mimeType: 'application/json' };
    const bytes = this.files.get(uri);
    if (!bytes) throw new NotFoundError('no such resource', { server: this.label, method: 'resources/read', uri });
    return { uri, bytes: Buffer.from(bytes), mimeType: undefined };
  }

  /**
   * The children of `uri` among the served files, sorted by URI (`skill://` lists the top level).
   * As skills-serve: -32601 without directoryRead, -32602 for a URI nothing is served under.
   */
  async readDirectory(uri: string): Promise<Listing<DirectoryChild>> {
    const method = 'resources/directory/read';
    this.record(method, uri);
    if (!this.featureFlags.directoryRead) throw new NotSupportedError('method not supported by the server', { server: this.label, method, uri });
    const prefix = uri === 'skill://' ? uri : `${uri}/`;
    const children = new Map<string, DirectoryChild>();
    for (const [fileUri, bytes] of this.files) {
      if (!fileUri.startsWith(prefix)) continue;
      const [segment, ...deeper] = fileUri.slice(prefix.length).split('/');
      const name = decodeSegment(segment!);
      children.set(
        segment!,
        deeper.length ? { uri: `${prefix}${segment}`, name, mimeType: DIRECTORY_MIME_TYPE } : { uri: fileUri, name, mimeType: mimeTypeForName(name), size: bytes.length },
      );
    }
    if (children.size === 0) throw new NotFoundError(`${uri} is not a directory resource`, { server: this.label, method, uri });
    return { items: [...children.values()].sort((a, b) => compare(a.uri, b.uri)), problems: [], complete: true };
  }

  async subscribe(uri: string): Promise<void> {
    this.record('resources/subscribe', uri);
    this.subscriptions.add(uri);
  }

  /** The index generation's entries: every listed skill, with the digest of its SKILL.md. */
  private indexItems(): { items: IndexEntry[]; problems: string[] } {
    const items: IndexEntry[] = [];
    const problems: string[] = [];
    for (const { entry, listed } of this.entries.values()) {
      if (!listed) continue;
      const bytes = this.files.get(entry.uri);
      const listedDigest = Array.isArray(entry.resources) ? entry.resources.find((file) => file.uri === entry.uri)?.digest : undefined;
      const digest = bytes ? sha256(bytes) : listedDigest;
      if (digest === undefined) problems.push(`${entry.uri}: no SKILL.md to take a digest of`);
      else items.push({ url: entry.uri, digest, frontmatter: structuredClone(entry.frontmatter) });
    }
    return { items: items.sort((a, b) => compare(a.url, b.url)), problems };
  }

  private requireTree(): Map<string, Buffer> {
    if (!this.tree) throw new Error('MemorySkillSource: writeTreeFile/removeTreeFile need serveTree first');
    return this.tree;
  }

  /** Tree mode: files and entries from the tree, then the events skills-serve sends for the difference. */
  private rebuild(announce = true): void {
    const tree = this.requireTree();
    const previousFiles = new Map(this.files);
    const previousIndex = this.generations.index ? indexText(this.indexItems().items) : '';
    const skills: Array<{ dir: string; frontmatter: Record<string, unknown> }> = [];
    for (const [path, bytes] of tree) {
      if (!path.endsWith('/SKILL.md')) continue;
      const frontmatter = frontmatterOf(bytes);
      if (frontmatter) skills.push({ dir: path.slice(0, -'/SKILL.md'.length), frontmatter });
    }
    this.files.clear();
    this.entries.clear();
    for (const [path, bytes] of tree) if (skills.some(({ dir }) => path.startsWith(`${dir}/`))) this.files.set(uriForPath(path), bytes);
    for (const { dir, frontmatter } of skills.sort((a, b) => compare(a.dir, b.dir))) {
      const below = [...tree.keys()].filter((path) => path.startsWith(`${dir}/`) && path !== `${dir}/SKILL.md`);
      const paths = [`${dir}/SKILL.md`, ...below.sort(serverOrder)];
      const resources = paths.map((path) => ({ uri: uriForPath(path), digest: sha256(tree.get(path)!), size: tree.get(path)!.length }));
      const uri = uriForPath(`${dir}/SKILL.md`);
      this.entries.set(uri, { entry: { uri, frontmatter, resources }, listed: true });
    }
    const changed = [...this.files].filter(([uri, bytes]) => !previousFiles.get(uri)?.equals(bytes)).map(([uri]) => uri);
    for (const uri of previousFiles.keys()) if (!this.files.has(uri)) changed.push(uri);
    if (this.generations.index && indexText(this.indexItems().items) !== previousIndex) changed.push(INDEX_URI);
    if (!announce || changed.length === 0 || !this.featureFlags.liveChannel) return;
    // Asynchronously, as notifications arrive: never inside the caller's write.
    const events: SourceEvent[] = [
      ...(this.featureFlags.listChanged ? [{ type: 'list-changed' } as const] : []),
      ...(this.featureFlags.subscribe ? changed.filter((uri) => this.subscriptions.has(uri)).map((uri) => ({ type: 'resource-updated', uri }) as const) : []),
    ];
    queueMicrotask(() => {
      for (const event of events) this.emit(event);
    });
  }

  private record(method: string, uri?: string): void {
    this.requests.push(uri === undefined ? { method } : { method, uri });
    const failure = this.failures.get(method);
    if (failure) throw failure;
    if (this.status.status !== 'connected') throw new UnavailableError('not connected', { server: this.label, method, uri });
  }
}

/** The frontmatter of a SKILL.md's bytes, or undefined when it has none that parses. */
function frontmatterOf(bytes: Buffer): Record<string, unknown> | undefined {
  try {
    return parseFrontmatter(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** skill://index.json as skills-serve writes it. */
function indexText(items: IndexEntry[]): string {
  return `${JSON.stringify({ skills: items }, null, 2)}\n`;
}

/** Code-unit order, as the server sorts URIs (not localeCompare). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** skills-serve's manifest order: depth first, a directory's files (by name) before its subdirectories. */
function serverOrder(a: string, b: string): number {
  const left = a.split('/');
  const right = b.split('/');
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    if (left[i] === right[i]) continue;
    const leftIsFile = i === left.length - 1;
    const rightIsFile = i === right.length - 1;
    if (leftIsFile !== rightIsFile) return leftIsFile ? -1 : 1;
    return compare(left[i]!, right[i]!);
  }
  return left.length - right.length;
}
