// One skill's entry at a time, by skills/get: a skill found by path joins the tree as it is; a
// held one is re-fetched after a failed verification or for a file its manifest lacks, and when
// the ttlMs its skills/get answer carried runs out (kept across re-listings until then).
import { LRUCache } from 'lru-cache';
import { NotFoundError, NotSupportedError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import type { CacheHint, SkillSource } from '../mcp/skill-source.js';
import { MAX_REMEMBERED_PATHS } from './catalog-options.js';
import type { CatalogState } from './catalog-state.js';
import { LISTING_TTL_RANGE_MS, RELIST_BACKOFF_MAX_MS } from './discovery.js';
import { sameEntry, type HeldEntries } from './held-entries.js';
import type { PathObservations } from './path-observations.js';
import type { ServerLog } from './server-log.js';
import { recordFromListing, type SkillRecord } from './skill-record.js';
import { addRecordToNamespace, declineForLayout, layOut, layoutConflict } from './tree-layout.js';

export interface SkillEntriesOptions {
  hideDynamic: boolean;
  negativeTtlMs: number;
  now: () => number;
}

/** An entry held on the word of a skills/get answer that carried a ttlMs. */
interface TimedEntry {
  record: SkillRecord;
  /** The answer's ttlMs, clamped as a listing's. */
  heldMs: number;
  /** When it runs out. */
  expiresAtMs: number;
  /** skills/get calls that failed in a row since it ran out: the next waits twice as long. */
  failures: number;
  timer: NodeJS.Timeout | undefined;
}

export class SkillEntries {
  /** Per skill URI: when its entry was last asked for again (at most once a negativeTtlMs). */
  private readonly refreshedAtMs = new LRUCache<string, number>({ max: MAX_REMEMBERED_PATHS });
  /** Entries from skills/get answers with a ttlMs (2026-07-28), by SKILL.md URI; at most MAX_REMEMBERED_PATHS. */
  private readonly timed = new Map<string, TimedEntry>();
  private stopped = false;

  constructor(
    private readonly source: SkillSource,
    private readonly state: CatalogState,
    private readonly held: HeldEntries,
    private readonly observations: PathObservations,
    private readonly log: ServerLog,
    /** A whole new discovery: for the index generation, the index is every skill's entry at once. */
    private readonly rediscover: () => Promise<void>,
    private readonly options: SkillEntriesOptions,
  ) {}

  /** True, noting the time, when the skill's entry was not asked for again within a negativeTtlMs. */
  claimRefresh(skillUri: string): boolean {
    const lastMs = this.refreshedAtMs.get(skillUri) ?? Number.NEGATIVE_INFINITY;
    if (this.options.now() - lastMs < this.options.negativeTtlMs) return false;
    this.refreshedAtMs.set(skillUri, this.options.now());
    return true;
  }

  /** skills/get for a SKILL.md URI; adds the skill on success, false when it is not a skill. */
  async register(skillUri: string): Promise<boolean> {
    let entry;
    let hint: CacheHint;
    try {
      ({ entry, ...hint } = await this.source.getSkill(skillUri));
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof NotSupportedError) return false;
      throw error;
    }
    const record = recordFromListing(entry, this.options);
    if ('problem' in record) {
      // An invalid entry is not loaded by any route: nothing under its directory is read by path.
      this.state.refuse(skillUri);
      this.log.remember(record.problem);
      return false;
    }
    this.state.setRecord(record);
    if (record.declined) {
      this.log.remember(`skill ${record.uri} declined: ${record.declined}`);
      return false;
    }
    // The same layout check as a whole listing's, against the tree as it is: adding one
    // skill found by path must not rebuild the tree of every listed one.
    const conflict = layoutConflict(this.state.namespace, record);
    if (conflict) {
      declineForLayout(record, conflict);
      this.log.remember(`skill ${record.uri} declined: ${record.declined}`);
      return false;
    }
    addRecordToNamespace(this.state.namespace, record);
    this.holdFor(record, hint);
    return true;
  }

  /** Re-fetches one skill's entry (after a verification failure, or for a file its manifest lacks). */
  async refresh(skillUri: string): Promise<void> {
    if (this.state.generation === 'index') {
      // The index is every skill's entry at once: re-read it at most once a negativeTtlMs per
      // skill, so a SKILL.md that keeps failing does not download the whole index per read.
      if (!this.claimRefresh(skillUri)) return;
      await this.rediscover();
      return;
    }
    const previous = this.state.records.get(skillUri);
    let entry;
    let hint: CacheHint;
    try {
      ({ entry, ...hint } = await this.source.getSkill(skillUri));
    } catch (error) {
      if (error instanceof NotFoundError) {
        // The server no longer serves it: rebuild without it.
        this.forgetTimed(skillUri);
        this.state.deleteRecord(skillUri);
        this.rebuildNamespace();
        return;
      }
      throw error;
    }
    const record = recordFromListing(entry, this.options);
    if ('problem' in record) {
      this.log.remember(record.problem);
      return;
    }
    if (previous && sameEntry(previous, record)) {
      this.holdFor(previous, hint);
      return;
    }
    this.held.noteReplaced(previous, record);
    this.state.setRecord(record);
    this.rebuildNamespace();
    this.holdFor(record, hint);
  }

  /**
   * For a re-listing about to replace every entry: the entries skills/get gave with a ttlMs that
   * has not run out and the listing lacks (a listing may be partial: absence proves nothing), so
   * they stay held as long as their server said; the listing's own entries govern the others.
   */
  retained(listed: ReadonlyMap<string, SkillRecord>): SkillRecord[] {
    const kept: SkillRecord[] = [];
    for (const [uri, timed] of this.timed) {
      if (listed.has(uri) || this.state.records.get(uri) !== timed.record) this.forgetTimed(uri);
      else if (timed.expiresAtMs > this.options.now()) kept.push(timed.record);
    }
    return kept;
  }

  /** No more re-fetches on the clock (the daemon stops). */
  stop(): void {
    this.stopped = true;
    for (const uri of [...this.timed.keys()]) this.forgetTimed(uri);
  }

  /**
   * Holds `record`, just confirmed by skills/get, for the answer's ttlMs (clamped as a listing's:
   * 0 would mean a skills/get per operation), then asks again on the daemon's own clock: the
   * kernel answers names for long without asking, so a reader would never prompt it. An answer
   * without a ttlMs (2025, or a server on the text before ttlMs on skills/get) holds the entry
   * until the next re-listing, as before.
   */
  private holdFor(record: SkillRecord, hint: CacheHint): void {
    if (hint.ttlMs === undefined || this.stopped) return;
    if (!this.timed.has(record.uri) && this.timed.size >= MAX_REMEMBERED_PATHS) return;
    const heldMs = Math.min(LISTING_TTL_RANGE_MS.max, Math.max(LISTING_TTL_RANGE_MS.min, hint.ttlMs));
    clearTimeout(this.timed.get(record.uri)?.timer);
    const timed: TimedEntry = { record, heldMs, expiresAtMs: this.options.now() + heldMs, failures: 0, timer: undefined };
    this.timed.set(record.uri, timed);
    this.schedule(timed, heldMs);
  }

  private schedule(timed: TimedEntry, waitMs: number): void {
    timed.timer = setTimeout(() => void this.expire(timed), waitMs);
    timed.timer.unref?.();
  }

  /** The entry's ttlMs ran out: skills/get again, unless a listing or another answer replaced it meanwhile. */
  private async expire(timed: TimedEntry): Promise<void> {
    const uri = timed.record.uri;
    if (this.timed.get(uri) !== timed) return;
    timed.timer = undefined;
    if (this.state.records.get(uri) !== timed.record) {
      this.timed.delete(uri);
      return;
    }
    try {
      await this.refresh(uri);
    } catch (error) {
      // Unreachable for now: keep what is held, ask again later (doubling, as re-listings do).
      if (this.stopped || this.timed.get(uri) !== timed) return;
      timed.failures += 1;
      this.log.remember(`skills/get ${escapeForLog(uri)} (its ttlMs ran out) failed: ${(error as Error).message}`);
      this.schedule(timed, Math.min(RELIST_BACKOFF_MAX_MS, timed.heldMs * 2 ** timed.failures));
    }
  }

  private forgetTimed(uri: string): void {
    clearTimeout(this.timed.get(uri)?.timer);
    this.timed.delete(uri);
  }

  private rebuildNamespace(): void {
    const namespace = layOut(this.state.records.values());
    for (const problem of namespace.problems.splice(0)) this.log.remember(problem);
    const indexFile = this.state.namespace.get('index.json');
    if (indexFile?.kind === 'file') namespace.addFile(['index.json'], indexFile.facts);
    this.state.replaceNamespace(namespace);
    this.observations.forget();
  }
}
