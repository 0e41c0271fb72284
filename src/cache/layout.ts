// The names of the disk cache on disk and the read-only walks that count what a subtree holds.
// Knows nothing of MCP or the mount.
//
// Layout (every directory 0700, every file 0600):
//   <root>/<mountKey>/.lock                          pid and host of the daemon serving this mount
//   <root>/<mountKey>/.mount.json                    { mountpoint, bytes }; its mtime is the last use (cache-root.ts)
//   <root>/<mountKey>/<label>/listing.json           { savedAt, document }: the last verified listing
//   <root>/<mountKey>/<label>/files/<hh>/<hex>       hex = sha256(uri NUL digest [NUL binding]), hh = hex[0..1]
//   .tmp-<pid>-<random> beside its target            a write in progress (removed on open after a crash)
//   <root>/.trash-<mountKey>-<random>                a subtree being removed (cache-root.ts)
// Labels never start with '.', so `.lock`, the record and temp names can never collide with them.
// No sidecar keeps the URI and digest of a file: a read names both and the bytes are checked
// against that digest, and status, eviction and pruning need only label and size. A sidecar
// would double the files and be one more thing a tamperer could edit.
import crypto, { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { errorCode, lstatOrUndefined } from '../private-files.js';

/** sha256 of a string, hex: node:crypto's one-shot hash (Node >= 20.12), a third of createHash's cost for a short name. */
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha256', text, 'hex') : (text) => crypto.createHash('sha256').update(text).digest('hex');

export const TEMP_PREFIX = '.tmp-';
export const LOCK_NAME = '.lock';
/** `<root>/<mountKey>/.mount.json`: which mountpoint the subtree serves and its bytes, for pruning and status. */
export const RECORD_NAME = '.mount.json';
/** `<root>/.trash-<mountKey>-<random>`: a subtree being removed (renamed away first, so its name is free at once). */
export const TRASH_PREFIX = '.trash-';
export const LISTING_NAME = 'listing.json';
export const FILES_DIR = 'files';
export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;
export const KEY_PATTERN = /^[0-9a-f]{64}$/;
/** What mountKey makes: a label-safe name and 12 hex digits. */
export const SUBTREE_KEY_PATTERN = /^[a-z0-9][a-z0-9_-]*-[0-9a-f]{12}$/;
export const BUCKET_PATTERN = /^[0-9a-f]{2}$/;

/**
 * The subtree name for a canonical mountpoint: its last segment made label-safe (for people
 * reading the cache) and 12 hex digits of its sha256 (so two mounts never share), e.g.
 * `/home/me/mcp-skills` -> `mcp-skills-3f2a9c1b0d4e`.
 */
export function mountKey(canonicalMountpoint: string): string {
  const readable = path
    .basename(canonicalMountpoint)
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
    .slice(0, 40)
    .replace(/[-_]+$/g, '');
  const hash = createHash('sha256').update(canonicalMountpoint).digest('hex').slice(0, 12);
  return `${readable || 'root'}-${hash}`;
}

/**
 * The file name (relative to a label's directory) that holds (uri, digest). `binding`: what else
 * the bytes were verified against before they were stored (a SKILL.md's listed frontmatter, as
 * the catalog spells it), so that a file is found only under what it agreed with.
 */
export function cacheFileName(uri: string, digest: string, binding?: string): string {
  return `${FILES_DIR}/${cacheFileNameIn(uri, digest, binding)}`;
}

/** The same name below the label's files/ directory: `<hh>/<hex>`. */
export function cacheFileNameIn(uri: string, digest: string, binding?: string): string {
  const hex = sha256Hex(binding === undefined ? `${uri}\0${digest}` : `${uri}\0${digest}\0${binding}`);
  return `${hex.slice(0, 2)}/${hex}`;
}

/** Files and bytes of one label's cached files, read without changing anything. */
export async function countLabelFiles(labelDir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  const filesDir = path.join(labelDir, FILES_DIR);
  for (const bucket of await readdirOrEmpty(filesDir)) {
    if (!BUCKET_PATTERN.test(bucket)) continue;
    for (const name of await readdirOrEmpty(path.join(filesDir, bucket))) {
      if (!KEY_PATTERN.test(name) || !name.startsWith(bucket)) continue;
      const stats = await lstatOrUndefined(path.join(filesDir, bucket, name));
      if (stats === undefined || !stats.isFile()) continue;
      files += 1;
      bytes += stats.size;
    }
  }
  return { files, bytes };
}

/** Label directories in a subtree (not the lock, the record, temp files or strangers). */
export async function labelsOnDisk(subtree: string, isLabel: (name: string) => boolean): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(subtree, { withFileTypes: true });
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
  return entries.filter((entry) => entry.isDirectory() && isLabel(entry.name)).map((entry) => entry.name).sort();
}

/** "350 B", "1.5 KiB", "12.0 MiB", "2.0 GiB": for log lines. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

export async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}
