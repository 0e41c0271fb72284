// `skills-mount verify DEST` for an OCI image layout (`snapshot --oci` wrote it, or `skopeo copy`
// pulled it): every blob re-hashed against its name, the chain index.json -> image index ->
// manifests -> config and layer checked (digests, sizes, media types, platforms, diff_ids), the
// layer unpacked in memory and its files checked against its snapshot manifest (in the layer, or
// for a harness root in the config). `--expect` names the image index's digest. Knows the image's
// shape (oci-image.ts) and the layout's files (oci-layout.ts).
import path from 'node:path';
import { sha256Digest } from '../format/digest.js';
import { errorMessage } from '../private-files.js';
import { gunzipLayer, readLayerTar, type ReadEntry } from './layer-tar.js';
import { ANNOTATIONS, SNAPSHOT_MANIFEST_LABEL } from './oci-image.js';
import { MEDIA_TYPES, readImageLayout, type Descriptor, type ReadLayout } from './oci-layout.js';
import { MANIFEST_NAME, parseManifest, type SnapshotManifest, type VerifyProblem } from './snapshot-manifest.js';
import type { VerifyReport } from './snapshot-verify.js';
import { treeProblems, type TreeNode, type TreeSource } from './tree-check.js';

/** The most bytes a layer may unpack to in memory. */
const MAX_LAYER_BYTES = 2 * 1024 * 1024 * 1024;

interface ImageManifestDoc {
  mediaType?: string;
  config?: Descriptor;
  layers?: Descriptor[];
  annotations?: Record<string, string>;
}

interface ConfigDoc {
  architecture?: string;
  os?: string;
  config?: { Labels?: Record<string, string> };
  rootfs?: { type?: string; diff_ids?: string[] };
}

/** Checks the image layout at `dir`; `expectDigest`: what the image index must hash to. */
export async function verifyImageLayout(dir: string, options: { expectDigest?: string | undefined } = {}): Promise<VerifyReport> {
  const absolute = path.resolve(dir);
  const layout = await readImageLayout(absolute);
  const problems: VerifyProblem[] = [];
  for (const blob of layout.misnamed) problems.push({ path: blob.path, kind: 'differs', detail: `hashes to ${blob.digest}, not the digest it is named by` });
  if (layout.layoutVersion !== '1.0.0') problems.push({ path: 'oci-layout', kind: 'differs', detail: `imageLayoutVersion ${JSON.stringify(layout.layoutVersion)}, expected "1.0.0"` });
  const report: VerifyReport = {
    dest: dir,
    given: 'oci-layout',
    dir: absolute,
    id: null,
    manifestDigest: null,
    expectedDigest: options.expectDigest ?? null,
    files: 0,
    bytes: 0,
    problems,
    controlledByOthers: [],
    againstServer: null,
    image: null,
  };
  const top = json<{ manifests?: Descriptor[] }>(layout.index, 'index.json', problems);
  const entries = top?.manifests ?? [];
  if (top !== undefined && entries.length !== 1) problems.push({ path: 'index.json', kind: 'differs', detail: `it names ${entries.length} images, expected one` });
  const image = entries[0];
  if (image === undefined) return report;
  if (options.expectDigest !== undefined && image.digest !== options.expectDigest) {
    problems.push({ path: 'index.json', kind: 'differs', detail: `it names the image ${image.digest}, not the ${options.expectDigest} --expect says: not the image you expect` });
  }
  // The image: an index of platform manifests (what snapshot --oci writes), or one manifest (a single platform pulled).
  const manifests: Array<{ descriptor: Descriptor; where: string }> = [];
  const imageBytes = blob(layout, image, 'index.json', problems);
  if (imageBytes === undefined) return report;
  if (image.mediaType === MEDIA_TYPES.index) {
    const index = json<{ manifests?: Descriptor[] }>(imageBytes, image.digest, problems);
    for (const descriptor of index?.manifests ?? []) manifests.push({ descriptor, where: `${image.digest} ${descriptor.platform ? `${descriptor.platform.os}/${descriptor.platform.architecture}` : descriptor.digest}` });
    if (manifests.length === 0) problems.push({ path: image.digest, kind: 'missing', detail: 'the image index names no manifest' });
  } else if (image.mediaType === MEDIA_TYPES.manifest) manifests.push({ descriptor: image, where: image.digest });
  else problems.push({ path: 'index.json', kind: 'differs', detail: `the image is a ${image.mediaType}, not an image index or manifest` });

  const layers = new Map<string, { tar: Buffer | undefined; labels: Record<string, string>; annotations: Record<string, string>; where: string }>();
  const platforms: string[] = [];
  for (const { descriptor, where } of manifests) {
    const bytes = blob(layout, descriptor, where, problems);
    const manifest = bytes && json<ImageManifestDoc>(bytes, where, problems);
    if (manifest === undefined) continue;
    const config = manifest.config && blob(layout, manifest.config, `${where} config`, problems);
    const configDoc = config && json<ConfigDoc>(config, `${where} config`, problems);
    if (configDoc === undefined) continue;
    platforms.push(`${configDoc.os}/${configDoc.architecture}`);
    if (descriptor.platform && (descriptor.platform.os !== configDoc.os || descriptor.platform.architecture !== configDoc.architecture)) {
      problems.push({ path: where, kind: 'differs', detail: `the index says ${descriptor.platform.os}/${descriptor.platform.architecture}, its config ${configDoc.os}/${configDoc.architecture}` });
    }
    const layerList = manifest.layers ?? [];
    const diffIds = configDoc.rootfs?.diff_ids ?? [];
    if (layerList.length !== 1 || diffIds.length !== 1) {
      problems.push({ path: where, kind: 'differs', detail: `${layerList.length} layers and ${diffIds.length} diff_ids, expected one of each` });
      continue;
    }
    const layer = layerList[0]!;
    if (layer.mediaType !== MEDIA_TYPES.layer) problems.push({ path: `${where} layer`, kind: 'differs', detail: `media type ${layer.mediaType}, expected ${MEDIA_TYPES.layer}` });
    if (layers.has(layer.digest)) continue;
    const gzipped = blob(layout, layer, `${where} layer`, problems);
    let tar: Buffer | undefined;
    if (gzipped !== undefined) {
      try {
        tar = gunzipLayer(gzipped, MAX_LAYER_BYTES);
        if (sha256Digest(tar) !== diffIds[0]) problems.push({ path: `${where} layer`, kind: 'differs', detail: `unpacked, it hashes to ${sha256Digest(tar)}, the config's diff_id is ${diffIds[0]}` });
      } catch (error) {
        problems.push({ path: `${where} layer`, kind: 'differs', detail: errorMessage(error) });
      }
    }
    layers.set(layer.digest, { tar, labels: configDoc.config?.Labels ?? {}, annotations: manifest.annotations ?? {}, where: `${where} layer` });
  }
  if (layers.size > 1) problems.push({ path: image.digest, kind: 'differs', detail: `its platforms name ${layers.size} different layers; snapshot --oci gives them one` });
  for (const [digest, layer] of layers) {
    if (layer.tar === undefined) continue;
    const checked = await checkLayer(layer.tar, layer.labels, layer.annotations, layer.where, problems);
    if (checked === undefined) continue;
    report.manifestDigest = checked.manifestDigest;
    report.id = checked.manifest.id;
    report.files = checked.manifest.files.length;
    report.bytes = checked.manifest.files.reduce((sum, file) => sum + file.sizeBytes, 0);
    report.image = { indexDigest: image.digest, layerDigest: digest, platforms, harness: layer.annotations[ANNOTATIONS.harness] ?? null };
  }
  report.image ??= { indexDigest: image.digest, layerDigest: null, platforms, harness: null };
  return report;
}

/** The layer's files against its snapshot manifest; undefined when the manifest cannot be had. */
async function checkLayer(tar: Buffer, labels: Record<string, string>, annotations: Record<string, string>, where: string, problems: VerifyProblem[]): Promise<{ manifest: SnapshotManifest; manifestDigest: string } | undefined> {
  let entries: ReadEntry[];
  try {
    entries = readLayerTar(tar);
  } catch (error) {
    problems.push({ path: where, kind: 'differs', detail: errorMessage(error) });
    return undefined;
  }
  const byPath = new Map<string, ReadEntry>();
  for (const entry of entries) {
    if (byPath.has(entry.path)) problems.push({ path: entry.path || '.', kind: 'extra', detail: 'the layer holds this path twice' });
    byPath.set(entry.path, entry);
  }
  const inLayer = byPath.get(MANIFEST_NAME);
  const text = inLayer?.kind === 'file' ? inLayer.bytes.toString('utf8') : labels[SNAPSHOT_MANIFEST_LABEL];
  if (text === undefined) {
    problems.push({ path: MANIFEST_NAME, kind: 'missing', detail: `neither the layer nor the config (label ${SNAPSHOT_MANIFEST_LABEL}) holds a snapshot manifest` });
    return undefined;
  }
  const manifestDigest = sha256Digest(Buffer.from(text, 'utf8'));
  const annotated = annotations[ANNOTATIONS.snapshotDigest];
  if (annotated !== undefined && annotated !== manifestDigest) problems.push({ path: MANIFEST_NAME, kind: 'differs', detail: `hashes to ${manifestDigest}, the image's annotation says ${annotated}` });
  let manifest: SnapshotManifest;
  try {
    manifest = parseManifest(text, MANIFEST_NAME);
  } catch (error) {
    problems.push({ path: MANIFEST_NAME, kind: 'differs', detail: errorMessage(error) });
    return undefined;
  }
  problems.push(...(await treeProblems(memoryTree(byPath), manifest, { execAllowed: annotations[ANNOTATIONS.harness] !== undefined })));
  return { manifest, manifestDigest };
}

/** A layer's entries as a tree to check. */
function memoryTree(byPath: ReadonlyMap<string, ReadEntry>): TreeSource {
  const children = new Map<string, Array<{ name: string; node: TreeNode }>>();
  for (const entry of byPath.values()) {
    if (entry.path === '') continue;
    const cut = entry.path.lastIndexOf('/');
    const parent = cut < 0 ? '' : entry.path.slice(0, cut);
    const node: TreeNode = entry.kind === 'file' ? { kind: 'file', mode: entry.mode, sizeBytes: entry.bytes.length } : entry.kind === 'directory' ? { kind: 'directory', mode: entry.mode } : { kind: 'other', mode: entry.mode, description: `a tar entry of type ${JSON.stringify(entry.type)}` };
    const list = children.get(parent) ?? [];
    list.push({ name: entry.path.slice(cut + 1), node });
    children.set(parent, list);
  }
  return {
    list: async (relative) => children.get(relative) ?? [],
    async read(relative) {
      const entry = byPath.get(relative);
      if (entry?.kind !== 'file') throw new Error('not a file in the layer');
      return entry.bytes;
    },
    async root() {
      const root = byPath.get('');
      return root && { kind: 'directory', mode: root.mode };
    },
  };
}

/** The blob a descriptor names, its size checked; undefined (and a problem) when absent or of another size. */
function blob(layout: ReadLayout, descriptor: Descriptor, where: string, problems: VerifyProblem[]): Buffer | undefined {
  const bytes = layout.blobs.get(descriptor.digest);
  if (bytes === undefined) {
    problems.push({ path: where, kind: 'missing', detail: `the blob ${descriptor.digest} is not in the layout (or does not hash to its name)` });
    return undefined;
  }
  if (bytes.length !== descriptor.size) problems.push({ path: where, kind: 'differs', detail: `the blob ${descriptor.digest} is ${bytes.length} bytes, its descriptor says ${descriptor.size}` });
  return bytes;
}

function json<T>(bytes: Buffer, where: string, problems: VerifyProblem[]): T | undefined {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    if (typeof value === 'object' && value !== null) return value as T;
  } catch {
    // named below
  }
  problems.push({ path: where, kind: 'differs', detail: 'not a JSON object' });
  return undefined;
}
