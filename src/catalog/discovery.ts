// Finding a server's skills: a listing, else the index, else none; paging progress; when to
// re-list (TTL, change notifications with a storm limit); and installing what was found.
// Knows nothing of single paths beyond the index file it adds.
import { NotFoundError, NotSupportedError } from '../errors.js';
import type { CacheHint, SkillSource, UnverifiedContent } from '../mcp/skill-source.js';
import { INDEX_URI } from '../protocol/skills-wire.js';
import type { CatalogState } from './catalog-state.js';
import type { ContentStore } from './content-store.js';
import type { DurableStore } from './durable-store.js';
import type { HeldEntries } from './held-entries.js';
import { keptListingDocument, readKeptListing } from './kept-listing.js';
import type { PathObservations } from './path-observations.js';
import type { ServerLog } from './server-log.js';
import { recordFromIndex, recordFromListing, type Generation, type SkillRecord } from './skill-record.js';
import { layOut } from './tree-layout.js';
import { verifyContent } from './verified-content.js';

/** A first listing still paging is shown as it goes up to this many entries. */
const MAX_INTERIM_LISTING_ITEMS = 50_000;
/**
 * Change notifications re-list at most once in this long, counted from the end of the last
 * re-listing they caused: the first change after a quiet spell re-lists at once, a storm costs
 * one re-listing per window (plus one trailing), whatever its rate or the listing's duration.
 */
export const NOTIFIED_RELIST_INTERVAL_MS = 2_000;
/** Without a ttlMs hint, a live channel stretches re-listing by this factor (events say when to re-list). */
const NOTIFIED_LISTING_TTL_FACTOR = 10;
/** A server's ttlMs is honoured within this range: 0 ("do not cache") would re-list on every operation. */
export const LISTING_TTL_RANGE_MS = { min: 5_000, max: 3_600_000 } as const;
/**
 * Re-listings on the daemon's own clock start up to this fraction of the held time early, so
 * that servers (and daemons) listed together do not stay in step.
 */
export const RELIST_JITTER = 0.1;
/** After a failed listing the next waits twice as long as the last, up to this. */
export const RELIST_BACKOFF_MAX_MS = 300_000;

export interface DiscoveryOptions {
  hideDynamic: boolean;
  listingTtlMs: number;
  now: () => number;
  /** In [0, 1): the jitter of re-listings on the daemon's clock. */
  random: () => number;
  /** Re-listings for change notifications start at least this long apart (default NOTIFIED_RELIST_INTERVAL_MS). */
  notifiedRelistIntervalMs?: number;
  /** Entries held on a skills/get answer's ttlMs that a new listing lacks, kept beside it (SkillEntries.retained). */
  retained?: (listed: ReadonlyMap<string, SkillRecord>) => Iterable<SkillRecord>;
}

export class Discovery {
  private listedAtMs = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | undefined;
  private listingHint: CacheHint = {};
  /** Entries received so far while a first listing is still paging; undefined otherwise. */
  private listingInProgress: number | undefined;
  /** A change was announced that no listing started since has seen. */
  private changePending = false;
  /** The listing in flight was started for change notifications. */
  private notifiedInFlight = false;
  /** When the last listing started for change notifications ended. */
  private notifiedEndedAtMs = Number.NEGATIVE_INFINITY;
  private notifiedRefreshTimer: NodeJS.Timeout | undefined;
  /** Set from the first notification that had to wait until a window passes with none: one storm, one log line. */
  private storm: { notifications: number } | undefined;
  /** When the listing held was read back from the disk cache (the server unreachable): when it was saved. */
  private keptSavedAt: string | undefined;
  /** A listing from the server was installed whole once: later listings replace it only when whole. */
  private listedOnce = false;
  /** The next re-listing on the daemon's clock (the held time after the last one ended). */
  private relistTimer: NodeJS.Timeout | undefined;
  /** Listings that failed in a row: the wait before the next doubles with each. */
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly source: SkillSource,
    private readonly state: CatalogState,
    private readonly held: HeldEntries,
    private readonly observations: PathObservations,
    private readonly store: ContentStore,
    private readonly log: ServerLog,
    private readonly options: DiscoveryOptions,
    private readonly durable: DurableStore | undefined,
  ) {}

  /** Set while the listing shown is the one kept on disk, not one the server gave since this start. */
  get keptListingSavedAt(): string | undefined {
    return this.keptSavedAt;
  }

  /**
   * Shows the server's last complete listing, kept on disk, while it cannot be reached: only
   * when nothing the server said since this start is held. True when one was installed.
   */
  async restoreKept(): Promise<boolean> {
    if (!this.durable || this.state.generation !== undefined) return false;
    const saved = await this.durable.loadListing();
    if (!saved || this.state.generation !== undefined) return false;
    const kept = readKeptListing(saved.document);
    if ('problem' in kept) {
      this.log.remember(`the kept listing cannot be used: ${kept.problem}`);
      return false;
    }
    const records = kept.generation === 'listing' ? kept.entries.map((entry) => recordFromListing(entry, this.options)) : kept.entries.map(recordFromIndex);
    this.install(kept.generation, records, kept.problems, true, [], true);
    this.keptSavedAt = saved.savedAt;
    // The skills shown, as the startup summary counts them: not the entries kept (some refused, repeated or declined).
    let shown = 0;
    for (const record of this.state.records.values()) if (!record.declined) shown += 1;
    const entries = records.length + kept.problems.length;
    this.log.note(`not reachable: showing the listing kept on disk (saved ${saved.savedAt}): ${shown} skills${shown < entries ? `; ${entries - shown} of its ${entries} entries not shown (see problems)` : ''}`);
    return true;
  }

  /** The freshness hint of the last listing ({} for the index or none). */
  get hint(): CacheHint {
    return this.listingHint;
  }

  /** While a first listing is still paging: how many entries have arrived. */
  get inProgress(): number | undefined {
    return this.listingInProgress;
  }

  /** Discovers the server's skills (listing, else index, else none); never throws. */
  refresh(): Promise<void> {
    this.refreshing ??= this.discover().finally(() => {
      this.refreshing = undefined;
      if (this.notifiedInFlight) {
        this.notifiedInFlight = false;
        this.notifiedEndedAtMs = this.options.now();
      }
      // A change announced during this listing may be missing from it: one more, within the limit.
      this.scheduleNotified();
      this.scheduleRelisting();
    });
    return this.refreshing;
  }

  /** No more re-listings of its own (the daemon stops); a refresh asked for still runs. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.relistTimer);
    clearTimeout(this.notifiedRefreshTimer);
    this.notifiedRefreshTimer = undefined;
  }

  /**
   * Freshness never waits for a reader: once the held time runs out the daemon lists again by
   * itself, so a change no event announces (a server with ttlMs 0 and no notifications, such as
   * the SDK v2's) still reaches the tree, the kernel and the documents. Up to RELIST_JITTER
   * early; after a failed listing, backing off to RELIST_BACKOFF_MAX_MS.
   */
  private scheduleRelisting(): void {
    clearTimeout(this.relistTimer);
    if (this.stopped) return;
    const heldMs = this.relistAfterMs();
    const waitMs = this.failures === 0 ? heldMs * (1 - RELIST_JITTER * this.options.random()) : Math.min(RELIST_BACKOFF_MAX_MS, heldMs * 2 ** this.failures);
    this.relistTimer = setTimeout(() => void this.refresh(), waitMs);
    this.relistTimer.unref?.();
  }

  /**
   * A refresh for a change notification. Any number of them (a storm, on either era's
   * channel) coalesce: at most one listing in flight, and the next notified one starts no
   * sooner than notifiedRelistIntervalMs after the last one ended, a queued one included.
   */
  refreshSoon(): void {
    this.changePending = true;
    if (this.storm) this.storm.notifications += 1;
    this.scheduleNotified();
  }

  private scheduleNotified(): void {
    if (!this.changePending || this.refreshing || this.notifiedRefreshTimer) return;
    const intervalMs = this.options.notifiedRelistIntervalMs ?? NOTIFIED_RELIST_INTERVAL_MS;
    const waitMs = this.notifiedEndedAtMs + intervalMs - this.options.now();
    if (waitMs > 0) {
      if (!this.storm) {
        this.storm = { notifications: 1 };
        this.log.note(`change notifications faster than one every ${intervalMs} ms: re-listing at most that often until they calm down`);
      }
      this.notifiedRefreshTimer = setTimeout(() => {
        this.notifiedRefreshTimer = undefined;
        this.scheduleNotified();
      }, waitMs);
      this.notifiedRefreshTimer.unref?.();
      return;
    }
    // A window went by with nothing to wait for: the storm, if there was one, is over.
    if (this.notifiedEndedAtMs + 2 * intervalMs < this.options.now()) this.storm = undefined;
    this.changePending = false;
    this.notifiedInFlight = true;
    void this.refresh();
  }

  /** Starts a refresh in the background when the listing is older than it is held for. */
  refreshIfStale(): void {
    if (this.options.now() - this.listedAtMs > this.relistAfterMs()) void this.refresh();
  }

  /**
   * How long a listing is held: the server's ttlMs (clamped), else the default. Without a
   * hint, a server whose change events can reach us now is re-listed on its word and the
   * default is only a safety net; a declared listChanged with no open channel counts for nothing.
   */
  relistAfterMs(): number {
    const hinted = this.listingHint.ttlMs;
    if (hinted !== undefined) return Math.min(LISTING_TTL_RANGE_MS.max, Math.max(LISTING_TTL_RANGE_MS.min, hinted));
    const features = this.source.features();
    return this.options.listingTtlMs * (features.listChanged && features.liveChannel ? NOTIFIED_LISTING_TTL_FACTOR : 1);
  }

  private async discover(): Promise<void> {
    const startedAt = this.options.now();
    try {
      if (this.state.generation !== 'index') {
        try {
          // A first listing that pages on for long fills the directory in as it goes; one that
          // replaces a listing (a complete or partial one, or the one kept on disk) does not:
          // it would hide skills meanwhile.
          const listing = await this.source
            .listSkills((soFar) => {
              this.listingInProgress = soFar.items.length;
              if (this.listedOnce || this.keptSavedAt !== undefined) return;
              // Past this, an interim tree costs more than it shows: the count alone is reported.
              if (soFar.items.length > MAX_INTERIM_LISTING_ITEMS) return;
              this.install('listing', soFar.items.map((entry) => recordFromListing(entry, this.options)), soFar.problems, false, soFar.refused, true);
            })
            .finally(() => {
              this.listingInProgress = undefined;
            });
          this.listingHint = { ttlMs: listing.ttlMs, cacheScope: listing.cacheScope };
          const changed = this.install('listing', listing.items.map((entry) => recordFromListing(entry, this.options)), listing.problems, listing.complete, listing.refused);
          this.listedOnce = true;
          this.failures = 0;
          if (changed && listing.complete) this.keep('listing', listing.items);
          return;
        } catch (error) {
          // -32601: an index-generation server (or none at all).
          if (!(error instanceof NotSupportedError)) throw error;
        }
      }
      try {
        const index = await this.source.readIndex();
        this.listingHint = {};
        const changed = this.install('index', index.items.map(recordFromIndex), index.problems, index.complete);
        if (changed && index.complete) this.keep('index', index.items);
        this.addIndexFile(index.content);
        this.failures = 0;
        return;
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
      }
      this.listingHint = {};
      this.install('none', [], [], true);
      this.failures = 0;
    } catch (error) {
      // A broken listing proves nothing: keep what we knew and try again later.
      this.failures += 1;
      this.listedAtMs = startedAt;
      this.log.remember(`discovery failed: ${(error as Error).message}`);
    }
  }

  /** Keeps a complete listing on disk, written in the background (never fails discovery). */
  private keep(generation: 'listing' | 'index', entries: Parameters<typeof keptListingDocument>[1]): void {
    void this.durable?.saveListing(keptListingDocument(generation, entries));
  }

  /**
   * Replaces everything held with what a discovery found; the one place a listing becomes the
   * tree. True when the skills or their entries differ from what was held before.
   */
  private install(
    generation: Generation,
    results: Array<SkillRecord | { problem: string; uri?: string }>,
    problems: string[],
    complete: boolean,
    refusedUris: readonly string[] = [],
    quiet = false,
  ): boolean {
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
    if (generation === 'listing') {
      for (const record of this.options.retained?.(records) ?? []) if (!records.has(record.uri) && !refused.has(record.uri)) records.set(record.uri, record);
    }
    const namespace = layOut(records.values());
    allProblems.push(...namespace.problems);
    for (const record of records.values()) {
      if (record.declined) allProblems.push(`skill ${record.uri} declined: ${record.declined}`);
    }
    const previous = this.state.records;
    let changed = this.state.generation !== generation || previous.size !== records.size;
    for (const record of records.values()) {
      const before = previous.get(record.uri);
      // One comparison per record: noteReplaced says whether the entry differs.
      if (this.held.noteReplaced(before, record) || before === undefined) changed = true;
    }
    if (this.held.clearRejections()) changed = true;
    this.keptSavedAt = undefined;
    this.state.install(generation, records, refused, namespace, complete, changed || refused.size !== this.state.refusedSkills.size);
    this.listedAtMs = this.options.now();
    this.observations.forget();
    // An interim install while the first listing pages on: the final one logs. So does a
    // storm's re-listing that changed nothing: one line per storm, not one per listing.
    const silent = quiet || (this.storm !== undefined && !changed);
    this.log.restart(allProblems, silent);
    if (silent) return changed;
    const declined = [...records.values()].filter((record) => record.declined).length;
    this.log.note(
      `${generation === 'none' ? 'no skill listing (skills reachable by path only)' : `${generation} generation: ${records.size - declined} skills`}` +
        `${declined ? `, ${declined} declined` : ''}${complete ? '' : ' (partial listing)'}${allProblems.length ? `, ${allProblems.length} problems` : ''}`,
    );
    return changed;
  }

  private addIndexFile(content: UnverifiedContent): void {
    const verified = verifyContent(this.state.label, content, {});
    this.store.put(verified);
    this.store.noteVersion(INDEX_URI, verified);
    this.state.namespace.addFile(['index.json'], { uri: INDEX_URI, sizeBytes: undefined, digest: undefined, frontmatter: undefined, skillUri: undefined });
  }
}
