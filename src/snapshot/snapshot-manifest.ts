// DEST/.snapshot.json: what one snapshot holds, file by file (path, size, sha256 of the bytes
// written), so `skills-mount verify` can re-hash it. Not skills.json: that is the mount's
// catalog of skills (server states, listing digests); this is the integrity record of the files
// on disk, skills.json among them. Knows the document's shape only.
import { ProtocolError } from '../errors.js';

export const MANIFEST_NAME = '.snapshot.json';
export const MANIFEST_FORMAT = 1;

export interface ManifestFile {
  /** Relative to the snapshot root, '/'-separated. */
  path: string;
  sizeBytes: number;
  /** sha256:<hex> of the bytes written. */
  sha256: string;
  /** False for files no listing digest vouches for ("dynamic" skills with --include-dynamic, generated documents). */
  verified: boolean;
}

export interface ManifestServer {
  label: string;
  /** As skills.json says (connected, degraded, failed, ...). */
  state: string;
  /** Why this server's part of the snapshot is incomplete, when it is (the run then exits 1). */
  failed?: string;
  /** Set when the server showed nothing this time: its files are the previous snapshot's, carried over unchanged. */
  keptFromPrevious?: true;
}

export interface ManifestOmission {
  /** The skill directory (or file outside any skill) left out, relative to the snapshot root. */
  path: string;
  reason: string;
}

export interface SnapshotManifest {
  format: typeof MANIFEST_FORMAT;
  id: string;
  createdAt: string;
  /** "mount": the labels and skills.json; "approved": only `_approved/`. */
  view: 'mount' | 'approved';
  includeDynamic: boolean;
  servers: ManifestServer[];
  omitted: ManifestOmission[];
  /** Every directory, relative to the root, sorted ('' is not listed). */
  directories: string[];
  /** Every file but this manifest, sorted by path. */
  files: ManifestFile[];
}

/** The manifest's text: one file per line, so a diff of two manifests reads well. */
export function manifestText(manifest: SnapshotManifest): string {
  const { files, directories, ...head } = manifest;
  const lines = [
    `{`,
    ...Object.entries(head).map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value)},`),
    `  "directories": [${directories.length === 0 ? '' : `\n${directories.map((dir) => `    ${JSON.stringify(dir)}`).join(',\n')}\n  `}],`,
    `  "files": [${files.length === 0 ? '' : `\n${files.map((file) => `    ${JSON.stringify(file)}`).join(',\n')}\n  `}]`,
    `}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** Parses a manifest read from disk; throws ProtocolError naming what is wrong. */
export function parseManifest(text: string, where: string): SnapshotManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ProtocolError(`${where}: not JSON (${(error as Error).message})`);
  }
  const fail = (what: string): never => {
    throw new ProtocolError(`${where}: ${what}`);
  };
  if (typeof value !== 'object' || value === null) return fail('not an object');
  const doc = value as Record<string, unknown>;
  if (doc.format !== MANIFEST_FORMAT) fail(`format ${JSON.stringify(doc.format)}, expected ${MANIFEST_FORMAT}`);
  if (typeof doc.id !== 'string' || typeof doc.createdAt !== 'string') fail('id and createdAt must be strings');
  if (doc.view !== 'mount' && doc.view !== 'approved') fail(`view ${JSON.stringify(doc.view)}`);
  if (!Array.isArray(doc.files) || !Array.isArray(doc.directories) || !Array.isArray(doc.servers) || !Array.isArray(doc.omitted)) fail('files, directories, servers and omitted must be arrays');
  for (const file of doc.files as unknown[]) {
    const f = file as Partial<ManifestFile> | null;
    if (typeof f?.path !== 'string' || !safeRelativePath(f.path) || typeof f.sizeBytes !== 'number' || typeof f.sha256 !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(f.sha256)) {
      fail(`a file entry is malformed: ${JSON.stringify(file)}`);
    }
  }
  for (const dir of doc.directories as unknown[]) {
    if (typeof dir !== 'string' || !safeRelativePath(dir)) fail(`a directory entry is malformed: ${JSON.stringify(dir)}`);
  }
  return doc as unknown as SnapshotManifest;
}

/** A relative path of plain names: no '', '.', '..', NUL or leading '/'. */
export function safeRelativePath(relative: string): boolean {
  return relative !== '' && relative.split('/').every(safeName);
}

/** One name a snapshot may hold. */
export function safeName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\0');
}

/** One difference `verify` finds between a snapshot and its manifest (or, with --against-server, the servers). */
export interface VerifyProblem {
  /** Relative to the snapshot root (a server's label for one not compared). */
  path: string;
  /** unchecked: what --against-server could not compare (a server not listed whole, or not configured). */
  kind: 'differs' | 'missing' | 'extra' | 'unchecked';
  detail: string;
  /** Set for what the servers list now (--against-server), as against the manifest. */
  against?: 'server';
}
