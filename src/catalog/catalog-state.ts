// The skills one server is held to serve: the discovery generation, the entries by SKILL.md
// URI, the tree they lay out and the entries refused. Holds them; decides nothing.
import { Namespace } from './namespace.js';
import type { Generation, SkillRecord } from './skill-record.js';
import { segmentsToUri } from './uri-path.js';

export class CatalogState {
  private heldGeneration: Generation | undefined;
  private heldRecords = new Map<string, SkillRecord>();
  private heldNamespace = new Namespace(segmentsToUri([]));
  private heldRefused = new Set<string>();
  private complete = false;
  /** Whether some entry (not declined) has no manifest; undefined once the entries changed. */
  private unenumerated: boolean | undefined = false;
  private heldRecordsVersion = 0;
  private readonly listeners: Array<() => void> = [];

  constructor(readonly label: string) {}

  /** Called after anything held changes: the FUSE edge tells the kernel to look again. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  get generation(): Generation | undefined {
    return this.heldGeneration;
  }

  /** Entries by SKILL.md URI, declined ones included. */
  get records(): ReadonlyMap<string, SkillRecord> {
    return this.heldRecords;
  }

  /** The tree of paths known without asking; lookups and directory reads add to it. */
  get namespace(): Namespace {
    return this.heldNamespace;
  }

  /**
   * Whether any entry held (not declined) has no manifest (index generation, dynamic): when none
   * has, no file is inside a skill whose files nobody enumerates, and the per-skill byte budget
   * has nothing to count.
   */
  get anyUnenumerated(): boolean {
    this.unenumerated ??= [...this.heldRecords.values()].some((record) => !record.declined && !Array.isArray(record.files));
    return this.unenumerated;
  }

  /** Counts every change of the entries held: what was derived from them at another count is stale. */
  get recordsVersion(): number {
    return this.heldRecordsVersion;
  }

  /** Skill URIs whose entries were refused: nothing under them is loaded by path either. */
  get refusedSkills(): ReadonlySet<string> {
    return this.heldRefused;
  }

  get listingComplete(): boolean {
    return this.complete;
  }

  /**
   * A new listing (or index, or none): everything held before is replaced. `differs`: whether
   * its skills or entries differ from those held; a re-listing that found the same ones tells
   * nobody (the kernel keeps what it caches, a snapshot does not start over).
   */
  install(generation: Generation, records: Map<string, SkillRecord>, refusedSkills: Set<string>, namespace: Namespace, complete: boolean, differs = true): void {
    this.heldGeneration = generation;
    this.heldRecords = records;
    this.recordsChanged();
    this.heldRefused = refusedSkills;
    this.heldNamespace = namespace;
    this.complete = complete;
    if (differs) this.changed();
  }

  private recordsChanged(): void {
    this.unenumerated = undefined;
    this.heldRecordsVersion++;
  }

  /** A restarted server may speak another generation: the next discovery decides again. */
  forgetGeneration(): void {
    this.heldGeneration = undefined;
  }

  setRecord(record: SkillRecord): void {
    this.heldRecords.set(record.uri, record);
    this.recordsChanged();
    this.changed();
  }

  deleteRecord(skillUri: string): void {
    this.heldRecords.delete(skillUri);
    this.recordsChanged();
    this.changed();
  }

  refuse(skillUri: string): void {
    this.heldRefused.add(skillUri);
    this.changed();
  }

  replaceNamespace(namespace: Namespace): void {
    this.heldNamespace = namespace;
    this.changed();
  }
}
