// Serves a fixed in-memory FilesystemCore through the built FUSE edge (dist/), so e2e
// tests can mount it from a child process and inspect it with ordinary tools.
// usage: node fuse-fixture-mount.mjs MOUNTPOINT   (prints "ready", unmounts on SIGTERM)
// env: FIXTURE_AUTO_UNMOUNT=0 (leave a stale mount when killed), FIXTURE_NATURAL_EXIT=1
//      (after unmounting, wait for the event loop to drain instead of exiting),
//      FIXTURE_OPERATION_TIMEOUT_MS (the edge's per-operation deadline, default 20000).

import { pathToFileURL } from 'node:url';
import { IntegrityError, IsADirectoryError, NoAttributeError, NotADirectoryError, NotFoundError } from '../../dist/errors.js';
import { mountFilesystem } from '../../dist/fuse/mount.js';

export const MTIME_MS = Date.UTC(2025, 0, 2, 3, 4, 5);
export const SKILL_MD = Buffer.from('---\nname: skill-a\ndescription: A fixture skill.\n---\n\n# Skill A\n\nHello, kernel.\n');
export const BIG_BIN = Buffer.from(Array.from({ length: 1024 * 1024 }, (_, i) => (i * 7 + (i >> 11)) % 251));
export const LONG_XATTR = Buffer.from('x'.repeat(300));

/** path -> node; inodes are fixed so the test can check they reach st_ino. */
export const TREE = new Map([
  ['/', { kind: 'directory', inode: 1, children: ['skill-a', 'big.bin', 'slow.txt'] }],
  ['/skill-a', { kind: 'directory', inode: 2, children: ['SKILL.md', 'bad.bin', 'weird.txt'] }],
  [
    '/skill-a/SKILL.md',
    {
      kind: 'file',
      inode: 1001,
      bytes: SKILL_MD,
      xattrs: { 'user.skill.uri': Buffer.from('skill://fixture/skill-a/SKILL.md'), 'user.skill.long': LONG_XATTR },
    },
  ],
  [
    '/skill-a/bad.bin',
    {
      kind: 'file',
      inode: 1002,
      bytes: Buffer.alloc(64, 1),
      readError: () => new IntegrityError('digest mismatch', { server: 'fixture', uri: 'skill://fixture/skill-a/bad.bin' }),
    },
  ],
  ['/skill-a/weird.txt', { kind: 'file', inode: 1003, bytes: Buffer.from('weird'), readError: () => new TypeError('boom in core') }],
  ['/big.bin', { kind: 'file', inode: 1004, bytes: BIG_BIN }],
  ['/slow.txt', { kind: 'file', inode: 1005, bytes: Buffer.from('slow'), hangOpen: true }],
]);

/** A FilesystemCore over TREE. */
export function createFixtureCore() {
  const handles = new Map();
  let nextHandle = 1;
  const node = (path) => {
    const found = TREE.get(path);
    if (!found) throw new NotFoundError(`no such node: ${path}`);
    return found;
  };
  return {
    async getattr(path) {
      const n = node(path);
      return { kind: n.kind, sizeBytes: n.bytes?.length ?? 0, mtimeMs: MTIME_MS, inode: n.inode };
    },
    async readdir(path) {
      const n = node(path);
      if (n.kind !== 'directory') throw new NotADirectoryError(path);
      return [...n.children];
    },
    async open(path) {
      const n = node(path);
      if (n.kind !== 'file') throw new IsADirectoryError(path);
      if (n.hangOpen) await new Promise(() => {});
      const handle = nextHandle++;
      handles.set(handle, n);
      return handle;
    },
    fgetattr(handle) {
      const n = handles.get(handle);
      if (!n) throw new Error(`bad handle ${handle}`);
      return { kind: n.kind, sizeBytes: n.bytes.length, mtimeMs: MTIME_MS, inode: n.inode };
    },
    read(handle, position, length) {
      const n = handles.get(handle);
      if (!n) throw new Error(`bad handle ${handle}`);
      if (n.readError) throw n.readError();
      return n.bytes.subarray(position, position + length);
    },
    // Whole bytes for the files that read without error, as the real core has them: on libfuse3
    // their reads are answered by the addon (the sanitizer pass runs through this fixture).
    bytesOf(handle) {
      const n = handles.get(handle);
      return n && !n.readError ? n.bytes : undefined;
    },
    release(handle) {
      handles.delete(handle);
    },
    async listxattr(path) {
      return Object.keys(node(path).xattrs ?? {});
    },
    async getxattr(path, name) {
      const value = node(path).xattrs?.[name];
      if (!value) throw new NoAttributeError(`${path} has no ${name}`);
      return value;
    },
  };
}

async function main() {
  const mountpoint = process.argv[2];
  if (!mountpoint) throw new Error('usage: fuse-fixture-mount.mjs MOUNTPOINT');
  const mounting = mountFilesystem(createFixtureCore(), mountpoint, {
    operationTimeoutMs: Number(process.env.FIXTURE_OPERATION_TIMEOUT_MS ?? 20_000),
    autoUnmount: process.env.FIXTURE_AUTO_UNMOUNT !== '0',
  });
  // Installed before "ready" is printed: the parent may signal the moment it reads it.
  process.once('SIGTERM', () => {
    const startedMs = performance.now();
    mounting
      .then((handle) => handle.unmount())
      .then(
        () => {
          process.stdout.write(`unmounted in ${Math.round(performance.now() - startedMs)} ms\n`);
          if (process.env.FIXTURE_NATURAL_EXIT !== '1') process.exit(0);
        },
        (error) => {
          process.stderr.write(`fixture: ${error.name}: ${error.message}\n`);
          process.exit(1);
        },
      );
  });
  const handle = await mounting;
  process.stdout.write(`ready ${handle.fuseOptions}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    process.stderr.write(`fixture: ${error.name}: ${error.message}\n`);
    process.exit(2);
  });
}
