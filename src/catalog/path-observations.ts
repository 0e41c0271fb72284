// What lookups and directory reads learned under the tree as it stands. Forgotten whenever the
// tree is replaced or the server announces a change, so no answer outlives what it was about.
import { LRUCache } from 'lru-cache';
import { MAX_REMEMBERED_PATHS } from './catalog-options.js';

/** One directory's last successful read, and the read in flight. */
export interface DirectoryReadState {
  atMs: number;
  pending?: Promise<void>;
}

export class PathObservations {
  /** Path -> when the server's "no such file or directory" stops standing. */
  readonly misses = new LRUCache<string, number>({ max: MAX_REMEMBERED_PATHS });
  /** Directory path -> its directory read. */
  readonly directoryReads = new Map<string, DirectoryReadState>();

  forget(): void {
    this.misses.clear();
    this.directoryReads.clear();
  }
}
