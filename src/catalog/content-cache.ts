// Verified bytes in memory, bounded by total size, keyed by (server, URI, digest):
// a new digest is a new key, so stale content can never answer for fresh.
import { LRUCache } from 'lru-cache';
import type { VerifiedContent } from './verified-content.js';

export interface ContentCacheOptions {
  /** Told of every lookup, found or not (metrics); never changes what is found. */
  onLookup?: ((hit: boolean) => void) | undefined;
}

export class ContentCache {
  private readonly cache: LRUCache<string, VerifiedContent>;
  private readonly onLookup: (hit: boolean) => void;

  constructor(maxBytes: number, options: ContentCacheOptions = {}) {
    this.onLookup = options.onLookup ?? (() => {});
    this.cache = new LRUCache<string, VerifiedContent>({
      maxSize: Math.max(1, maxBytes),
      // Empty files still take a slot; oversized ones are simply not kept.
      sizeCalculation: (content) => Math.max(1, content.bytes.length),
    });
  }

  get(server: string, uri: string, digest: string): VerifiedContent | undefined {
    const found = this.cache.get(key(server, uri, digest));
    this.onLookup(found !== undefined);
    return found;
  }

  set(server: string, content: VerifiedContent): void {
    this.cache.set(key(server, content.uri, content.digest), content);
  }

  get sizeBytes(): number {
    return this.cache.calculatedSize;
  }
}

function key(server: string, uri: string, digest: string): string {
  return `${server}\0${uri}\0${digest}`;
}
