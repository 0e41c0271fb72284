// What a mount's subtree holds, for `skills-mount cache status` and DiskCache.status(): per
// label files, bytes and when its listing was saved; the mountpoint it serves and who holds it.
// Reads only: nothing is created, changed or removed, and no lock is needed.
import path from 'node:path';
import { isValidLabel } from '../labels.js';
import { mountpointExists, readSubtreeFacts } from './cache-root.js';
import { LISTING_NAME, countLabelFiles, labelsOnDisk, mountKey } from './layout.js';
import { readSavedListing } from './saved-listing.js';

/** What one label's subtree holds. */
export interface LabelStatus {
  label: string;
  files: number;
  bytes: number;
  /** ISO time of the saved listing, when there is a readable one. */
  listingSavedAt: string | undefined;
}

/** What one mount's subtree holds, and whose it is. */
export interface CacheStatus {
  /** The mount's subtree: <root>/<mountKey>. */
  subtree: string;
  /** Its name under the root. */
  key: string;
  /** The mountpoint it serves, from its record; undefined for a subtree an older version wrote. */
  mountpoint: string | undefined;
  /** Whether that mountpoint still exists (undefined when it is not known). */
  mountpointExists: boolean | undefined;
  /** ISO time of its last use (its record's or its lock's mtime). */
  lastUsedAt: string | undefined;
  /** Pid of the live daemon holding the subtree's lock, if any. */
  lockHolderPid: number | undefined;
  /** Files and bytes of every label together. */
  files: number;
  bytes: number;
  /** Sorted by label. */
  labels: LabelStatus[];
}

/**
 * The status of a mount's subtree read without its lock (a daemon may be writing): nothing is
 * created, changed or removed. An absent subtree has no labels.
 */
export async function readCacheStatus(options: { root: string; mountpoint: string } | { root: string; key: string }): Promise<CacheStatus> {
  const key = 'key' in options ? options.key : mountKey(path.resolve(options.mountpoint));
  const subtree = path.join(path.resolve(options.root), key);
  return readSubtreeStatus(subtree, subtree, key);
}

/** Status of the subtree reached at `at` (a anchored directory's path, say) and shown as `subtree`. */
export async function readSubtreeStatus(at: string, subtree: string, key: string): Promise<CacheStatus> {
  const facts = await readSubtreeFacts(at, key, isValidLabel);
  const labels: LabelStatus[] = [];
  for (const label of await labelsOnDisk(at, isValidLabel)) {
    const { files, bytes } = await countLabelFiles(path.join(at, label));
    labels.push({ label, files, bytes, listingSavedAt: (await readSavedListing(path.join(at, label, LISTING_NAME))).listing?.savedAt });
  }
  const mountpoint = facts?.mountpoint;
  return {
    subtree,
    key,
    mountpoint,
    mountpointExists: mountpoint === undefined ? undefined : await mountpointExists(mountpoint),
    lastUsedAt: facts === undefined ? undefined : new Date(facts.lastUsedMs).toISOString(),
    lockHolderPid: facts?.holderPid,
    files: labels.reduce((sum, label) => sum + label.files, 0),
    bytes: labels.reduce((sum, label) => sum + label.bytes, 0),
    labels,
  };
}
