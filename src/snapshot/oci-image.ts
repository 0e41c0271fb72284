// The verified view as an OCI image: one tar+gzip layer (layer-tar.ts) holding a snapshot's
// tree and its manifest, a standard image config and an image manifest per platform (linux/amd64,
// linux/arm64: the same layer, so every node's runtime pulls it), and the image index that names
// them, annotated with the skills it holds. Nothing in it depends on the clock or the machine:
// the same verified bytes make the same digests. Knows the image's shape; the bytes come from a
// snapshot (snapshotLayer) or a harness root (harness-layer.ts).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { IntegrityError } from '../errors.js';
import { READ_ONLY_DIRECTORY_MODE, READ_ONLY_FILE_MODE } from '../file-modes.js';
import { sha256Digest } from '../format/digest.js';
import { APPROVED_DIR, SKILLS_JSON } from '../fs/mount-layout.js';
import { documentText, type SkillsJsonServer } from '../fs/skills-json.js';
import { layerTar, reproducibleGzip, type LayerEntry } from './layer-tar.js';
import { blobOf, jsonBlob, MEDIA_TYPES, type Blob, type Descriptor } from './oci-layout.js';
import { MANIFEST_NAME, manifestText, type ManifestFile, type SnapshotManifest } from './snapshot-manifest.js';

export const PLATFORMS = [
  { architecture: 'amd64', os: 'linux' },
  { architecture: 'arm64', os: 'linux' },
] as const;

/** Our annotations (and config labels): the skills, the digests a reader checks the image by. */
export const ANNOTATIONS = {
  /** JSON: [{ label, path, name, uri, resourcesDigest }] per skill in the layer, sorted by path. */
  skills: 'io.github.skills-mount.skills',
  /** sha256 of the skills annotation's text: the set's digest. */
  skillsDigest: 'io.github.skills-mount.skills.digest',
  /** sha256 of the snapshot manifest's bytes: `verify ROOTFS --expect` takes it for the unpacked layer. */
  snapshotDigest: 'io.github.skills-mount.snapshot.digest',
  /** sha256 of the skills-lock.json that decided the view (--project). */
  lockfileDigest: 'io.github.skills-mount.lockfile.digest',
  /** mount, approved, or project. */
  view: 'io.github.skills-mount.view',
  /** The harness whose skills root the layer is laid out as (--for). */
  harness: 'io.github.skills-mount.harness',
} as const;

/** The config label holding the snapshot manifest when the layer must hold nothing of ours (--for). */
export const SNAPSHOT_MANIFEST_LABEL = 'io.github.skills-mount.snapshot';
/** The id and time an image's snapshot manifest carries: fixed, so they change no digest. */
export const IMAGE_MANIFEST_ID = 'oci-image';
export const IMAGE_CREATED_AT = new Date(0).toISOString();

/** One skill the layer holds. */
export interface ImageSkill {
  label: string;
  /** Its folder in the layer. */
  path: string;
  name: string;
  uri: string;
  resourcesDigest: string | null;
}

/** What goes into the layer, and what describes it. */
export interface LayerContent {
  entries: LayerEntry[];
  /** The snapshot manifest of the entries (id and time fixed), as text. */
  manifest: string;
  /** In the layer as `.snapshot.json`, or (a harness root) in the config's SNAPSHOT_MANIFEST_LABEL. */
  manifestInLayer: boolean;
  skills: ImageSkill[];
  view: 'mount' | 'approved' | 'project';
  harness?: string | undefined;
}

export interface OciImage {
  /** The image index: its digest is the image's, what a pod pins. */
  index: Descriptor;
  /** Every blob: the index, the manifests, the configs, the layer. */
  blobs: Blob[];
  layer: { digest: string; size: number; diffId: string; tarBytes: number };
  files: number;
  skills: number;
}

/** The image of `content`; `lockfileDigest` when a project's lock decided the view. */
export function ociImage(content: LayerContent, options: { lockfileDigest?: string | undefined } = {}): OciImage {
  const entries = content.manifestInLayer ? [...content.entries, { path: MANIFEST_NAME, mode: READ_ONLY_FILE_MODE, kind: 'file' as const, bytes: Buffer.from(content.manifest, 'utf8') }] : content.entries;
  const tar = layerTar(entries);
  const layer = blobOf(MEDIA_TYPES.layer, reproducibleGzip(tar));
  const diffId = sha256Digest(tar);
  const skillsText = JSON.stringify(content.skills);
  const labelsCount = new Set(content.skills.map((skill) => skill.label));
  const annotations: Record<string, string> = {
    'org.opencontainers.image.title': content.harness === undefined ? 'skills' : `skills for ${content.harness}`,
    'org.opencontainers.image.description': `${content.skills.length} verified skill${content.skills.length === 1 ? '' : 's'} from MCP server${labelsCount.size === 1 ? '' : 's'} ${[...labelsCount].sort().join(', ') || '(none)'}, written by skills-mount snapshot --oci`,
    [ANNOTATIONS.view]: content.view,
    ...(content.harness === undefined ? {} : { [ANNOTATIONS.harness]: content.harness }),
    [ANNOTATIONS.skills]: skillsText,
    [ANNOTATIONS.skillsDigest]: sha256Digest(Buffer.from(skillsText, 'utf8')),
    [ANNOTATIONS.snapshotDigest]: sha256Digest(Buffer.from(content.manifest, 'utf8')),
    ...(options.lockfileDigest === undefined ? {} : { [ANNOTATIONS.lockfileDigest]: options.lockfileDigest }),
  };
  const labels = content.manifestInLayer ? annotations : { ...annotations, [SNAPSHOT_MANIFEST_LABEL]: content.manifest };
  const blobs: Blob[] = [layer];
  const manifests: Descriptor[] = [];
  for (const platform of PLATFORMS) {
    // No `created`, no history times: the clock would change the digest.
    const config = jsonBlob(MEDIA_TYPES.config, { architecture: platform.architecture, os: platform.os, config: { Labels: labels }, rootfs: { type: 'layers', diff_ids: [diffId] } });
    const manifest = jsonBlob(MEDIA_TYPES.manifest, { schemaVersion: 2, mediaType: MEDIA_TYPES.manifest, config: config.descriptor, layers: [layer.descriptor], annotations });
    blobs.push(config, manifest);
    manifests.push({ ...manifest.descriptor, platform: { architecture: platform.architecture, os: platform.os } });
  }
  const index = jsonBlob(MEDIA_TYPES.index, { schemaVersion: 2, mediaType: MEDIA_TYPES.index, manifests, annotations });
  blobs.push(index);
  const files = entries.filter((entry) => entry.kind === 'file').length;
  return { index: index.descriptor, blobs, layer: { digest: layer.descriptor.digest, size: layer.descriptor.size, diffId, tarBytes: tar.length }, files, skills: content.skills.length };
}

/** The snapshot manifest an image carries: the snapshot's, with the fixed id and time. */
export function imageManifest(manifest: SnapshotManifest, changes: Partial<Pick<SnapshotManifest, 'directories' | 'files' | 'omitted' | 'view'>> = {}): string {
  return manifestText({ ...manifest, ...changes, id: IMAGE_MANIFEST_ID, createdAt: IMAGE_CREATED_AT });
}

/** A verified file of the snapshot in `dir`, read and re-hashed against its manifest entry. */
export async function snapshotFile(dir: string, file: { path: string; sha256: string }): Promise<Buffer> {
  const bytes = await readFile(path.join(dir, ...file.path.split('/')));
  if (sha256Digest(bytes) !== file.sha256) throw new IntegrityError(`${file.path}: the snapshot's bytes hash to ${sha256Digest(bytes)}, its manifest says ${file.sha256}`);
  return bytes;
}

/** The layer of a snapshot (`dir` and its manifest) as it is: its tree and `.snapshot.json`, files 0444, folders 0555. */
export async function snapshotLayer(dir: string, manifest: SnapshotManifest, view: LayerContent['view']): Promise<LayerContent> {
  const entries: LayerEntry[] = [{ path: '', mode: READ_ONLY_DIRECTORY_MODE, kind: 'directory' }];
  for (const directory of manifest.directories) entries.push({ path: directory, mode: READ_ONLY_DIRECTORY_MODE, kind: 'directory' });
  const byPath = new Map<string, Buffer>();
  const files: ManifestFile[] = [];
  for (const file of manifest.files) {
    let bytes = await snapshotFile(dir, file);
    if (file.path === `${APPROVED_DIR}/${SKILLS_JSON}`) bytes = portableApprovedCatalog(bytes);
    byPath.set(file.path, bytes);
    files.push(bytes.length === file.sizeBytes && sha256Digest(bytes) === file.sha256 ? file : { ...file, sizeBytes: bytes.length, sha256: sha256Digest(bytes) });
    entries.push({ path: file.path, mode: READ_ONLY_FILE_MODE, kind: 'file', bytes });
  }
  return { entries, manifest: imageManifest(manifest, { files }), manifestInLayer: true, skills: catalogSkills(manifest, byPath), view };
}

/**
 * `_approved/skills.json` with the approvals file (or lockfile) named by its file name only: its
 * absolute path names this machine's home or checkout, and would make every machine's image another.
 */
function portableApprovedCatalog(bytes: Buffer): Buffer {
  const document = JSON.parse(bytes.toString('utf8')) as { approvals?: { file?: unknown } };
  if (typeof document.approvals?.file !== 'string') return bytes;
  document.approvals.file = path.basename(document.approvals.file);
  return Buffer.from(documentText(document), 'utf8');
}

/** The skills skills.json lists whose SKILL.md the snapshot holds, by their folder in it. */
function catalogSkills(manifest: SnapshotManifest, files: ReadonlyMap<string, Buffer>): ImageSkill[] {
  const prefix = manifest.view === 'approved' ? `${APPROVED_DIR}/` : '';
  const catalog = files.get(`${prefix}${SKILLS_JSON}`);
  if (catalog === undefined) return [];
  const servers = (JSON.parse(catalog.toString('utf8')) as { servers?: SkillsJsonServer[] }).servers ?? [];
  const skills: ImageSkill[] = [];
  for (const server of servers) {
    for (const skill of server.skills) {
      // The approved view's index names its folders from the root already (`_approved/LABEL/...`).
      const folder = skill.path;
      if (!files.has(`${folder}/SKILL.md`)) continue;
      skills.push({ label: server.label, path: folder, name: skill.name, uri: skill.uri, resourcesDigest: skill.resourcesDigest });
    }
  }
  return skills.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
