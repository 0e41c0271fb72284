// What happened to the entries a skill is held to: changed by a refresh, or rejected because its
// SKILL.md failed verification (then nothing of the skill is served). Fetches nothing itself.
import { IntegrityError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import type { CatalogState } from './catalog-state.js';
import type { FileFacts } from './namespace.js';
import { resourcesDigest } from './resources-digest.js';
import type { SkillRecord } from './skill-record.js';
import type { ServerLog } from './server-log.js';

/** What happened to a skill's held entry, beyond what its record says. */
interface HeldState {
  rejected?: string;
  changedAtMs?: number;
}

export class HeldEntries {
  /** Per skill URI; only skills that were rejected or changed have one. */
  private readonly held = new Map<string, HeldState>();

  constructor(
    private readonly state: CatalogState,
    private readonly log: ServerLog,
    private readonly now: () => number,
  ) {}

  /** Records what a new entry for a skill means for its held one: a different set is a changed skill (true). */
  noteReplaced(previous: SkillRecord | undefined, next: SkillRecord): boolean {
    if (!previous || sameEntry(previous, next)) return false;
    this.held.set(next.uri, { changedAtMs: this.now() });
    const before = Array.isArray(previous.files) ? resourcesDigest(previous.files) : String(previous.files);
    const after = Array.isArray(next.files) ? resourcesDigest(next.files) : String(next.files);
    this.log.note(`skill ${escapeForLog(next.uri)} changed: resources ${before} -> ${after}; new opens use the new entry`);
    return true;
  }

  /**
   * A rejection stands until a refreshed entry verifies: a new listing is one, so the next
   * read of the skill loads its SKILL.md again (once per listing, however often it fails).
   */
  /** Forgets every rejection; true when there was one (its skill shows again). */
  clearRejections(): boolean {
    let cleared = false;
    for (const state of this.held.values()) {
      if (state.rejected !== undefined) cleared = true;
      delete state.rejected;
    }
    return cleared;
  }

  /** A SKILL.md failed verification, after the one refresh: the whole skill is rejected. */
  reject(skillUri: string, reason: string): void {
    const state = this.held.get(skillUri) ?? {};
    if (state.rejected !== undefined) return;
    state.rejected = reason;
    this.held.set(skillUri, state);
    this.log.remember(`skill ${skillUri} rejected: ${reason}`);
  }

  /** Why the skill is rejected, if it is. */
  rejection(skillUri: string): string | undefined {
    return this.held.get(skillUri)?.rejected;
  }

  /** When a refreshed entry for the skill brought a different resources set, if one did. */
  changedAtMs(skillUri: string): number | undefined {
    return this.held.get(skillUri)?.changedAtMs;
  }

  /** How many skills still held are rejected, and how many (not rejected) changed. */
  counts(): { rejected: number; changed: number } {
    let rejected = 0;
    let changed = 0;
    for (const [uri, state] of this.held) {
      if (!this.state.records.has(uri)) continue;
      if (state.rejected !== undefined) rejected += 1;
      else if (state.changedAtMs !== undefined) changed += 1;
    }
    return { rejected, changed };
  }

  /**
   * Every byte served belongs to a skill whose SKILL.md verified against the held entry: a
   * rejected skill serves nothing (no request is made), and a supporting file of a skill whose
   * SKILL.md was not read yet first loads that SKILL.md (one extra read per skill, not per file).
   */
  async hold(facts: FileFacts, load: (path: string, facts: FileFacts) => Promise<unknown>): Promise<void> {
    const skillUri = facts.skillUri;
    const record = skillUri === undefined ? undefined : this.state.records.get(skillUri);
    if (!record || record.files === 'unlisted') return;
    const rejected = this.rejection(record.uri);
    if (rejected !== undefined) {
      throw new IntegrityError(`skill ${record.uri} is rejected (${rejected}); nothing of it is served until its entry changes`, {
        server: this.state.label,
        method: 'read',
        uri: facts.uri,
      });
    }
    if (facts.uri === record.uri) return;
    const skillMd = this.state.namespace.get(record.path);
    if (skillMd?.kind === 'file') await load(record.path, skillMd.facts);
  }
}

/** Same resources set (every uri, digest and size) and the same frontmatter. */
export function sameEntry(a: SkillRecord, b: SkillRecord): boolean {
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
