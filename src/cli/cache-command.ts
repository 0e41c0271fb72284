// `skills-mount cache status|prune|clear [LABEL]`: the verified disk cache of every mount that
// used a cache root. status only reads; prune and clear take each mount subtree's lock, so they
// never race the daemon serving that mount (which prunes its own subtree at every start).
import { homedir } from 'node:os';
import path from 'node:path';
import {
  CacheLockedError,
  DEFAULT_UNUSED_GRACE_MS,
  DiskCache,
  defaultCacheRoot,
  listSubtrees,
  readCacheStatus,
  tidyCacheRoot,
  type CacheStatus,
} from '../cache/disk-cache.js';
import { AnchoredDirectory } from '../cache/anchored-directory.js';
import { escapeForLog } from '../format/escape.js';
import { isValidLabel } from '../labels.js';
import type { CacheAction } from './command-line.js';
import { loadMountConfig } from '../config/config.js';
import { formatBytes } from './status.js';

export interface CacheRequest {
  action: CacheAction;
  label: string | undefined;
  cacheDir: string | undefined;
  configPath: string | undefined;
  json: boolean;
}

/** The text to print and the exit status (1 when a subtree could not be changed). */
export async function runCacheCommand(request: CacheRequest): Promise<{ text: string; exitCode: number }> {
  const root = path.resolve(request.cacheDir ?? defaultCacheRoot(process.env, homedir()));
  const keys = await listSubtrees(root);
  if (request.action === 'status') {
    const subtrees = await Promise.all(keys.map((key) => readCacheStatus({ root, key })));
    return { text: request.json ? `${JSON.stringify({ root, subtrees }, null, 2)}\n` : renderCacheStatus(root, subtrees), exitCode: 0 };
  }
  const keep = request.action === 'prune' ? (await loadMountConfig({ configPath: request.configPath })).servers.map((server) => server.label) : undefined;
  const lines: string[] = [];
  let exitCode = 0;
  if (keep !== undefined && keys.length > 0) {
    // Mounts whose mountpoint is gone, unused for the grace period, go whole (as at a daemon's start).
    const gone = await removeGoneMounts(root, lines);
    keys.splice(0, keys.length, ...keys.filter((key) => !gone.has(key)));
  }
  for (const key of keys) {
    let cache: DiskCache;
    try {
      cache = await DiskCache.openSubtree({ root, key, limitBytes: Number.MAX_SAFE_INTEGER, log: (line) => lines.push(`${key}: ${line}`) });
    } catch (error) {
      if (!(error instanceof CacheLockedError)) throw error;
      lines.push(`${key}: in use by the daemon serving it (pid ${error.holderPid ?? 'unknown'}); ${request.action === 'prune' ? 'it prunes at its next start' : 'stop it first (skills-mount unmount MOUNTPOINT)'}`);
      if (request.action === 'clear') exitCode = 1;
      continue;
    }
    try {
      const removed = keep ? await cache.prune(keep) : await cache.clear(request.label);
      lines.push(`${key}: ${removed.length === 0 ? 'nothing to remove' : `removed ${removed.join(', ')}`}`);
    } finally {
      await cache.close();
    }
  }
  if (keys.length === 0) lines.push(`no disk cache under ${root}`);
  return { text: `${lines.join('\n')}\n`, exitCode };
}

/** The keys of the subtrees removed because their mountpoint is gone; a root that cannot be opened removes nothing (one line). */
async function removeGoneMounts(root: string, lines: string[]): Promise<Set<string>> {
  let held: AnchoredDirectory;
  try {
    held = await AnchoredDirectory.open(root);
  } catch (error) {
    lines.push(`disk cache ${root}: cannot open it (${(error as Error).message}); mounts whose mountpoint is gone are left`);
    return new Set();
  }
  try {
    const tidy = await tidyCacheRoot({ root: held, ownKey: undefined, ownBytes: 0, limitBytes: Infinity, graceMs: DEFAULT_UNUSED_GRACE_MS, isLabel: isValidLabel, log: (line) => lines.push(line) });
    return new Set(tidy.removed.map((entry) => entry.key));
  } finally {
    await held.close();
  }
}

function renderCacheStatus(root: string, subtrees: readonly CacheStatus[], nowMs = Date.now()): string {
  if (subtrees.length === 0) return `no disk cache under ${root}\n`;
  const total = subtrees.reduce((sum, subtree) => sum + subtree.bytes, 0);
  const lines = [`disk cache ${root}: ${subtrees.length} mount${subtrees.length === 1 ? '' : 's'}, ${formatBytes(total)}`];
  for (const subtree of subtrees) {
    const owner = subtree.lockHolderPid === undefined ? 'not running' : `running (pid ${subtree.lockHolderPid})`;
    const mountpoint =
      subtree.mountpoint === undefined ? 'mountpoint unknown (written by an older version)' : `${escapeForLog(subtree.mountpoint)}${subtree.mountpointExists === false ? ' (gone)' : ''}`;
    const used = subtree.lastUsedAt === undefined ? 'never used' : `last used ${subtree.lastUsedAt} (${ago(nowMs - Date.parse(subtree.lastUsedAt))})`;
    lines.push(`  ${subtree.key}  ${mountpoint}`);
    lines.push(`    ${subtree.files} files, ${formatBytes(subtree.bytes)}; ${used}; ${owner}`);
    for (const label of subtree.labels) {
      const listing = label.listingSavedAt === undefined ? 'no saved listing' : `listing saved ${label.listingSavedAt}`;
      lines.push(`    ${label.label.padEnd(16)} ${String(label.files).padStart(6)} files ${formatBytes(label.bytes).padStart(10)}  ${listing}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function ago(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.round(hours / 24)} days ago`;
}
