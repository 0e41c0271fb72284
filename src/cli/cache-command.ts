// `skills-mount cache status|prune|clear [LABEL]`: the verified disk cache of every mount that
// used a cache root. status only reads; prune and clear take each mount subtree's lock, so they
// never race the daemon serving that mount (which prunes its own subtree at every start).
import { homedir } from 'node:os';
import path from 'node:path';
import { CacheLockedError, DiskCache, defaultCacheRoot, listSubtrees, readCacheStatus, type CacheStatus } from '../cache/disk-cache.js';
import type { CacheAction } from './command-line.js';
import { loadMountConfig } from './config.js';
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

function renderCacheStatus(root: string, subtrees: readonly CacheStatus[]): string {
  if (subtrees.length === 0) return `no disk cache under ${root}\n`;
  const lines = [`disk cache ${root}`];
  for (const subtree of subtrees) {
    const files = subtree.labels.reduce((sum, label) => sum + label.files, 0);
    const bytes = subtree.labels.reduce((sum, label) => sum + label.bytes, 0);
    const owner = subtree.lockHolderPid === undefined ? 'not in use' : `in use by pid ${subtree.lockHolderPid}`;
    lines.push(`  ${path.basename(subtree.subtree)}  ${files} files, ${formatBytes(bytes)}; ${owner}`);
    for (const label of subtree.labels) {
      const listing = label.listingSavedAt === undefined ? 'no saved listing' : `listing saved ${label.listingSavedAt}`;
      lines.push(`    ${label.label.padEnd(16)} ${String(label.files).padStart(6)} files ${formatBytes(label.bytes).padStart(10)}  ${listing}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
