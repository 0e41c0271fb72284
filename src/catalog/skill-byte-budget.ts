// The per-skill total-size limit for skills no manifest budgets (index generation, dynamic):
// what is actually retrieved is counted. Knows nothing of how bytes are fetched.
import { LRUCache } from 'lru-cache';
import { LimitExceededError } from '../errors.js';
import { MAX_BYTES_PER_SKILL } from '../protocol/skills-wire.js';
import { MAX_REMEMBERED_PATHS } from './catalog-options.js';
import type { CatalogState } from './catalog-state.js';
import type { ServerLog } from './server-log.js';
import { ancestryOf } from './skill-ancestry.js';
import { uriToSegments } from './uri-path.js';
import type { VerifiedContent } from './verified-content.js';

export class SkillByteBudget {
  /** Bytes fetched per skill that no manifest budgets (index generation, dynamic): skill URI -> file URI -> bytes. */
  private readonly retrievedBytes = new LRUCache<string, Map<string, number>>({ max: MAX_REMEMBERED_PATHS });

  constructor(
    private readonly state: CatalogState,
    private readonly log: ServerLog,
  ) {}

  /**
   * Counts fetched bytes against the per-skill total for skills no manifest budgets
   * (the spec: "applies the total-size limit to what it actually retrieves"); throws
   * LimitExceededError, keeping nothing, for the file that would take a skill over it.
   */
  charge(content: VerifiedContent): void {
    // Every entry has a manifest (budgeted from its listed sizes): no walk up the tree per file.
    if (!this.state.anyUnenumerated) return;
    const segments = uriToSegments(content.uri);
    if ('problem' in segments) return;
    const owner = ancestryOf(this.state, segments).unenumeratedOwner;
    if (!owner) return;
    const perFile = this.retrievedBytes.get(owner.uri) ?? new Map<string, number>();
    let totalBytes = content.bytes.length;
    for (const [uri, sizeBytes] of perFile) if (uri !== content.uri) totalBytes += sizeBytes;
    if (totalBytes > MAX_BYTES_PER_SKILL) {
      const label = this.state.label;
      const error = new LimitExceededError(
        `${label}: ${content.uri}: skill ${owner.uri} would reach ${totalBytes} retrieved bytes, over the per-skill limit of ${MAX_BYTES_PER_SKILL}`,
        { server: label, uri: content.uri },
      );
      this.log.remember(error.message);
      throw error;
    }
    perFile.set(content.uri, content.bytes.length);
    this.retrievedBytes.set(owner.uri, perFile);
  }
}
