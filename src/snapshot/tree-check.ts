// A tree against its snapshot manifest, wherever the tree is (a folder on disk, a layer unpacked
// in memory): each file re-hashed, and every file or folder that differs (bytes, size, mode), is
// missing, or is extra (a name the manifest does not list, anything but a file or a folder).
// What `verify` says of a snapshot and of an image's layer alike. Knows the manifest, no disk.
import { READ_ONLY_DIRECTORY_MODE, READ_ONLY_EXEC_MODE, READ_ONLY_FILE_MODE } from '../file-modes.js';
import { sha256Digest } from '../format/digest.js';
import { errorMessage } from '../private-files.js';
import { MANIFEST_NAME, type ManifestFile, type SnapshotManifest, type VerifyProblem } from './snapshot-manifest.js';

/** One name in a tree: a folder, a regular file, or anything else (described: "a symbolic link"). */
export type TreeNode = { mode: number } & ({ kind: 'directory' } | { kind: 'file'; sizeBytes: number } | { kind: 'other'; description: string });

/** A tree to check, by paths relative to its root ('' is the root). */
export interface TreeSource {
  /** The names in a folder, with what each is; `visited` is called as the check comes to it (in walk order, depth first). */
  list(relative: string): Promise<Array<{ name: string; node: TreeNode; visited?: () => void }>>;
  read(relative: string): Promise<Buffer>;
  root(): Promise<TreeNode | undefined>;
}

export interface TreeCheckOptions {
  /** A file that starts with #! may be 0555 (a harness entry whose approval granted exec); else every file is 0444. */
  execAllowed?: boolean;
}

/** Every difference between the tree and `manifest`, sorted by path. */
export async function treeProblems(source: TreeSource, manifest: SnapshotManifest, options: TreeCheckOptions = {}): Promise<VerifyProblem[]> {
  const expectedFiles = new Map<string, ManifestFile>(manifest.files.map((file) => [file.path, file]));
  const expectedDirectories = new Set(manifest.directories);
  const seen = new Set<string>();
  const problems: VerifyProblem[] = [];
  const visit = async (relative: string): Promise<void> => {
    for (const { name, node, visited } of await source.list(relative)) {
      const child = relative === '' ? name : `${relative}/${name}`;
      if (child === MANIFEST_NAME) continue;
      visited?.();
      if (node.kind === 'directory') {
        if (!expectedDirectories.has(child)) problems.push({ path: child, kind: 'extra', detail: 'a directory the manifest does not list' });
        else {
          seen.add(child);
          if (node.mode !== READ_ONLY_DIRECTORY_MODE) problems.push({ path: child, kind: 'differs', detail: `mode ${octal(node.mode)}, expected ${octal(READ_ONLY_DIRECTORY_MODE)}` });
        }
        await visit(child);
        continue;
      }
      if (node.kind === 'other') {
        problems.push({ path: child, kind: 'extra', detail: `${node.description}; a snapshot holds only regular files and directories` });
        continue;
      }
      const expected = expectedFiles.get(child);
      if (expected === undefined) {
        problems.push({ path: child, kind: 'extra', detail: `a file the manifest does not list (${node.sizeBytes} bytes)` });
        continue;
      }
      seen.add(child);
      const details: string[] = [];
      try {
        const bytes = await source.read(child);
        const exec = options.execAllowed === true && node.mode === READ_ONLY_EXEC_MODE && bytes.subarray(0, 2).toString('latin1') === '#!';
        if (node.mode !== READ_ONLY_FILE_MODE && !exec) details.push(`mode ${octal(node.mode)}, expected ${octal(READ_ONLY_FILE_MODE)}`);
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
  const root = await source.root();
  if (root !== undefined && root.mode !== READ_ONLY_DIRECTORY_MODE) problems.push({ path: '', kind: 'differs', detail: `the snapshot's root has mode ${octal(root.mode)}, expected ${octal(READ_ONLY_DIRECTORY_MODE)}` });
  for (const file of manifest.files) if (!seen.has(file.path)) problems.push({ path: file.path, kind: 'missing', detail: `listed in the manifest (${file.sizeBytes} bytes)` });
  for (const directory of manifest.directories) if (!seen.has(directory)) problems.push({ path: directory, kind: 'missing', detail: 'a directory listed in the manifest' });
  return problems.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function octal(mode: number): string {
  return `0${(mode & 0o7777).toString(8)}`;
}
