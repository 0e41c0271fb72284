// Where one server's verified bytes are kept and found again: the shared content cache, and
// the version last fetched of each file no listing digest vouches for. Fetches nothing.
import { LRUCache } from 'lru-cache';
import { MAX_REMEMBERED_PATHS } from './catalog-options.js';
import type { ContentCache } from './content-cache.js';
import type { VerifiedContent } from './verified-content.js';

/** A version of a file seen in fetched bytes, not vouched for by any listing. */
export interface ObservedVersion {
  digest: string;
  sizeBytes: number;
  atMs: number;
}

export class ContentStore {
  private readonly unverifiedVersions = new LRUCache<string, ObservedVersion>({ max: MAX_REMEMBERED_PATHS });

  constructor(
    private readonly label: string,
    private readonly cache: ContentCache,
    private readonly options: { unverifiedTtlMs: number; now: () => number },
  ) {}

  /** The cached bytes of this version of the file, if any. */
  get(uri: string, digest: string): VerifiedContent | undefined {
    return this.cache.get(this.label, uri, digest);
  }

  /** Keeps verified content; every byte the catalog serves was put here. */
  put(content: VerifiedContent): void {
    this.cache.set(this.label, content);
  }

  /** Notes `content` as the current version of the file at `uri` (stat and open then agree on one version). */
  noteVersion(uri: string, content: VerifiedContent): void {
    this.unverifiedVersions.set(uri, { digest: content.digest, sizeBytes: content.bytes.length, atMs: this.options.now() });
  }

  /** The version last noted for the file, while it still stands for the current one. */
  freshUnverified(uri: string): ObservedVersion | undefined {
    const observed = this.unverifiedVersions.get(uri);
    return observed && this.options.now() - observed.atMs < this.options.unverifiedTtlMs ? observed : undefined;
  }

  /** The server said the file changed: the version noted for it no longer stands. */
  forgetVersion(uri: string): void {
    this.unverifiedVersions.delete(uri);
  }
}
