// Laying skill entries out as one tree: which files each adds, and why a skill cannot be laid
// out at all. Pure; no I/O, no memory of earlier trees.
import { Namespace } from './namespace.js';
import type { SkillRecord } from './skill-record.js';
import { segmentsToUri } from './uri-path.js';

/** Records declined only because their files did not fit the tree they met: laid out again with the next tree. */
const declinedByLayout = new WeakSet<SkillRecord>();

/** Declines a record whose files cannot be laid out in the tree as it is (see layoutConflict). */
export function declineForLayout(record: SkillRecord, conflict: string): void {
  record.declined = `its files cannot be laid out as a tree: ${conflict}`;
  declinedByLayout.add(record);
}

/** Adds a served skill's files to the tree: its manifest's, or just its SKILL.md. */
export function addRecordToNamespace(namespace: Namespace, record: SkillRecord): void {
  if (record.declined) return;
  if (Array.isArray(record.files)) {
    // Manifest files are FileFacts already: the namespace keeps the same objects and path strings.
    for (const file of record.files) namespace.addFile(file.path, file);
    return;
  }
  namespace.addFile(record.path, { uri: record.uri, sizeBytes: undefined, digest: record.skillMdDigest, frontmatter: record.frontmatter, skillUri: record.uri });
}

/** Why a record's files cannot all be laid out in `namespace` (or among themselves), or undefined. */
export function layoutConflict(namespace: Namespace, record: SkillRecord): string | undefined {
  const files = Array.isArray(record.files) ? record.files : [{ path: record.path, uri: record.uri }];
  const own = new Set<string>();
  for (const file of files) own.add(file.path);
  for (const file of files) {
    for (let end = file.path.indexOf('/'); end !== -1; end = file.path.indexOf('/', end + 1)) {
      if (own.has(file.path.slice(0, end))) return `${file.uri} needs "${file.path.slice(0, end)}" to be a directory, but the same skill lists it as a file`;
    }
    const conflict = namespace.fileConflict(file.path, file.uri);
    if (conflict) return conflict;
  }
  return undefined;
}

/**
 * The tree of the given skills, shallow ones first (so a nested skill's entry meets the files
 * its encloser lists too). A skill whose files cannot all be laid out as a tree (a file `x`
 * and a file `x/y.md`; a skill whose directory is another's file) is declined whole, with the
 * reason: never half a skill. Checked before anything of it is added, so one pass suffices.
 * A skill declined by an earlier tree is laid out again: the file in its way may have gone.
 */
export function layOut(records: Iterable<SkillRecord>): Namespace {
  const namespace = new Namespace(segmentsToUri([]));
  for (const record of [...records].sort((a, b) => a.depth - b.depth)) {
    if (declinedByLayout.delete(record)) record.declined = undefined;
    if (record.declined) continue;
    const conflict = layoutConflict(namespace, record);
    if (conflict) declineForLayout(record, conflict);
    else addRecordToNamespace(namespace, record);
  }
  return namespace;
}
