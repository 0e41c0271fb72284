// `skills-mount verify DEST`: re-hashes every file of the published snapshot against its
// manifest and names each file that differs (bytes, size, mode), is missing, or is extra (any
// name the manifest does not list, and anything that is not a plain file or directory).
import { ConfigError } from '../errors.js';
import { sha256Digest } from '../format/digest.js';
import { errorMessage, kindOf } from '../private-files.js';
import { nodeSnapshotFs, type SnapshotFs } from './snapshot-fs.js';
import { MANIFEST_NAME, parseManifest, type ManifestFile, type SnapshotManifest } from './snapshot-manifest.js';
import { DIRECTORY_MODE, FILE_MODE, resolvePublished } from './snapshot-store.js';

export interface VerifyProblem {
  /** Relative to the snapshot root. */
  path: string;
  kind: 'differs' | 'missing' | 'extra';
  detail: string;
}

export interface VerifyReport {
  dest: string;
  id: string;
  /** Files the manifest lists. */
  files: number;
  bytes: number;
  problems: VerifyProblem[];
}

/** Checks the snapshot DEST names; throws ConfigError when DEST is no snapshot at all. */
export async function verifySnapshot(dest: string, fs: SnapshotFs = nodeSnapshotFs): Promise<VerifyReport> {
  const published = await resolvePublished(dest, fs);
  if (published === undefined) throw new ConfigError(`${dest}: no snapshot there (it does not exist)`);
  const { id, dir } = published;
  if ((await fs.lstat(dir))?.isDirectory() !== true) {
    return { dest, id, files: 0, bytes: 0, problems: [{ path: '', kind: 'missing', detail: `${dest} points to ${dir}, which is not a directory` }] };
  }
  let manifest: SnapshotManifest;
  try {
    manifest = parseManifest((await fs.readFile(`${dir}/${MANIFEST_NAME}`)).toString('utf8'), MANIFEST_NAME);
  } catch (error) {
    return { dest, id, files: 0, bytes: 0, problems: [{ path: MANIFEST_NAME, kind: 'missing', detail: `the manifest cannot be read: ${errorMessage(error)}` }] };
  }
  const expectedFiles = new Map<string, ManifestFile>(manifest.files.map((file) => [file.path, file]));
  const expectedDirectories = new Set(manifest.directories);
  const problems: VerifyProblem[] = [];
  const seen = new Set<string>();

  const visit = async (relative: string): Promise<void> => {
    const absolute = relative === '' ? dir : `${dir}/${relative}`;
    for (const entry of await fs.readdir(absolute)) {
      const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (child === MANIFEST_NAME) continue;
      const stats = await fs.lstat(`${dir}/${child}`);
      if (stats === undefined) continue;
      if (stats.isDirectory()) {
        if (!expectedDirectories.has(child)) problems.push({ path: child, kind: 'extra', detail: 'a directory the manifest does not list' });
        else {
          seen.add(child);
          if ((stats.mode & 0o7777) !== DIRECTORY_MODE) problems.push({ path: child, kind: 'differs', detail: `mode ${octal(stats.mode)}, expected ${octal(DIRECTORY_MODE)}` });
        }
        await visit(child);
        continue;
      }
      const expected = expectedFiles.get(child);
      if (!stats.isFile()) {
        problems.push({ path: child, kind: 'extra', detail: `${kindOf(stats)}; a snapshot holds only regular files and directories` });
        continue;
      }
      if (expected === undefined) {
        problems.push({ path: child, kind: 'extra', detail: `a file the manifest does not list (${stats.size} bytes)` });
        continue;
      }
      seen.add(child);
      const details: string[] = [];
      if ((stats.mode & 0o7777) !== FILE_MODE) details.push(`mode ${octal(stats.mode)}, expected ${octal(FILE_MODE)}`);
      try {
        const bytes = await fs.readFile(`${dir}/${child}`);
        if (bytes.length !== expected.sizeBytes) details.push(`${bytes.length} bytes, expected ${expected.sizeBytes}`);
        const digest = sha256Digest(bytes);
        if (digest !== expected.sha256) details.push(`hashes to ${digest}, expected ${expected.sha256}`);
      } catch (error) {
        details.push(`cannot be read: ${errorMessage(error)}`);
      }
      if (details.length > 0) problems.push({ path: child, kind: 'differs', detail: details.join('; ') });
    }
  };
  await visit('');
  const rootStats = await fs.lstat(dir);
  if (rootStats && (rootStats.mode & 0o7777) !== DIRECTORY_MODE) problems.push({ path: '', kind: 'differs', detail: `the snapshot's root has mode ${octal(rootStats.mode)}, expected ${octal(DIRECTORY_MODE)}` });
  for (const file of manifest.files) if (!seen.has(file.path)) problems.push({ path: file.path, kind: 'missing', detail: `listed in the manifest (${file.sizeBytes} bytes)` });
  for (const directory of manifest.directories) if (!seen.has(directory)) problems.push({ path: directory, kind: 'missing', detail: 'a directory listed in the manifest' });
  problems.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { dest, id, files: manifest.files.length, bytes: manifest.files.reduce((sum, file) => sum + file.sizeBytes, 0), problems };
}

function octal(mode: number): string {
  return `0${(mode & 0o7777).toString(8)}`;
}
