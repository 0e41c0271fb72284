// A snapshot manifest for tests that write a snapshot by hand: `files` (path -> text) as the
// manifest lists them, each verified unless `unverified` says otherwise (skills.json is not).
import { sha256Digest } from '../../src/format/digest.js';
import { MANIFEST_FORMAT, type SnapshotManifest } from '../../src/snapshot/snapshot-manifest.js';

export function manifestOf(id: string, files: Record<string, string>, directories: string[], unverified: (file: string) => boolean = () => false): SnapshotManifest {
  return {
    format: MANIFEST_FORMAT,
    id,
    createdAt: new Date().toISOString(),
    view: 'mount',
    includeDynamic: false,
    servers: [{ label: 'docs', state: 'connected' }],
    omitted: [],
    directories,
    files: Object.entries(files).map(([file, text]) => ({ path: file, sizeBytes: Buffer.byteLength(text), sha256: sha256Digest(Buffer.from(text)), verified: !unverified(file) })),
  };
}
