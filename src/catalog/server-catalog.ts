// One server's skill namespace as the filesystem sees it: discovery (listing, index or
// none), lookups of paths nobody listed, directory reads, and verified content with
// single-flight fetches. Paths are relative to the server's label directory ("" is it).
import { LRUCache } from 'lru-cache';
import { escapeForLog } from '../format/escape.js';
import { IntegrityError, IsADirectoryError, LimitExceededError, NotADirectoryError, NotFoundError, NotSupportedError, SkillsMountError } from '../errors.js';
import type { Logger } from '../mcp/connection.js';
import { DIRECTORY_MIME_TYPE, INDEX_URI, MAX_BYTES_PER_SKILL } from '../protocol/skills-wire.js';
import type { CacheHint, ConnectionStatus, SkillSource, UnverifiedContent } from '../mcp/skill-source.js';
import { resourcesDigest } from './resources-digest.js';
import type { ContentCache } from './content-cache.js';
import { Namespace, childNames, type FileFacts, type NamespaceNode } from './namespace.js';
import { recordFromIndex, recordFromListing, skillDirectory, type Generation, type SkillRecord } from './skill-record.js';
import { nameProblem, segmentsToUri, splitPath, uriToSegments } from './uri-path.js';
import { verifyContent, type Expectation, type VerifiedContent } from './verified-content.js';

export interface CatalogOptions {
  log: Logger;
  cache: ContentCache;
  hideDynamic: boolean;
  /** After this, the next operation refreshes the listing in the background. */
  listingTtlMs: number;
  /** How long a path the server said does not exist stays ENOENT without asking again. */
  negativeTtlMs: number;
  /** How long a directory read stands for the directory's children. */
  directoryTtlMs: number;
  /** How long fetched bytes with no listing digest stand for the file's current version. */
  unverifiedTtlMs: number;
  /** At most this many resources are subscribed to for update notifications. */
  maxSubscriptions: number;
  now?: () => number;
}

export const DEFAULT_CATALOG_TIMINGS = {
  listingTtlMs: 60_000,
  negativeTtlMs: 5_000,
  directoryTtlMs: 10_000,
  unverifiedTtlMs: 10_000,
  maxSubscriptions: 10_000,
} as const;

export interface CatalogNode {
  kind: 'file' | 'directory';
  uri: string;
  sizeBytes: number;
  /** Content digest when known (listing or fetched bytes). */
  digest: string | undefined;
  /** True when a listing digest vouches for the file's bytes. */
  verified: boolean;
}

export interface SkillSummary {
  name: string;
  description: string;
  uri: string;
  /** Skill directory, relative to the label directory. */
  path: string;
  digest: string | undefined;
  /** verified: every file checked against a manifest; skill-md-verified: index generation; dynamic: nothing checkable. */
  integrity: 'verified' | 'skill-md-verified' | 'dynamic';
  declined: string | undefined;
  /** The SKILL.md failed verification against the held entry: no file of the skill is served. */
  rejected: string | undefined;
  /** When a refreshed entry brought a different resources set (ISO time). */
  changedAt: string | undefined;
  /** sha256 over the sorted uri+digest pairs of the held entry; null for dynamic and index skills. */
  resourcesDigest: string | null;
  /** A rule of the final text the entry breaks that does not stop it being mounted. */
  breaks: string | undefined;
}

export interface CatalogSummary {
  label: string;
  connection: ConnectionStatus;
  generation: Generation | undefined;
  listingComplete: boolean;
  /** The listing's freshness hint, and how long it is actually held (ms). */
  cache: { ttlMs: number | null; cacheScope: string | null; relistAfterMs: number };
  /** Change events can reach the mount now. */
  liveChannel: boolean;
  /** While a first listing is still paging: how many entries have arrived. */
  listingInProgress: number | null;
  skills: SkillSummary[];
  problems: string[];
}

export interface CatalogHealth {
  label: string;
  connection: ConnectionStatus;
  generation: Generation | undefined;
  listingComplete: boolean;
  listingInProgress: number | null;
  liveChannel: boolean;
  /** Skills served (not declined), declined, rejected (SKILL.md failed verification), changed since first held. */
  skills: number;
  declined: number;
  rejected: number;
  changed: number;
  problems: number;
}

const MAX_REMEMBERED_PROBLEMS = 50;
/** A first listing still paging is shown as it goes up to this many entries. */
const MAX_INTERIM_LISTING_ITEMS = 50_000;
/** Entries kept in each per-path or per-skill memo (misses, observed versions, refresh times, byte budgets). */
const MAX_REMEMBERED_PATHS = 10_000;
/** Change notifications re-list at most this often (a storm costs one listing a second, not one per notification). */
const NOTIFIED_RELIST_INTERVAL_MS = 1_000;
/** Without a ttlMs hint, a live channel stretches re-listing by this factor (events say when to re-list). */
const NOTIFIED_LISTING_TTL_FACTOR = 10;
/** A server's ttlMs is honoured within this range: 0 ("do not cache") would re-list on every operation. */
export const LISTING_TTL_RANGE_MS = { min: 5_000, max: 3_600_000 } as const;

/** What happened to a skill's held entry, beyond what its record says. */
interface HeldState {
  rejected?: string;
  changedAtMs?: number;
}

export class ServerCatalog {
  readonly label: string;
  private generation: Generation | undefined;
  private records = new Map<string, SkillRecord>();
  private namespace = new Namespace(segmentsToUri([]));
  private listingComplete = false;
  private listedAtMs = Number.NEGATIVE_INFINITY;
  private problems: string[] = [];
  private refreshing: Promise<void> | undefined;
  private refreshQueued = false;
  /** The server declared directoryRead, then answered -32601: use what is known instead, until it reconnects. */
  private directoryReadRefused = false;
  // Per-path and per-skill memory is bounded (least recently used dropped): a client walking
  // millions of made-up names, or a server with endless skills, costs a fixed amount.
  private readonly negative = new LRUCache<string, number>({ max: MAX_REMEMBERED_PATHS });
  private readonly directoryReads = new Map<string, { atMs: number; pending?: Promise<void> }>();
  private readonly unverifiedVersions = new LRUCache<string, { digest: string; sizeBytes: number; atMs: number }>({ max: MAX_REMEMBERED_PATHS });
  private readonly inflight = new Map<string, Promise<VerifiedContent>>();
  private readonly subscribed = new Set<string>();
  private readonly skillRefreshedAtMs = new LRUCache<string, number>({ max: MAX_REMEMBERED_PATHS });
  /** Bytes fetched per skill that no manifest budgets (index generation, dynamic): skill URI -> file URI -> bytes. */
  private readonly retrievedBytes = new LRUCache<string, Map<string, number>>({ max: MAX_REMEMBERED_PATHS });
  private listingHint: CacheHint = {};
  /** Entries received so far while a first listing is still paging; undefined otherwise. */
  private listingInProgress: number | undefined;
  private notifiedRefreshAtMs = Number.NEGATIVE_INFINITY;
  private notifiedRefreshTimer: NodeJS.Timeout | undefined;
  private stormLogged = false;
  /** Per skill URI; only skills that were rejected or changed have one. */
  private readonly held = new Map<string, HeldState>();
  /** Skill URIs whose entries were refused: nothing under them is loaded by path either. */
  private refusedSkills = new Set<string>();
  private readonly setDigests = new WeakMap<SkillRecord, string>();
  private readonly now: () => number;

  constructor(
    private readonly source: SkillSource,
    private readonly options: CatalogOptions,
  ) {
    this.label = source.label;
    this.now = options.now ?? Date.now;
    source.onEvent((event) => {
      switch (event.type) {
        case 'connected':
          // A restarted server may speak another generation: decide again.
          this.generation = undefined;
          this.directoryReadRefused = false;
          void this.refresh();
          break;
        case 'list-changed':
          this.forgetObservations();
          this.refreshSoon();
          break;
        case 'resource-updated':
          this.unverifiedVersions.delete(event.uri);
          this.forgetObservations();
          this.refreshSoon();
          break;
        case 'disconnected':
          break;
      }
    });
  }

  /** Discovers the server's skills (listing, else index, else none); never throws. */
  refresh(): Promise<void> {
    this.refreshing ??= this.discover().finally(() => {
      this.refreshing = undefined;
      if (this.refreshQueued) {
        this.refreshQueued = false;
        void this.refresh();
      }
    });
    return this.refreshing;
  }

  /**
   * A refresh for a change notification: a change announced while a listing is in flight
   * may be missing from it, so one more listing is queued; any number of notifications
   * (a storm) coalesce into at most one listing in flight plus one queued.
   */
  private refreshSoon(): void {
    if (this.refreshing) {
      this.refreshQueued = true;
      return;
    }
    // A storm of notifications re-lists at most once a NOTIFIED_RELIST_INTERVAL_MS, and is logged once.
    const sinceMs = this.now() - this.notifiedRefreshAtMs;
    if (sinceMs < NOTIFIED_RELIST_INTERVAL_MS) {
      if (this.notifiedRefreshTimer) return;
      if (!this.stormLogged) {
        this.stormLogged = true;
        this.options.log(`[${this.label}] change notifications faster than one a ${NOTIFIED_RELIST_INTERVAL_MS} ms: re-listing at most that often`);
      }
      this.notifiedRefreshTimer = setTimeout(() => {
        this.notifiedRefreshTimer = undefined;
        this.refreshSoon();
      }, NOTIFIED_RELIST_INTERVAL_MS - sinceMs);
      this.notifiedRefreshTimer.unref?.();
      return;
    }
    this.notifiedRefreshAtMs = this.now();
    void this.refresh();
  }

  /** stat: what the path is, with its exact size (fetching and verifying content only when no listing says). */
  async lookup(path: string): Promise<CatalogNode> {
    const node = await this.nodeAt(path);
    if (node.kind === 'directory') return { kind: 'directory', uri: node.uri, sizeBytes: 0, digest: undefined, verified: false };
    const facts = node.facts;
    const observed = facts.digest === undefined ? this.freshUnverified(facts.uri) : undefined;
    if (facts.sizeBytes !== undefined) {
      return { kind: 'file', uri: facts.uri, sizeBytes: facts.sizeBytes, digest: facts.digest ?? observed?.digest, verified: facts.digest !== undefined };
    }
    if (observed) return { kind: 'file', uri: facts.uri, sizeBytes: observed.sizeBytes, digest: observed.digest, verified: false };
    const content = await this.contentFor(path, facts);
    return { kind: 'file', uri: facts.uri, sizeBytes: content.bytes.length, digest: content.digest, verified: content.verified };
  }

  /** readdir: names of the directory's children. */
  async list(path: string): Promise<string[]> {
    let node = await this.nodeAt(path);
    if (node.kind === 'file') throw new NotADirectoryError(`${this.label}: ${path} is a file`, { server: this.label, uri: node.facts.uri });
    if (this.shouldReadDirectory(path)) {
      try {
        await this.readDirectory(path);
      } catch (error) {
        // What listings put in this directory is known without the server: a failed (or
        // refused: "not a directory resource" for a prefix directory) read shows that.
        // With nothing known, the failure is the answer, never an empty directory.
        if (!(error instanceof SkillsMountError) || node.kind !== 'directory' || childNames(node.children).length === 0) throw error;
        this.rememberOnce(`resources/directory/read ${node.uri} failed (${error.message}); showing the children listings named`);
      }
      node = this.namespace.get(path) ?? node;
    }
    return node.kind === 'directory' ? childNames(node.children) : [];
  }

  /** open: the file's verified bytes, from the cache or one resources/read; `preferredDigest` names the version to keep serving if cached. */
  async read(path: string, preferredDigest?: string): Promise<VerifiedContent> {
    const node = await this.nodeAt(path);
    if (node.kind === 'directory') throw new IsADirectoryError(`${this.label}: ${path} is a directory`, { server: this.label, uri: node.uri });
    if (node.facts.conflict !== undefined) {
      throw new IntegrityError(`${this.label}: ${node.facts.uri}: ${node.facts.conflict}; no bytes can verify against both`, { server: this.label, uri: node.facts.uri });
    }
    await this.holdEntry(node.facts);
    // The kernel sizes reads by the attributes it last saw; while that version is still
    // cached, serving it keeps size and bytes of one version together.
    const pinned = preferredDigest === undefined ? undefined : this.options.cache.get(this.label, node.facts.uri, preferredDigest);
    return pinned ?? this.contentFor(path, node.facts);
  }

  /** The node at a path, known or asked of the server; every operation starts here. */
  private async nodeAt(path: string): Promise<NamespaceNode> {
    this.refreshIfStale();
    return this.namespace.get(path) ?? (await this.resolve(path));
  }

  /** The server's state in counts: cheap at any catalog size (no per-skill objects). */
  health(): CatalogHealth {
    let skills = 0;
    let declined = 0;
    for (const record of this.records.values()) {
      if (record.declined) declined += 1;
      else skills += 1;
    }
    let rejected = 0;
    let changed = 0;
    for (const [uri, state] of this.held) {
      if (!this.records.has(uri)) continue;
      if (state.rejected !== undefined) rejected += 1;
      else if (state.changedAtMs !== undefined) changed += 1;
    }
    return {
      label: this.label,
      connection: this.source.connection(),
      generation: this.generation,
      listingComplete: this.listingComplete,
      listingInProgress: this.listingInProgress ?? null,
      liveChannel: this.source.features().liveChannel,
      skills,
      declined,
      rejected,
      changed,
      problems: this.problems.length,
    };
  }

  summary(): CatalogSummary {
    const skills: SkillSummary[] = [...this.records.values()].map((record) => ({
      name: record.name,
      description: record.description,
      uri: record.uri,
      path: skillDirectory(record),
      digest: record.skillMdDigest,
      integrity: record.files === 'dynamic' ? 'dynamic' : record.files === 'unlisted' ? 'skill-md-verified' : 'verified',
      declined: record.declined,
      rejected: this.held.get(record.uri)?.rejected,
      changedAt: isoTime(this.held.get(record.uri)?.changedAtMs),
      resourcesDigest: this.resourcesDigestOf(record),
      breaks: record.breaks,
    }));
    return {
      label: this.label,
      connection: this.source.connection(),
      generation: this.generation,
      listingComplete: this.listingComplete,
      cache: { ttlMs: this.listingHint.ttlMs ?? null, cacheScope: this.listingHint.cacheScope ?? null, relistAfterMs: this.relistAfterMs() },
      liveChannel: this.source.features().liveChannel,
      listingInProgress: this.listingInProgress ?? null,
      skills,
      problems: [...this.problems],
    };
  }

  // ---- discovery ----

  private async discover(): Promise<void> {
    const startedAt = this.now();
    try {
      if (this.generation !== 'index') {
        try {
          // A first listing that pages on for long fills the directory in as it goes;
          // one that replaces a complete listing does not (it would hide skills meanwhile).
          const listing = await this.source.listSkills((soFar) => {
            this.listingInProgress = soFar.items.length;
            if (this.generation === 'listing' && this.listingComplete) return;
            // Past this, an interim tree costs more than it shows: the count alone is reported.
            if (soFar.items.length > MAX_INTERIM_LISTING_ITEMS) return;
            this.install('listing', soFar.items.map((entry) => recordFromListing(entry, this.options)), soFar.problems, false, soFar.refused, true);
          }).finally(() => {
            this.listingInProgress = undefined;
          });
          this.listingHint = { ttlMs: listing.ttlMs, cacheScope: listing.cacheScope };
          this.install('listing', listing.items.map((entry) => recordFromListing(entry, this.options)), listing.problems, listing.complete, listing.refused);
          return;
        } catch (error) {
          // -32601: an index-generation server (or none at all).
          if (!(error instanceof NotSupportedError)) throw error;
        }
      }
      try {
        const index = await this.source.readIndex();
        this.listingHint = {};
        this.install('index', index.items.map(recordFromIndex), index.problems, index.complete);
        this.addIndexFile(index.content);
        return;
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
      }
      this.listingHint = {};
      this.install('none', [], [], true);
    } catch (error) {
      // A broken listing proves nothing: keep what we knew and try again later.
      this.listedAtMs = startedAt;
      this.remember(`discovery failed: ${(error as Error).message}`);
    }
  }

  private install(
    generation: Generation,
    results: Array<SkillRecord | { problem: string; uri?: string }>,
    problems: string[],
    complete: boolean,
    refusedUris: readonly string[] = [],
    quiet = false,
  ): void {
    const records = new Map<string, SkillRecord>();
    const allProblems = [...problems];
    const refused = new Set(refusedUris);
    // Shallow skills first, so a nested skill's own entry refines the files its encloser also lists.
    const valid = results.filter((result): result is SkillRecord => !('problem' in result));
    for (const result of results) {
      if (!('problem' in result)) continue;
      allProblems.push(result.problem);
      if (result.uri !== undefined) refused.add(result.uri);
    }
    valid.sort((a, b) => a.depth - b.depth);
    for (const record of valid) {
      if (records.has(record.uri)) {
        allProblems.push(`skill ${record.uri} listed twice; the first entry is used`);
        continue;
      }
      records.set(record.uri, record);
    }
    const namespace = layOut(records.values());
    allProblems.push(...namespace.problems);
    for (const record of records.values()) {
      if (record.declined) allProblems.push(`skill ${record.uri} declined: ${record.declined}`);
    }
    for (const record of records.values()) this.noteReplaced(this.records.get(record.uri), record);
    // A rejection stands until a refreshed entry verifies: a new listing is one, so the next
    // read of the skill loads its SKILL.md again (once per listing, however often it fails).
    for (const state of this.held.values()) delete state.rejected;
    this.generation = generation;
    this.records = records;
    this.refusedSkills = refused;
    this.namespace = namespace;
    this.listingComplete = complete;
    this.listedAtMs = this.now();
    this.negative.clear();
    this.directoryReads.clear();
    if (quiet) {
      // An interim install while the first listing pages on: the final one logs.
      this.problems = allProblems.slice(-MAX_REMEMBERED_PROBLEMS);
      return;
    }
    this.problems = [];
    for (const problem of allProblems) this.remember(problem);
    const declined = [...records.values()].filter((record) => record.declined).length;
    this.options.log(
      `[${this.label}] ${generation === 'none' ? 'no skill listing (skills reachable by path only)' : `${generation} generation: ${records.size - declined} skills`}` +
        `${declined ? `, ${declined} declined` : ''}${complete ? '' : ' (partial listing)'}${allProblems.length ? `, ${allProblems.length} problems` : ''}`,
    );
  }

  private addIndexFile(content: UnverifiedContent): void {
    const verified = verifyContent(this.label, content, {});
    this.options.cache.set(this.label, verified);
    this.unverifiedVersions.set(INDEX_URI, { digest: verified.digest, sizeBytes: verified.bytes.length, atMs: this.now() });
    this.namespace.addFile(['index.json'], { uri: INDEX_URI, sizeBytes: undefined, digest: undefined, frontmatter: undefined, skillUri: undefined });
  }

  private refreshIfStale(): void {
    if (this.now() - this.listedAtMs > this.relistAfterMs()) void this.refresh();
  }

  /**
   * How long a listing is held: the server's ttlMs (clamped), else the default. Without a
   * hint, a server whose change events can reach us now is re-listed on its word and the
   * default is only a safety net; a declared listChanged with no open channel counts for nothing.
   */
  private relistAfterMs(): number {
    const hinted = this.listingHint.ttlMs;
    if (hinted !== undefined) return Math.min(LISTING_TTL_RANGE_MS.max, Math.max(LISTING_TTL_RANGE_MS.min, hinted));
    const features = this.source.features();
    return this.options.listingTtlMs * (features.listChanged && features.liveChannel ? NOTIFIED_LISTING_TTL_FACTOR : 1);
  }

  private resourcesDigestOf(record: SkillRecord): string | null {
    if (!Array.isArray(record.files)) return null;
    let digest = this.setDigests.get(record);
    if (digest === undefined) {
      digest = resourcesDigest(record.files);
      this.setDigests.set(record, digest);
    }
    return digest;
  }

  /** Records what a new entry for a skill means for its held one: a different set is a changed skill. */
  private noteReplaced(previous: SkillRecord | undefined, next: SkillRecord): void {
    if (!previous || sameEntry(previous, next)) return;
    this.held.set(next.uri, { changedAtMs: this.now() });
    const before = Array.isArray(previous.files) ? resourcesDigest(previous.files) : String(previous.files);
    const after = Array.isArray(next.files) ? resourcesDigest(next.files) : String(next.files);
    this.options.log(`[${this.label}] skill ${escapeForLog(next.uri)} changed: resources ${before} -> ${after}; new opens use the new entry`);
  }

  /**
   * Every byte served belongs to a skill whose SKILL.md verified against the held entry: a
   * rejected skill serves nothing (no request is made), and a supporting file of a skill whose
   * SKILL.md was not read yet first loads that SKILL.md (one extra read per skill, not per file).
   */
  private async holdEntry(facts: FileFacts): Promise<void> {
    const skillUri = facts.skillUri;
    const record = skillUri === undefined ? undefined : this.records.get(skillUri);
    if (!record || record.files === 'unlisted') return;
    const rejected = this.held.get(record.uri)?.rejected;
    if (rejected !== undefined) {
      throw new IntegrityError(`skill ${record.uri} is rejected (${rejected}); nothing of it is served until its entry changes`, {
        server: this.label,
        method: 'read',
        uri: facts.uri,
      });
    }
    if (facts.uri === record.uri) return;
    const skillMd = this.namespace.get(record.path);
    if (skillMd?.kind === 'file') await this.contentFor(record.path, skillMd.facts);
  }

  /** A SKILL.md failed verification, after the one refresh: the whole skill is rejected. */
  private reject(skillUri: string, reason: string): void {
    const state = this.held.get(skillUri) ?? {};
    if (state.rejected !== undefined) return;
    state.rejected = reason;
    this.held.set(skillUri, state);
    this.remember(`skill ${skillUri} rejected: ${reason}`);
  }

  private forgetObservations(): void {
    this.negative.clear();
    this.directoryReads.clear();
  }

  /** Logs a problem the first time it occurs (a fallback that would otherwise log on every readdir). */
  private rememberOnce(problem: string): void {
    if (this.problems.includes(problem)) return;
    this.remember(problem);
  }

  private remember(problem: string): void {
    this.options.log(`[${this.label}] ${problem}`);
    this.problems.push(problem);
    if (this.problems.length > MAX_REMEMBERED_PROBLEMS) this.problems.shift();
  }

  // ---- lookups of paths nobody listed ----

  private async resolve(path: string): Promise<NamespaceNode> {
    const segments = splitPath(path);
    const notFound = () => new NotFoundError(`${this.label}: ${path}: no such file or directory`, { server: this.label });
    const expiresAtMs = this.negative.get(path);
    if (expiresAtMs !== undefined && expiresAtMs > this.now()) throw notFound();
    const name = segments[segments.length - 1];
    if (name === undefined || nameProblem(name)) throw notFound();
    const parentPath = segments.slice(0, -1).join('/');
    const parent = this.namespace.get(parentPath) ?? (await this.resolve(parentPath));
    if (parent.kind === 'file') throw new NotADirectoryError(`${this.label}: ${parentPath} is a file`, { server: this.label });

    const found = await this.askServer(segments, parentPath, parent.uri).catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
    if (found) return found;
    this.negative.set(path, this.now() + this.options.negativeTtlMs);
    throw notFound();
  }

  private async askServer(segments: string[], parentPath: string, parentUri: string) {
    const path = segments.join('/');
    const name = segments[segments.length - 1]!;
    const owner = this.manifestOwner(segments);
    if (owner) {
      // The manifest is authoritative for its skill: a file it lacks appears only after skills/get says so.
      const lastMs = this.skillRefreshedAtMs.get(owner.uri) ?? Number.NEGATIVE_INFINITY;
      if (this.now() - lastMs < this.options.negativeTtlMs) return undefined;
      this.skillRefreshedAtMs.set(owner.uri, this.now());
      await this.refreshSkill(owner.uri);
      return this.namespace.get(path);
    }
    if (this.isUnderDeclinedSkill(segments) || this.isUnderRefusedSkill(segments)) return undefined;
    if (this.shouldReadDirectory(parentPath)) {
      await this.readDirectory(parentPath);
      if (!this.directoryReadRefused) return this.namespace.get(path);
    }
    if (parentPath === '' && /^[a-z][a-z0-9+.-]*:$/.test(name)) {
      // A scheme directory exists for every scheme; what is inside is asked for separately.
      this.namespace.addDirectory(segments, `${name}//`);
      return this.namespace.get(path);
    }
    const uri = childUri(parentUri, name);
    if (name === 'SKILL.md' && this.generation === 'listing') {
      const registered = await this.registerSkill(uri);
      if (registered) return this.namespace.get(path);
    }
    try {
      const content = await this.fetchResource(uri);
      this.namespace.addFile(segments, { uri, sizeBytes: undefined, digest: undefined, frontmatter: undefined, skillUri: undefined });
      this.keep(verifyContent(this.label, content, {}));
      return this.namespace.get(path);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
    // Not a file. Inside a skill whose files nobody enumerates (index generation, dynamic
    // skills) on a server without directory reads, nothing can tell a directory from a
    // typo, and relative references like references/GUIDE.md must resolve: presume a directory.
    if (this.insideUnenumeratedSkill(segments)) {
      this.namespace.addDirectory(segments, uri);
      return this.namespace.get(path);
    }
    // Perhaps the root of a skill nobody listed.
    const skillUri = `${uri}/SKILL.md`;
    if (this.generation === 'listing') {
      return (await this.registerSkill(skillUri)) ? this.namespace.get(path) : undefined;
    }
    const content = await this.fetchResource(skillUri);
    this.namespace.addFile([...segments, 'SKILL.md'], { uri: skillUri, sizeBytes: undefined, digest: undefined, frontmatter: undefined, skillUri: undefined });
    this.keep(verifyContent(this.label, content, {}));
    return this.namespace.get(path);
  }

  /** skills/get for a SKILL.md URI; adds the skill on success, false when it is not a skill. */
  private async registerSkill(skillUri: string): Promise<boolean> {
    let entry;
    try {
      ({ entry } = await this.source.getSkill(skillUri));
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof NotSupportedError) return false;
      throw error;
    }
    const record = recordFromListing(entry, this.options);
    if ('problem' in record) {
      // An invalid entry is not loaded by any route: nothing under its directory is read by path.
      this.refusedSkills.add(skillUri);
      this.remember(record.problem);
      return false;
    }
    this.records.set(record.uri, record);
    if (record.declined) {
      this.remember(`skill ${record.uri} declined: ${record.declined}`);
      return false;
    }
    // The same layout check as a whole listing's, against the tree as it is: adding one
    // skill found by path must not rebuild the tree of every listed one.
    const conflict = layoutConflict(this.namespace, record);
    if (conflict) {
      record.declined = `its files cannot be laid out as a tree: ${conflict}`;
      this.remember(`skill ${record.uri} declined: ${record.declined}`);
      return false;
    }
    addRecordToNamespace(this.namespace, record);
    return true;
  }

  /** Re-fetches one skill's entry (after a verification failure, or for a file its manifest lacks). */
  private async refreshSkill(skillUri: string): Promise<void> {
    if (this.generation === 'index') {
      // The index is every skill's entry at once: re-read it at most once a negativeTtlMs per
      // skill, so a SKILL.md that keeps failing does not download the whole index per read.
      const lastMs = this.skillRefreshedAtMs.get(skillUri) ?? Number.NEGATIVE_INFINITY;
      if (this.now() - lastMs < this.options.negativeTtlMs) return;
      this.skillRefreshedAtMs.set(skillUri, this.now());
      await this.refresh();
      return;
    }
    const previous = this.records.get(skillUri);
    let entry;
    try {
      ({ entry } = await this.source.getSkill(skillUri));
    } catch (error) {
      if (error instanceof NotFoundError) {
        // The server no longer serves it: rebuild without it.
        this.records.delete(skillUri);
        this.rebuildNamespace();
        return;
      }
      throw error;
    }
    const record = recordFromListing(entry, this.options);
    if ('problem' in record) {
      this.remember(record.problem);
      return;
    }
    if (previous && sameEntry(previous, record)) return;
    this.noteReplaced(previous, record);
    this.records.set(record.uri, record);
    this.rebuildNamespace();
  }

  private rebuildNamespace(): void {
    const namespace = layOut(this.records.values());
    for (const problem of namespace.problems.splice(0)) this.remember(problem);
    const indexFile = this.namespace.get('index.json');
    if (indexFile?.kind === 'file') namespace.addFile(['index.json'], indexFile.facts);
    this.namespace = namespace;
    this.directoryReads.clear();
    this.negative.clear();
  }

  /** The innermost skill with an array manifest whose directory strictly contains the path. */
  private manifestOwner(segments: string[]): SkillRecord | undefined {
    let best: SkillRecord | undefined;
    for (let depth = segments.length - 1; depth >= 1 && !best; depth--) {
      const skillUri = this.skillMdUriAt(segments.slice(0, depth));
      const record = skillUri ? this.records.get(skillUri) : undefined;
      if (record && Array.isArray(record.files) && !record.declined) best = record;
    }
    return best;
  }

  /** Inside a skill whose files nobody enumerates: an index or dynamic entry, or a SKILL.md found by path with no entry at all. */
  private insideUnenumeratedSkill(segments: string[]): boolean {
    if (this.unenumeratedOwner(segments) !== undefined) return true;
    for (let depth = segments.length - 1; depth >= 1; depth--) {
      const skillMd = this.namespace.get([...segments.slice(0, depth), 'SKILL.md'].join('/'));
      if (skillMd?.kind === 'file') return !this.records.has(skillMd.facts.uri);
    }
    return false;
  }

  /** The innermost skill containing the path, when no manifest enumerates its files (index generation, dynamic). */
  private unenumeratedOwner(segments: string[]): SkillRecord | undefined {
    for (let depth = segments.length - 1; depth >= 1; depth--) {
      const skillUri = this.skillMdUriAt(segments.slice(0, depth));
      const record = skillUri ? this.records.get(skillUri) : undefined;
      if (record && !record.declined) return Array.isArray(record.files) ? undefined : record;
    }
    return undefined;
  }

  /**
   * Counts fetched bytes against the per-skill total for skills no manifest budgets
   * (the spec: "applies the total-size limit to what it actually retrieves"); throws
   * LimitExceededError, keeping nothing, for the file that would take a skill over it.
   */
  private chargeRetrieved(content: VerifiedContent): void {
    const segments = uriToSegments(content.uri);
    if ('problem' in segments) return;
    const owner = this.unenumeratedOwner(segments);
    if (!owner) return;
    const perFile = this.retrievedBytes.get(owner.uri) ?? new Map<string, number>();
    let totalBytes = content.bytes.length;
    for (const [uri, sizeBytes] of perFile) if (uri !== content.uri) totalBytes += sizeBytes;
    if (totalBytes > MAX_BYTES_PER_SKILL) {
      const error = new LimitExceededError(
        `${this.label}: ${content.uri}: skill ${owner.uri} would reach ${totalBytes} retrieved bytes, over the per-skill limit of ${MAX_BYTES_PER_SKILL}`,
        { server: this.label, uri: content.uri },
      );
      this.remember(error.message);
      throw error;
    }
    perFile.set(content.uri, content.bytes.length);
    this.retrievedBytes.set(owner.uri, perFile);
  }

  /** Inside the directory of a skill whose entry was refused (spec: hosts MUST NOT load an invalid entry). */
  private isUnderRefusedSkill(segments: string[]): boolean {
    if (this.refusedSkills.size === 0) return false;
    for (let depth = segments.length; depth >= 1; depth--) {
      if (this.refusedSkills.has(segmentsToUri([...segments.slice(0, depth), 'SKILL.md']))) return true;
    }
    return false;
  }

  private isUnderDeclinedSkill(segments: string[]): boolean {
    for (let depth = segments.length; depth >= 1; depth--) {
      const skillUri = this.skillMdUriAt(segments.slice(0, depth));
      if (skillUri && this.records.get(skillUri)?.declined) return true;
    }
    return false;
  }

  private skillMdUriAt(directorySegments: string[]): string | undefined {
    const node = this.namespace.get([...directorySegments, 'SKILL.md'].join('/'));
    return node?.kind === 'file' ? node.facts.uri : segmentsToUri([...directorySegments, 'SKILL.md']);
  }

  // ---- directory reads ----

  private shouldReadDirectory(path: string): boolean {
    if (!this.source.features().directoryRead || this.directoryReadRefused || path === '') return false;
    const segments = splitPath(path);
    if (segments.length === 1 && segments[0]!.endsWith(':')) return false;
    // Inside a skill with a manifest, the manifest already says everything a directory read could.
    return !this.manifestOwner([...segments, '']) && !this.isUnderDeclinedSkill(segments) && !this.isUnderRefusedSkill(segments);
  }

  private async readDirectory(path: string): Promise<void> {
    const state = this.directoryReads.get(path);
    if (state?.pending) return state.pending;
    if (state && this.now() - state.atMs < this.options.directoryTtlMs) return;
    // Only a read that succeeded stands for the directory; a failure is never remembered as an answer.
    const pending: Promise<void> = this.fetchDirectory(path).then(
      () => {
        if (this.directoryReads.get(path)?.pending === pending) this.directoryReads.set(path, { atMs: this.now() });
      },
      (error: unknown) => {
        if (this.directoryReads.get(path)?.pending === pending) this.directoryReads.delete(path);
        throw error;
      },
    );
    this.directoryReads.set(path, { atMs: state?.atMs ?? Number.NEGATIVE_INFINITY, pending });
    return pending;
  }

  private async fetchDirectory(path: string): Promise<void> {
    const directory = this.namespace.get(path);
    if (directory?.kind !== 'directory') return;
    const parentSegments = splitPath(path);
    let listing;
    try {
      listing = await this.source.readDirectory(directory.uri);
    } catch (error) {
      if (!(error instanceof NotSupportedError)) throw error;
      this.directoryReadRefused = true;
      this.remember(`resources/directory/read ${directory.uri}: declared in capabilities but answered -32601; directories show what listings and lookups found`);
      return;
    }
    for (const problem of listing.problems) this.remember(`resources/directory/read ${directory.uri}: ${problem}`);
    const children: Array<{ segments: string[]; uri: string; isDirectory: boolean; sizeBytes: number | undefined }> = [];
    const seen = new Set<string>();
    for (const child of listing.items) {
      const segments = uriToSegments(child.uri);
      if ('problem' in segments) {
        this.remember(`resources/directory/read ${directory.uri}: child ${child.uri}: ${segments.problem}`);
        continue;
      }
      const isDirectChild = segments.length === parentSegments.length + 1 && parentSegments.every((segment, i) => segments[i] === segment);
      if (!isDirectChild) {
        this.remember(`resources/directory/read ${directory.uri}: child ${child.uri} is not inside the directory`);
        continue;
      }
      const name = segments[segments.length - 1]!;
      if (seen.has(name)) {
        this.remember(`resources/directory/read ${directory.uri}: child "${name}" listed twice; the first is used`);
        continue;
      }
      seen.add(name);
      children.push({ segments, uri: child.uri, isDirectory: child.mimeType === DIRECTORY_MIME_TYPE, sizeBytes: child.size });
    }
    // A skill seen only through a directory read: its entry must come first (skills/get), so
    // its manifest governs its files; an invalid or declined entry leaves the directory empty,
    // and only a SKILL.md the server says is no skill at all is an ordinary file.
    const skillMd = children.find((child) => !child.isDirectory && child.segments[child.segments.length - 1] === 'SKILL.md');
    if (skillMd && this.generation === 'listing' && !this.records.has(skillMd.uri)) {
      if (await this.registerSkill(skillMd.uri)) return;
      if (this.isUnderRefusedSkill(skillMd.segments) || this.isUnderDeclinedSkill(parentSegments)) return;
    }
    for (const child of children) {
      if (child.isDirectory) this.namespace.addDirectory(child.segments, child.uri);
      else this.namespace.addFile(child.segments, { uri: child.uri, sizeBytes: child.sizeBytes, digest: undefined, frontmatter: undefined, skillUri: undefined });
    }
    for (const problem of this.namespace.problems.splice(0)) this.remember(problem);
  }

  // ---- content ----

  private freshUnverified(uri: string) {
    const observed = this.unverifiedVersions.get(uri);
    return observed && this.now() - observed.atMs < this.options.unverifiedTtlMs ? observed : undefined;
  }

  private contentFor(path: string, facts: FileFacts): Promise<VerifiedContent> {
    const knownDigest = facts.digest ?? this.freshUnverified(facts.uri)?.digest;
    if (knownDigest !== undefined) {
      const cached = this.options.cache.get(this.label, facts.uri, knownDigest);
      if (cached) return Promise.resolve(cached);
    }
    const flightKey = `${facts.uri}\0${facts.digest ?? ''}`;
    let flight = this.inflight.get(flightKey);
    if (!flight) {
      flight = this.fetchVerified(path, facts).finally(() => this.inflight.delete(flightKey));
      this.inflight.set(flightKey, flight);
    }
    return flight;
  }

  private async fetchVerified(path: string, facts: FileFacts): Promise<VerifiedContent> {
    try {
      return await this.fetchAndVerify(facts);
    } catch (error) {
      const listedButGone = error instanceof NotFoundError && facts.digest !== undefined;
      if (!(error instanceof IntegrityError) && !listedButGone) throw error;
      // Perhaps the skill changed since its entry was fetched: refresh it once. The final
      // failure is logged where it becomes an errno, so only the retry is noted here.
      const refreshed = await this.refreshedFacts(path, facts);
      if (!refreshed) {
        if (this.namespace.get(path) === undefined) throw new NotFoundError(`${this.label}: ${path}: no longer in the skill's entry`, { server: this.label, uri: facts.uri });
        const final = listedButGone
          ? new IntegrityError(`${this.label}: ${facts.uri}: listed in the held entry but the server no longer serves it`, { server: this.label, uri: facts.uri })
          : (error as IntegrityError);
        if (facts.skillUri !== undefined && facts.uri === facts.skillUri) this.reject(facts.skillUri, final.message);
        throw final;
      }
      this.options.log(`[${this.label}] ${(error as Error).message}; the refreshed entry differs, fetching again`);
      try {
        return await this.fetchAndVerify(refreshed);
      } catch (retryError) {
        if (retryError instanceof IntegrityError && refreshed.skillUri !== undefined && refreshed.uri === refreshed.skillUri) {
          this.reject(refreshed.skillUri, retryError.message);
        }
        throw retryError;
      }
    }
  }

  private async fetchAndVerify(facts: FileFacts): Promise<VerifiedContent> {
    return this.keep(verifyContent(this.label, await this.fetchResource(facts.uri), expectationOf(facts)), facts.skillUri);
  }

  /** The file's facts after refreshing its entry, or undefined when nothing changed (so a retry is pointless). */
  private async refreshedFacts(path: string, facts: FileFacts): Promise<FileFacts | undefined> {
    const skillUri = facts.skillUri;
    if (skillUri === undefined) return undefined;
    await this.refreshSkill(skillUri).catch((error: unknown) => {
      if (!(error instanceof SkillsMountError)) throw error;
      this.remember(`refreshing ${skillUri} failed: ${error.message}`);
    });
    const node = this.namespace.get(path);
    if (node?.kind !== 'file') return undefined;
    const next = node.facts;
    const changed = next.digest !== facts.digest || next.sizeBytes !== facts.sizeBytes || JSON.stringify(next.frontmatter) !== JSON.stringify(facts.frontmatter);
    return changed ? next : undefined;
  }

  /** resources/read; a refusal by policy (over a size limit) is not an EIO the FUSE edge logs, so it is logged here. */
  private async fetchResource(uri: string): Promise<UnverifiedContent> {
    try {
      return await this.source.readResource(uri);
    } catch (error) {
      if (error instanceof LimitExceededError) this.remember(error.message);
      throw error;
    }
  }

  /** Caches verified content; subscribes to updates of its skill's SKILL.md (or of the file, outside any skill). */
  private keep(content: VerifiedContent, skillUri?: string): VerifiedContent {
    this.chargeRetrieved(content);
    this.options.cache.set(this.label, content);
    if (!content.verified) {
      this.unverifiedVersions.set(content.uri, { digest: content.digest, sizeBytes: content.bytes.length, atMs: this.now() });
    }
    // One subscription per skill, not per file: a changed skill changes its entry.
    this.subscribe(skillUri ?? content.uri);
    return content;
  }

  private subscribe(uri: string): void {
    if (!this.source.features().subscribe || this.subscribed.has(uri) || this.subscribed.size >= this.options.maxSubscriptions) return;
    this.subscribed.add(uri);
    this.source.subscribe(uri).catch((error: unknown) => {
      this.subscribed.delete(uri);
      this.options.log(`[${this.label}] resources/subscribe ${uri} failed: ${(error as Error).message}`);
    });
  }
}

function addRecordToNamespace(namespace: Namespace, record: SkillRecord): void {
  if (record.declined) return;
  if (Array.isArray(record.files)) {
    // Manifest files are FileFacts already: the namespace keeps the same objects and path strings.
    for (const file of record.files) namespace.addFile(file.path, file);
    return;
  }
  namespace.addFile(record.path, { uri: record.uri, sizeBytes: undefined, digest: record.skillMdDigest, frontmatter: record.frontmatter, skillUri: record.uri });
}

/** Why a record's files cannot all be laid out in `namespace` (or among themselves), or undefined. */
function layoutConflict(namespace: Namespace, record: SkillRecord): string | undefined {
  const files = Array.isArray(record.files) ? record.files : [{ path: record.path, uri: record.uri }];
  const own = new Set<string>();
  for (const file of files) own.add(file.path);
  for (const file of files) {
    for (let end = file.path.indexOf('/'); end !== -1; end = file.path.indexOf('/', end + 1)) {
      if (own.has(file.path.slice(0, end))) return `${file.uri} needs "${file.path.slice(0, end)}" to be a directory, but the same skill lists it as a file`;
    }
    const conflict = namespace.fileConflict(file.path, file.uri);
    if (conflict) return conflict;
  }
  return undefined;
}

/**
 * The tree of the given skills, shallow ones first (so a nested skill's entry meets the files
 * its encloser lists too). A skill whose files cannot all be laid out as a tree (a file `x`
 * and a file `x/y.md`; a skill whose directory is another's file) is declined whole, with the
 * reason: never half a skill. Checked before anything of it is added, so one pass suffices.
 */
function layOut(records: Iterable<SkillRecord>): Namespace {
  const namespace = new Namespace(segmentsToUri([]));
  for (const record of [...records].sort((a, b) => a.depth - b.depth)) {
    if (record.declined) continue;
    const conflict = layoutConflict(namespace, record);
    if (conflict) record.declined = `its files cannot be laid out as a tree: ${conflict}`;
    else addRecordToNamespace(namespace, record);
  }
  return namespace;
}

function expectationOf(facts: FileFacts): Expectation {
  return { digest: facts.digest, sizeBytes: facts.sizeBytes, frontmatter: facts.frontmatter };
}

/** Same resources set (every uri, digest and size) and the same frontmatter. */
function sameEntry(a: SkillRecord, b: SkillRecord): boolean {
  if (Array.isArray(a.files) && Array.isArray(b.files)) {
    if (a.files.length !== b.files.length) return false;
    for (let i = 0; i < a.files.length; i++) {
      const x = a.files[i]!;
      const y = b.files[i]!;
      if (x.uri !== y.uri || x.digest !== y.digest || x.sizeBytes !== y.sizeBytes) return false;
    }
  } else if (a.files !== b.files || a.skillMdDigest !== b.skillMdDigest) {
    return false;
  }
  return JSON.stringify(a.frontmatter) === JSON.stringify(b.frontmatter);
}

function isoTime(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/** The URI of a child named `name` in the directory `parentUri`, spelled canonically. */
function childUri(parentUri: string, name: string): string {
  const encoded = segmentsToUri([name]).slice('skill://'.length);
  return parentUri.endsWith('//') ? `${parentUri}${encoded}` : `${parentUri}/${encoded}`;
}
