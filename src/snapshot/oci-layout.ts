// An OCI image layout on disk (image-spec image-layout.md): `oci-layout`, `index.json`, and
// `blobs/sha256/<hex>`, each blob named by the sha256 of its bytes. Writes one image into a
// folder this user owns (the snapshot's destination rules, snapshot-location.ts): the blobs it
// lacks, then index.json in one rename, then the blobs nothing names any more; and reads one
// back, every blob re-hashed. Knows the layout's files and descriptors, not what an image holds.
import { mkdir, readFile, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { OWNER_WRITABLE_DIRECTORY_MODE, READ_ONLY_FILE_MODE } from '../file-modes.js';
import { sha256Digest } from '../format/digest.js';
import type { Log } from '../log.js';
import { ControlledPathError, currentUid, entryControl, modeText } from '../path-control.js';
import { errorCode, kindOf, lstatOrUndefined, writeAtomically } from '../private-files.js';
import { checkDestination } from './snapshot-location.js';

export const MEDIA_TYPES = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;
export const OCI_LAYOUT_FILE = 'oci-layout';
export const INDEX_JSON = 'index.json';
export const BLOBS_DIR = 'blobs/sha256';
/** The tag the layout's index.json gives the image (`oci:DEST:latest`; `oci:DEST` finds it too, as the only one). */
export const REF_NAME = 'latest';
const LAYOUT_VERSION = '1.0.0';
const TEMP_PREFIX = '.skills-mount-';

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { architecture: string; os: string };
  annotations?: Record<string, string>;
}

/** A blob and the descriptor that names it. */
export interface Blob {
  descriptor: Descriptor;
  bytes: Buffer;
}

/** The blob of `bytes`: its digest and size. */
export function blobOf(mediaType: string, bytes: Buffer): Blob {
  return { descriptor: { mediaType, digest: sha256Digest(bytes), size: bytes.length }, bytes };
}

/** A JSON document's blob: compact, keys in the order the value has them (so the same value, the same digest). */
export function jsonBlob(mediaType: string, value: unknown): Blob {
  return blobOf(mediaType, Buffer.from(JSON.stringify(value), 'utf8'));
}

/** index.json of a layout holding the image `top` names, tagged REF_NAME. */
export function layoutIndex(top: Descriptor): Buffer {
  const tagged: Descriptor = { mediaType: top.mediaType, digest: top.digest, size: top.size, annotations: { 'org.opencontainers.image.ref.name': REF_NAME } };
  return Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA_TYPES.index, manifests: [tagged] }), 'utf8');
}

/**
 * Refuses DEST unless it can be an image layout of this user's: the folders on the way and the
 * one it is in as for a snapshot's DEST; DEST itself missing, an empty folder, or an image layout
 * (it has `oci-layout`), owned by this user (or root) and closed to others.
 */
export async function checkLayoutDestination(dest: string, options: { uid?: number | undefined; allowSharedParent?: boolean; log?: Log } = {}): Promise<void> {
  const uid = 'uid' in options ? options.uid : currentUid();
  const parent = await lstatOrUndefined(path.dirname(dest));
  if (!parent?.isDirectory()) throw new ConfigError(`${dest}: its parent ${path.dirname(dest)} is not an existing directory`);
  await checkDestination(dest, uid, { allowSharedParent: options.allowSharedParent ?? false, log: options.log });
  const stats = await lstatOrUndefined(dest);
  if (stats === undefined) return;
  if (!stats.isDirectory()) throw new ConfigError(`${dest} exists and is ${kindOf(stats)}, not an OCI image layout; remove it or choose another DEST`);
  const finding = entryControl(dest, stats, uid);
  if (finding !== undefined) {
    const who = finding.reason === 'owner' ? `belongs to uid ${stats.uid}, not to you (uid ${uid})` : 'can be written by other users';
    throw new ControlledPathError(`snapshot: refusing DEST ${dest} (owner uid ${stats.uid}, mode ${modeText(stats.mode)}): it ${who}; they could change the image in it. Choose a DEST of your own.`, dest, stats.uid, stats.mode & 0o7777);
  }
  const names = await readdir(dest);
  if (names.length > 0 && !names.includes(OCI_LAYOUT_FILE)) {
    throw new ConfigError(`${dest} exists and is not an OCI image layout (no ${OCI_LAYOUT_FILE} in it, but ${names.length} other entr${names.length === 1 ? 'y' : 'ies'}); remove it or choose another DEST`);
  }
}

/**
 * Writes the image `top` names into the layout at DEST (made when missing; checked with
 * checkLayoutDestination first): each blob it lacks, `oci-layout`, then index.json in one
 * rename, so a reader sees the old image or the new one; then removes the blobs no longer named.
 */
export async function writeImageLayout(dest: string, top: Descriptor, blobs: readonly Blob[]): Promise<void> {
  const blobsDir = path.join(dest, BLOBS_DIR);
  await mkdir(blobsDir, { recursive: true, mode: OWNER_WRITABLE_DIRECTORY_MODE });
  const wanted = new Set<string>();
  for (const blob of blobs) {
    const hex = blob.descriptor.digest.slice('sha256:'.length);
    wanted.add(hex);
    const existing = await readFile(path.join(blobsDir, hex)).catch(() => undefined);
    // A blob already there is kept only when its bytes still hash to its name.
    if (existing !== undefined && sha256Digest(existing) === blob.descriptor.digest) continue;
    await writeAtomically(blobsDir, hex, blob.bytes, TEMP_PREFIX, { durable: false, mode: READ_ONLY_FILE_MODE });
  }
  await writeAtomically(dest, OCI_LAYOUT_FILE, `${JSON.stringify({ imageLayoutVersion: LAYOUT_VERSION })}\n`, TEMP_PREFIX, { mode: READ_ONLY_FILE_MODE });
  await writeAtomically(dest, INDEX_JSON, layoutIndex(top), TEMP_PREFIX, { mode: READ_ONLY_FILE_MODE });
  for (const name of await readdir(blobsDir)) {
    if (!wanted.has(name)) await unlink(path.join(blobsDir, name)).catch((error: unknown) => (errorCode(error) === 'ENOENT' ? undefined : Promise.reject(error)));
  }
}

/** A layout read back: its index.json and every blob, by digest, with the names whose bytes do not hash to them. */
export interface ReadLayout {
  layoutVersion: unknown;
  index: Buffer;
  blobs: Map<string, Buffer>;
  /** Blob files whose bytes hash to another digest than their name: `blobs/sha256/<hex>` and the digest found. */
  misnamed: Array<{ path: string; digest: string }>;
}

/** Whether DIR is an image layout (it holds `oci-layout`). */
export async function isImageLayout(dir: string): Promise<boolean> {
  return (await lstatOrUndefined(path.join(dir, OCI_LAYOUT_FILE)))?.isFile() === true;
}

/** Reads the layout at DIR, re-hashing every blob. Throws ConfigError when oci-layout or index.json cannot be read. */
export async function readImageLayout(dir: string): Promise<ReadLayout> {
  let layoutVersion: unknown;
  let index: Buffer;
  try {
    layoutVersion = (JSON.parse(await readFile(path.join(dir, OCI_LAYOUT_FILE), 'utf8')) as { imageLayoutVersion?: unknown }).imageLayoutVersion;
    index = await readFile(path.join(dir, INDEX_JSON));
  } catch (error) {
    throw new ConfigError(`${dir}: not a readable OCI image layout (${(error as Error).message})`);
  }
  const blobs = new Map<string, Buffer>();
  const misnamed: ReadLayout['misnamed'] = [];
  const blobsDir = path.join(dir, BLOBS_DIR);
  for (const name of await readdir(blobsDir).catch(() => [])) {
    if (name.startsWith(TEMP_PREFIX)) continue;
    const bytes = await readFile(path.join(blobsDir, name));
    const digest = sha256Digest(bytes);
    if (digest === `sha256:${name}`) blobs.set(digest, bytes);
    else misnamed.push({ path: `${BLOBS_DIR}/${name}`, digest });
  }
  return { layoutVersion, index, blobs, misnamed };
}
