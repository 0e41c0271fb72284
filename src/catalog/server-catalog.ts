// One server's skill namespace as the filesystem sees it: stat, readdir and open over the parts
// that discover, resolve, read directories and fetch verified content. Wires them; decides little.
// Paths are relative to the server's label directory ("" is it).
import { IntegrityError, IsADirectoryError, NotADirectoryError } from '../errors.js';
import type { SkillSource } from '../mcp/skill-source.js';
import type { CatalogOptions } from './catalog-options.js';
import { CatalogReport, type CatalogHealth, type CatalogSummary, type OfflineState } from './catalog-report.js';
import { CatalogState } from './catalog-state.js';
import { ContentFetcher, type LocalCopy } from './content-fetcher.js';
import { ContentStore } from './content-store.js';
import { DirectoryReads } from './directory-reads.js';
import { Discovery } from './discovery.js';
import { HeldEntries } from './held-entries.js';
import { childNames, type ChildNames, type NamespaceNode } from './namespace.js';
import { PathObservations } from './path-observations.js';
import { PathResolver } from './path-resolver.js';
import { ServerLog } from './server-log.js';
import { ChildAncestries } from './skill-ancestry.js';
import { SkillByteBudget } from './skill-byte-budget.js';
import { SkillEntries } from './skill-entries.js';
import { skillDirectory, type SkillRecord } from './skill-record.js';
import { segmentsToUri, splitPath } from './uri-path.js';
import { Subscriptions } from './subscriptions.js';
import { verifyContent, type VerifiedContent } from './verified-content.js';

export { DEFAULT_CATALOG_TIMINGS, type CatalogOptions, type VerificationFailureReason } from './catalog-options.js';
export type { CatalogHealth, CatalogSummary, OfflineState, SkillSummary } from './catalog-report.js';
export { LISTING_TTL_RANGE_MS, RELIST_BACKOFF_MAX_MS, RELIST_JITTER } from './discovery.js';

export interface CatalogNode {
  kind: 'file' | 'directory';
  uri: string;
  sizeBytes: number;
  /** Content digest when known (listing or fetched bytes). */
  digest: string | undefined;
  /** True when a listing digest vouches for the file's bytes. */
  verified: boolean;
}

/** What the catalog holds of a directory's children, asking nothing (heldChildren). */
export interface HeldCatalogChildren {
  complete: boolean;
  children: Array<{ name: string; stat: CatalogNode | undefined; copy: LocalCopy | undefined }>;
  /** Some child has a stored copy that may be opened without the catalog once its skill's SKILL.md verified here. */
  copiesPending: boolean;
}

export class ServerCatalog {
  readonly label: string;
  private readonly state: CatalogState;
  private readonly store: ContentStore;
  private readonly held: HeldEntries;
  private readonly discovery: Discovery;
  private readonly directories: DirectoryReads;
  private readonly resolver: PathResolver;
  private readonly fetcher: ContentFetcher;
  private readonly report: CatalogReport;
  private readonly entries: SkillEntries;
  private readonly source: SkillSource;
  private readonly now: () => number;
  /** Since when the server has been unreachable while its skills are shown. */
  private offlineSinceMs: number | undefined;
  private readonly durable: CatalogOptions['durable'];

  constructor(source: SkillSource, options: CatalogOptions) {
    this.label = source.label;
    const now = options.now ?? Date.now;
    this.source = source;
    this.now = now;
    this.durable = options.durable;
    const state = new CatalogState(source.label);
    const log = new ServerLog(source.label, options.log);
    const observations = new PathObservations();
    this.state = state;
    this.store = new ContentStore(source.label, options.cache, { unverifiedTtlMs: options.unverifiedTtlMs, now });
    this.held = new HeldEntries(state, log, now);
    this.discovery = new Discovery(
      source,
      state,
      this.held,
      observations,
      this.store,
      log,
      { hideDynamic: options.hideDynamic, listingTtlMs: options.listingTtlMs, now, random: options.random ?? Math.random, retained: (listed) => this.entries.retained(listed) },
      options.durable,
    );
    const entries = new SkillEntries(source, state, this.held, observations, log, () => this.discovery.refresh(), {
      hideDynamic: options.hideDynamic,
      negativeTtlMs: options.negativeTtlMs,
      now,
    });
    this.entries = entries;
    this.directories = new DirectoryReads(source, state, observations, entries, log, { directoryTtlMs: options.directoryTtlMs, now });
    const subscriptions = new Subscriptions(source, log, options.maxSubscriptions);
    this.fetcher = new ContentFetcher(source, state, this.store, this.held, new SkillByteBudget(state, log), subscriptions, entries, log, options.durable, options.onVerificationFailure);
    this.resolver = new PathResolver(state, observations, entries, this.directories, this.fetcher, { negativeTtlMs: options.negativeTtlMs, now });
    this.report = new CatalogReport(source, state, this.held, this.discovery, log, () => this.offline());
    source.onEvent((event) => {
      switch (event.type) {
        case 'connected':
          this.offlineSinceMs = undefined;
          // A restarted server may speak another generation: decide again.
          state.forgetGeneration();
          this.directories.reconnected();
          void this.refresh();
          break;
        case 'list-changed':
          observations.forget();
          this.discovery.refreshSoon();
          break;
        case 'resource-updated':
          this.store.forgetVersion(event.uri);
          observations.forget();
          this.discovery.refreshSoon();
          break;
        case 'disconnected':
          this.offlineSinceMs ??= now();
          break;
      }
    });
  }

  /**
   * For a server that could not be reached at start: shows its last complete listing, kept in
   * the disk cache; files read before are served from there. True when there was one.
   */
  async restoreKeptListing(): Promise<boolean> {
    const restored = await this.discovery.restoreKept();
    if (restored) this.offlineSinceMs ??= this.now();
    return restored;
  }

  /** Set while skills of this server are shown although it cannot be reached now. */
  offline(): OfflineState | null {
    if (this.source.connection().status === 'connected') {
      this.offlineSinceMs = undefined;
      return null;
    }
    if (this.state.generation === undefined && this.state.records.size === 0) return null;
    this.offlineSinceMs ??= this.now();
    return { since: new Date(this.offlineSinceMs).toISOString(), listingSavedAt: this.discovery.keptListingSavedAt ?? null };
  }

  /** Calls `listener` whenever what this catalog shows may have changed (listing, entry, refusal, reachability). */
  onChange(listener: () => void): void {
    this.state.onChange(listener);
    this.source.onEvent((event) => {
      if (event.type === 'connected' || event.type === 'disconnected') listener();
    });
  }

  /** Discovers the server's skills (listing, else index, else none); never throws. */
  refresh(): Promise<void> {
    return this.discovery.refresh();
  }

  /** Stops re-listing and re-fetching entries on its own clock (the daemon stops); what is held stays readable. */
  close(): void {
    this.discovery.stop();
    this.entries.stop();
  }

  /** stat: what the path is, with its exact size (fetching and verifying content only when no listing says). */
  async lookup(path: string): Promise<CatalogNode> {
    const node = await this.nodeAt(path);
    const known = this.knownStat(node);
    if (known !== undefined) return known;
    const facts = (node as Extract<NamespaceNode, { kind: 'file' }>).facts;
    const content = await this.fetcher.contentFor(path, facts);
    return { kind: 'file', uri: facts.uri, sizeBytes: content.bytes.length, digest: content.digest, verified: content.verified };
  }

  /**
   * A directory's children as lookup gives them, from what is held (nothing asked, nothing
   * fetched); a child whose size is known only from its content comes without a stat. `complete`:
   * list would answer just these names now (no directory read is due). Undefined for no held
   * directory, or one of more than `maxChildren` names (checked before any other work).
   */
  heldChildren(path: string, maxChildren = Number.POSITIVE_INFINITY): HeldCatalogChildren | undefined {
    const node = this.state.namespace.get(path);
    if (node?.kind !== 'directory' || countOf(node.children) > maxChildren) return undefined;
    let copiesPending = false;
    const siblings = new ChildAncestries(this.state, splitPath(path));
    const children = childNames(node.children).map((name) => {
      const child = this.state.namespace.get(path === '' ? name : `${path}/${name}`);
      const copy = child?.kind === 'file' ? this.fetcher.localCopy(child.facts, siblings) : undefined;
      if (copy === 'pending') copiesPending = true;
      return { name, stat: child === undefined ? undefined : this.knownStat(child), copy: copy === 'pending' ? undefined : copy };
    });
    return { complete: !this.directories.shouldRead(path), children, copiesPending };
  }

  /** What lookup answers for `node` without fetching content; undefined when only its bytes can say its size. */
  private knownStat(node: NamespaceNode): CatalogNode | undefined {
    if (node.kind === 'directory') return { kind: 'directory', uri: node.uri, sizeBytes: 0, digest: undefined, verified: false };
    const facts = node.facts;
    const observed = facts.digest === undefined ? this.store.freshUnverified(facts.uri) : undefined;
    if (facts.sizeBytes !== undefined) {
      return { kind: 'file', uri: facts.uri, sizeBytes: facts.sizeBytes, digest: facts.digest ?? observed?.digest, verified: facts.digest !== undefined };
    }
    if (observed) return { kind: 'file', uri: facts.uri, sizeBytes: observed.sizeBytes, digest: observed.digest, verified: false };
    return undefined;
  }

  /** readdir: names of the directory's children. */
  async list(path: string): Promise<string[]> {
    const node = await this.nodeAt(path);
    if (node.kind === 'file') throw new NotADirectoryError(`${this.label}: ${path} is a file`, { server: this.label, uri: node.facts.uri });
    return this.directories.names(path, node);
  }

  /** open: the file's verified bytes, from the cache or one resources/read; `preferredDigest` names the version to keep serving if cached. */
  async read(path: string, preferredDigest?: string): Promise<VerifiedContent> {
    const node = await this.nodeAt(path);
    if (node.kind === 'directory') throw new IsADirectoryError(`${this.label}: ${path} is a directory`, { server: this.label, uri: node.uri });
    if (node.facts.conflict !== undefined) {
      throw new IntegrityError(`${this.label}: ${node.facts.uri}: ${node.facts.conflict}; no bytes can verify against both`, { server: this.label, uri: node.facts.uri });
    }
    await this.held.hold(node.facts, (skillMdPath, skillMdFacts) => this.fetcher.contentFor(skillMdPath, skillMdFacts));
    // The kernel sizes reads by the attributes it last saw; while that version is still
    // cached, serving it keeps size and bytes of one version together.
    const pinned = preferredDigest === undefined ? undefined : this.store.get(node.facts.uri, preferredDigest);
    return pinned ?? this.fetcher.contentFor(path, node.facts);
  }

  /**
   * A version of `uri` verified before, found by its digest alone: in memory, or in the disk cache
   * where it was stored unbound (every file but a SKILL.md). Never asks the server: for a view that
   * keeps a pinned version (a project's lock) after the server moved on.
   */
  async keptVersion(uri: string, digest: string, sizeBytes: number): Promise<VerifiedContent | undefined> {
    const inMemory = this.store.get(uri, digest);
    if (inMemory !== undefined) return inMemory;
    const bytes = await this.durable?.get(uri, digest, sizeBytes);
    return bytes === undefined ? undefined : verifyContent(this.label, { uri, bytes, mimeType: undefined }, { digest, sizeBytes });
  }

  /** The server's state in counts: cheap at any catalog size (no per-skill objects). */
  health(): CatalogHealth {
    return this.report.health();
  }

  /** The held entry of the skill whose SKILL.md is `skillUri`. */
  skillRecord(skillUri: string): SkillRecord | undefined {
    return this.state.records.get(skillUri);
  }

  /** The held entry of the skill whose directory under the label is `directory`, from what is known without asking. */
  skillAtDirectory(directory: string): SkillRecord | undefined {
    // The tree has the URI as the server spelled it; a declined skill is not in the tree, so its URI is spelled from the path.
    const node = this.state.namespace.get(`${directory}/SKILL.md`);
    const uri = node?.kind === 'file' ? node.facts.uri : segmentsToUri([...directory.split('/'), 'SKILL.md']);
    const record = this.state.records.get(uri);
    return record !== undefined && skillDirectory(record) === directory ? record : undefined;
  }

  /** Every held entry, declined ones included. */
  skillRecords(): Iterable<SkillRecord> {
    return this.state.records.values();
  }

  /** Changes with every change of skillRecords(): what was derived from them at another value is stale. */
  get skillRecordsVersion(): number {
    return this.state.recordsVersion;
  }

  /** When a refreshed entry last brought the skill another resources set or frontmatter (ms), if one did. */
  entryChangedAt(skillUri: string): number | undefined {
    return this.held.changedAtMs(skillUri);
  }

  /** Why the skill's SKILL.md failed verification against its entry (none of its files is served), if it did. */
  rejection(skillUri: string): string | undefined {
    return this.held.rejection(skillUri);
  }

  summary(): CatalogSummary {
    return this.report.summary();
  }

  /** The node at a path, known or asked of the server; every operation starts here. */
  private async nodeAt(path: string): Promise<NamespaceNode> {
    this.discovery.refreshIfStale();
    return this.state.namespace.get(path) ?? (await this.resolver.resolve(path));
  }
}

function countOf(names: ChildNames): number {
  return Array.isArray(names) ? names.length : names.size;
}
