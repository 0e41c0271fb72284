// The layer of `snapshot --oci --for HARNESS`: an approved snapshot laid out as that harness's
// skills root, one entry per approved (or locked) skill at depth 1, each exactly what `link`
// writes (src/link/: the entry's name, its files, the SKILL.md frontmatter transform, the modes
// the grants allow), and nothing else: the snapshot manifest of these files goes in the image's
// config, not in the layer. Knows which snapshot file each approved file is; link knows the rest.
import type { Approval } from '../approvals/approval-store.js';
import { uriToSegments } from '../catalog/uri-path.js';
import { FrontmatterError } from '../format/frontmatter.js';
import { sha256Digest } from '../format/digest.js';
import { READ_ONLY_DIRECTORY_MODE } from '../file-modes.js';
import { APPROVED_DIR } from '../fs/mount-layout.js';
import type { Log } from '../log.js';
import { chooseNames, type NameRequest } from '../link/entry-names.js';
import { entryFileContent, entryFiles, entrySpec, type EntryFile } from '../link/entry-objects.js';
import type { Harness } from '../link/harness-roots.js';
import type { LayerEntry } from './layer-tar.js';
import { imageManifest, snapshotFile, type ImageSkill, type LayerContent } from './oci-image.js';
import type { ManifestFile, ManifestOmission, SnapshotManifest } from './snapshot-manifest.js';

/**
 * The entries of every approval in `approvals` (revoked ones aside) whose files the approved
 * snapshot in `dir` holds with the approved digests; one it does not hold whole (left out,
 * changed, not served) is named in the manifest's `omitted` and logged.
 */
export async function harnessLayer(dir: string, manifest: SnapshotManifest, approvals: readonly Approval[], harness: Harness, view: 'approved' | 'project', log: Log): Promise<LayerContent> {
  const held = new Map(manifest.files.map((file) => [file.path, file]));
  const omitted: ManifestOmission[] = [...manifest.omitted];
  const ready: Array<{ approval: Approval; files: Array<EntryFile & { source: ManifestFile }> }> = [];
  // In the order link names them: by label and URI.
  const holds = approvals.filter((approval) => approval.revokedAt === null).sort((a, b) => compare(keyOf(a), keyOf(b)));
  for (const approval of holds) {
    const files = entryFiles(approval);
    const skill = uriToSegments(approval.skillUri);
    const folder = 'problem' in skill ? undefined : [APPROVED_DIR, approval.label, ...skill.slice(0, -1)].join('/');
    const why = (reason: string): void => {
      omitted.push({ path: folder ?? `${APPROVED_DIR}/${approval.label}`, reason: `not in the ${harness.name} root: ${reason}` });
      log(`snapshot: ${approval.label}/${approval.name} is not in the ${harness.name} root: ${reason}`);
    };
    if ('problem' in files) {
      why(files.problem);
      continue;
    }
    if (folder === undefined) continue;
    const located = files.map((file) => ({ ...file, source: held.get(`${folder}/${file.relative}`) }));
    const absent = located.find((file) => file.source?.sha256 !== file.digest);
    // A skill the approved view does not show now (left out, changed, its server away) has no entry: never a part of one.
    if (absent !== undefined) {
      if (manifest.omitted.some((omission) => omission.path === folder)) continue;
      why(`the approved view does not hold ${absent.relative} as approved`);
      continue;
    }
    ready.push({ approval, files: located as Array<EntryFile & { source: ManifestFile }> });
  }
  // Nothing else is in an image's root: a name is taken only by another of these skills.
  const requests: NameRequest[] = ready.map(({ approval }) => ({ key: keyOf(approval), label: approval.label, name: approval.name }));
  const names = chooseNames(requests, new Map(), () => false);
  const entries: LayerEntry[] = [{ path: '', mode: READ_ONLY_DIRECTORY_MODE, kind: 'directory' }];
  const directories = new Set<string>();
  const written: ManifestFile[] = [];
  const skills: ImageSkill[] = [];
  for (const { approval, files } of ready) {
    const entryName = names.get(keyOf(approval))!.name;
    const spec = entrySpec(approval, entryName, files);
    const made: Array<{ path: string; bytes: Buffer; mode: number; verified: boolean }> = [];
    try {
      for (const file of files) {
        const { bytes, mode } = entryFileContent(spec, file, await snapshotFile(dir, file.source));
        made.push({ path: `${entryName}/${file.relative}`, bytes, mode, verified: file.relative !== 'SKILL.md' });
      }
    } catch (error) {
      if (!(error instanceof FrontmatterError)) throw error;
      omitted.push({ path: entryName, reason: `its entry cannot be written: ${error.message}` });
      log(`snapshot: ${approval.label}/${approval.name} is not in the ${harness.name} root: ${error.message}`);
      continue;
    }
    for (const file of made) {
      for (let cut = file.path.indexOf('/'); cut > 0; cut = file.path.indexOf('/', cut + 1)) directories.add(file.path.slice(0, cut));
      entries.push({ path: file.path, mode: file.mode, kind: 'file', bytes: file.bytes });
      written.push({ path: file.path, sizeBytes: file.bytes.length, sha256: sha256Digest(file.bytes), verified: file.verified });
    }
    skills.push({ label: approval.label, path: entryName, name: approval.name, uri: approval.skillUri, resourcesDigest: approval.resourcesDigest });
  }
  for (const directory of directories) entries.push({ path: directory, mode: READ_ONLY_DIRECTORY_MODE, kind: 'directory' });
  const text = imageManifest(manifest, {
    view: 'approved',
    directories: [...directories].sort(compare),
    files: written.sort((a, b) => compare(a.path, b.path)),
    omitted: omitted.sort((a, b) => compare(a.path, b.path)),
  });
  return { entries, manifest: text, manifestInLayer: false, skills: skills.sort((a, b) => compare(a.path, b.path)), view, harness: harness.name };
}

function keyOf(approval: Approval): string {
  return `${approval.label}\0${approval.skillUri}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
