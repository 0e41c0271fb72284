// `snapshot DEST --oci`: a snapshot the writer published (snapshot-writer.ts, in a private
// folder) made into an OCI image and written as an image layout at DEST. The snapshot is written
// first, the existing way, rather than streamed from the walk: a skill is kept whole or left out
// only once all its files verified, and the writer already decides that (and holds every file
// once, on disk, not in memory); its files are re-hashed as they go into the layer.
import { readFile } from 'node:fs/promises';
import type { Approval } from '../approvals/approval-store.js';
import { ConfigError } from '../errors.js';
import { sha256Digest } from '../format/digest.js';
import type { Harness } from '../link/harness-roots.js';
import type { Log } from '../log.js';
import { harnessLayer } from './harness-layer.js';
import { ociImage, snapshotLayer, type LayerContent, type OciImage } from './oci-image.js';
import { writeImageLayout } from './oci-layout.js';
import type { PublishedSnapshot } from './snapshot-store.js';

export interface OciSnapshotOptions {
  /** The snapshot to make the image of. */
  published: PublishedSnapshot | undefined;
  /** The image layout's folder, checked already (checkLayoutDestination). */
  dest: string;
  /** --for: the layer is this harness's skills root, made from `approvals`. */
  harness: Harness | undefined;
  approvals: () => readonly Approval[];
  /** The skills-lock.json that decided the view (--project): its digest is annotated. */
  lockfile: string | undefined;
  log: Log;
}

/** Writes the image of the snapshot at DEST; resolves it (its index's digest is the image's). */
export async function writeOciSnapshot(options: OciSnapshotOptions): Promise<OciImage> {
  const { published } = options;
  if (published?.manifest === undefined) throw new ConfigError('snapshot --oci: no snapshot was written, so there is no image to make');
  const view: LayerContent['view'] = options.lockfile !== undefined ? 'project' : published.manifest.view;
  const content =
    options.harness === undefined
      ? await snapshotLayer(published.dir, published.manifest, view)
      : await harnessLayer(published.dir, published.manifest, options.approvals(), options.harness, view === 'project' ? 'project' : 'approved', options.log);
  const lockfileDigest = options.lockfile === undefined ? undefined : sha256Digest(await readFile(options.lockfile));
  const image = ociImage(content, { lockfileDigest });
  await writeImageLayout(options.dest, image.index, image.blobs);
  return image;
}
