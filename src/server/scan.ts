// Walks the served directory into a plain description of its directories and regular
// files (with stat versions). Decides nothing about skills; follows no directory links.
import type { Dirent } from 'node:fs';
import { openWithinRoot } from './confined-open.js';
import { closeFd, lstatBig, readdirEntries, realpathNative, statBig } from './fs-calls.js';
import { join } from 'node:path';
import { createLimiter } from '../concurrency.js';
import { isWithin, versionKey } from './safe-read.js';

export interface ScannedFile {
  /** File name (last segment). */
  name: string;
  /** Path relative to the root, `/`-separated. */
  rel: string;
  /** Absolute path to open (for a followed link, the link itself; reads re-resolve it). */
  path: string;
  size: number;
  version: string;
}

export interface ScannedDir {
  rel: string;
  path: string;
  subdirs: string[];
  files: ScannedFile[];
}

export interface ScanWarning {
  rel: string;
  message: string;
}

export interface ScanResult {
  dirs: Map<string, ScannedDir>;
  warnings: ScanWarning[];
}

const fsLimit = createLimiter(64);

/**
 * Scans `realRoot` (a real path). Symlinks to regular files inside the root are followed;
 * links leading outside it, links to directories (cycles) and non-regular files are
 * reported as warnings and left out.
 */
export async function scanDirectory(realRoot: string): Promise<ScanResult> {
  const dirs = new Map<string, ScannedDir>();
  const warnings: ScanWarning[] = [];

  const visit = async (rel: string, path: string): Promise<void> => {
    const dir: ScannedDir = { rel, path, subdirs: [], files: [] };
    dirs.set(rel, dir);
    let entries: Dirent[];
    try {
      entries = await fsLimit(() => readdirEntries(path));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') warnings.push({ rel, message: `cannot list directory (${code ?? String(error)})` });
      return;
    }
    const children: Array<Promise<void>> = [];
    for (const entry of entries) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const childPath = join(path, entry.name);
      if (entry.name.includes('\uFFFD')) {
        warnings.push({ rel: childRel, message: 'name is not valid UTF-8; not served' });
      } else if (entry.isDirectory()) {
        dir.subdirs.push(entry.name);
        children.push(visit(childRel, childPath));
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        children.push(
          fileOf(entry, childRel, childPath, realRoot).then((result) => {
            if (result === undefined) return;
            if ('message' in result) warnings.push(result);
            else dir.files.push(result);
          }),
        );
      } else {
        warnings.push({ rel: childRel, message: 'not a regular file; not served' });
      }
    }
    await Promise.all(children);
  };

  await visit('', realRoot);
  return { dirs, warnings };
}

async function fileOf(entry: Dirent, rel: string, path: string, realRoot: string): Promise<ScannedFile | ScanWarning | undefined> {
  try {
    if (entry.isSymbolicLink()) {
      const target = await fsLimit(() => realpathNative(path)).catch(() => undefined);
      if (target === undefined) return { rel, message: 'broken symlink; not served' };
      if (!isWithin(target, realRoot)) return { rel, message: 'symlink leads outside the served directory; refused' };
      const targetStat = await fsLimit(() => statBig(target));
      if (targetStat.isDirectory()) return { rel, message: 'symlink to a directory; not followed' };
      if (!targetStat.isFile()) return { rel, message: 'symlink to a non-regular file; refused' };
      // Followed the way reads follow it (openWithinRoot), so what is listed can be read.
      const opened = await fsLimit(() => openWithinRoot(realRoot, rel)).catch((error: unknown) => error as Error);
      if (opened instanceof Error) return { rel, message: `symlink cannot be followed within the served directory (${opened.message}); refused` };
      closeFd(opened.fd);
      return { name: entry.name, rel, path, size: Number(opened.stat.size), version: versionKey(opened.realPath, opened.stat) };
    }
    const fileStat = await fsLimit(() => lstatBig(path));
    if (!fileStat.isFile()) return undefined; // replaced since readdir: the watcher will rescan
    return { name: entry.name, rel, path, size: Number(fileStat.size), version: versionKey(path, fileStat) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Vanished between readdir and stat: the watcher will rescan.
    if (code === 'ENOENT') return undefined;
    return { rel, message: `cannot stat (${code ?? String(error)})` };
  }
}
