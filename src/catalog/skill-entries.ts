// One skill's entry at a time, by skills/get: a skill found by path joins the tree as it is; a
// held one is re-fetched after a failed verification or for a file its manifest lacks.
import { LRUCache } from 'lru-cache';
import { NotFoundError, NotSupportedError } from '../errors.js';
import type { SkillSource } from '../mcp/skill-source.js';
import { MAX_REMEMBERED_PATHS } from './catalog-options.js';
import type { CatalogState } from './catalog-state.js';
import { sameEntry, type HeldEntries } from './held-entries.js';
import type { PathObservations } from './path-observations.js';
import type { ServerLog } from './server-log.js';
import { recordFromListing } from './skill-record.js';
import { addRecordToNamespace, declineForLayout, layOut, layoutConflict } from './tree-layout.js';

export interface SkillEntriesOptions {
  hideDynamic: boolean;
  negativeTtlMs: number;
  now: () => number;
}

export class SkillEntries {
  /** Per skill URI: when its entry was last asked for again (at most once a negativeTtlMs). */
  private readonly refreshedAtMs = new LRUCache<string, number>({ max: MAX_REMEMBERED_PATHS });

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
    try {
      ({ entry } = await this.source.getSkill(skillUri));
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
    try {
      ({ entry } = await this.source.getSkill(skillUri));
    } catch (error) {
      if (error instanceof NotFoundError) {
        // The server no longer serves it: rebuild without it.
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
    if (previous && sameEntry(previous, record)) return;
    this.held.noteReplaced(previous, record);
    this.state.setRecord(record);
    this.rebuildNamespace();
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
