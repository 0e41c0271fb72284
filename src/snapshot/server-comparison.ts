// `verify --against-server`: a snapshot's manifest (and its skills.json) compared with what the
// servers list now, walked through the same core `snapshot` walks. Every file's digest and size,
// every file listed on one side only, every skill's listed fields; a server that cannot be listed
// whole, or that the snapshot holds and is not configured, is named as not compared. Pure: the
// caller walks the live view and reads the snapshot's documents.
import { APPROVED_DIR } from '../fs/mount-layout.js';
import type { SkillsJsonServer, SkillsJsonSkill } from '../fs/skills-json.js';
import { errorMessage } from '../private-files.js';
import type { SnapshotManifest, VerifyProblem } from './snapshot-manifest.js';
import type { WalkResult } from './view-walk.js';

/** A skills.json as the comparison reads it: servers and their skills. */
export interface CatalogDocument {
  servers: Array<Pick<SkillsJsonServer, 'label'> & { skills: SkillsJsonSkill[] }>;
}

/** A parsed skills.json as the comparison can read it (servers with labels, skills with paths); undefined for anything else. */
export function asCatalogDocument(value: unknown): CatalogDocument | undefined {
  const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;
  if (!isObject(value) || !Array.isArray(value.servers)) return undefined;
  for (const server of value.servers as unknown[]) {
    if (!isObject(server) || typeof server.label !== 'string' || !Array.isArray(server.skills)) return undefined;
    if (!(server.skills as unknown[]).every((skill) => isObject(skill) && typeof skill.path === 'string')) return undefined;
  }
  return value as unknown as CatalogDocument;
}

/** What the servers show now, walked in the snapshot's view. */
export interface LiveView {
  walk: WalkResult;
  /** Each configured server, and why its listing is not whole now (undefined: whole). */
  servers: Array<{ label: string; problem: string | undefined }>;
  /** The view's generated documents (skills.json) as the core renders them now, parsed; undefined when unreadable. */
  documents: Map<string, CatalogDocument | undefined>;
}

/** The snapshot's side: its manifest and its documents as read from disk. */
export interface SnapshotSide {
  manifest: SnapshotManifest;
  /** By path (skills.json, _approved/skills.json); undefined when it cannot be read as JSON. */
  documents: Map<string, CatalogDocument | undefined>;
}

export interface ServerComparison {
  problems: VerifyProblem[];
  /** The labels whose files were compared. */
  servers: string[];
  /** Labels the snapshot holds that --only left out: named, not compared, not a problem. */
  leftOut: string[];
  /** Manifest files compared with a listing: by digest and size, or (no digest on either side) by name. */
  filesCompared: number;
  digestsCompared: number;
}

/** The fields of a skills.json entry that come from the server's listing (states and collisions are the mount's). */
const LISTED_FIELDS = ['name', 'description', 'uri', 'digest', 'resourcesDigest'] as const;

/** Compares the snapshot with the live view; `leftOutByOnly`: labels the config has that --only left out. */
export function compareWithServers(snapshot: SnapshotSide, live: LiveView, leftOutByOnly: ReadonlySet<string>): ServerComparison {
  const { manifest } = snapshot;
  const problems: VerifyProblem[] = [];
  const problem = (path: string, kind: VerifyProblem['kind'], detail: string): void => {
    problems.push({ path, kind, detail, against: 'server' });
  };
  const labelOf = (path: string): string | undefined => {
    const segments = path.split('/');
    if (manifest.view === 'approved') return segments[0] === APPROVED_DIR && segments.length > 2 ? segments[1] : undefined;
    return segments.length > 1 ? segments[0] : undefined;
  };

  // Which labels are compared: configured, listed whole now, and held by the snapshot.
  const liveServers = new Map(live.servers.map((server) => [server.label, server.problem]));
  const held = new Set([...manifest.servers.map((server) => server.label), ...manifest.files.map((file) => labelOf(file.path)).filter((label): label is string => label !== undefined)]);
  const compared = new Set<string>();
  const leftOut: string[] = [];
  for (const label of [...held].sort()) {
    if (!liveServers.has(label)) {
      if (leftOutByOnly.has(label)) leftOut.push(label);
      else problem(label, 'unchecked', 'the snapshot holds this server, which is not configured here: its files were not compared');
      continue;
    }
    const why = liveServers.get(label);
    if (why !== undefined) problem(label, 'unchecked', `could not be listed whole now (${why}): its files were not compared`);
    else compared.add(label);
  }
  for (const label of [...liveServers.keys()].sort()) {
    if (!held.has(label)) problem(label, 'missing', 'a configured server the snapshot does not hold');
  }

  const omitted = manifest.omitted.map((omission) => omission.path);
  const insideOmitted = (path: string): boolean => omitted.some((owner) => path === owner || path.startsWith(`${owner}/`));
  const liveFiles = new Map(live.walk.files.filter((file) => compared.has(labelOf(file.path) ?? '')).map((file) => [file.path, file]));
  let filesCompared = 0;
  let digestsCompared = 0;
  for (const file of manifest.files) {
    if (!compared.has(labelOf(file.path) ?? '')) continue;
    const now = liveFiles.get(file.path);
    liveFiles.delete(file.path);
    if (now === undefined) {
      problem(file.path, 'extra', `the server does not list it now (the manifest says ${file.sha256}, ${file.sizeBytes} bytes)`);
      continue;
    }
    filesCompared += 1;
    if (now.digest !== undefined && file.verified) {
      digestsCompared += 1;
      if (now.digest !== file.sha256 || now.sizeBytes !== file.sizeBytes) {
        problem(file.path, 'differs', `the server lists ${now.digest} (${now.sizeBytes} bytes) now; the manifest says ${file.sha256} (${file.sizeBytes} bytes)`);
      }
    } else if (now.digest !== undefined) {
      problem(file.path, 'differs', `the server lists it with a digest (${now.digest}) now; the manifest marks it unverified`);
    } else if (file.verified) {
      problem(file.path, 'differs', `the server lists it without a digest now; the manifest says ${file.sha256}`);
    }
  }
  for (const [path, now] of liveFiles) {
    if (insideOmitted(path)) continue;
    problem(path, 'missing', `the server lists it now (${now.digest ?? 'no digest'}, ${now.sizeBytes} bytes); the snapshot does not hold it`);
  }
  for (const failure of live.walk.failures) {
    if (compared.has(labelOf(failure.path) ?? '') && !insideOmitted(failure.path)) problem(failure.path, 'unchecked', `could not be walked now: ${errorMessage(failure.error)}`);
  }

  for (const [path, document] of snapshot.documents) {
    if (!manifest.files.some((file) => file.path === path)) continue;
    const now = live.documents.get(path);
    if (document === undefined) problem(path, 'differs', 'cannot be read as a skills.json: its skills were not compared');
    else if (now === undefined) problem(path, 'unchecked', 'the servers did not render it now: its skills were not compared');
    else compareCatalogs(path, document, now, compared, problem);
  }
  problems.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { problems, servers: [...compared].sort(), leftOut, filesCompared, digestsCompared };
}

/** Each compared server's skills in the snapshot's skills.json against the live one, by path: the fields the listing gives. */
function compareCatalogs(
  where: string,
  snapshot: CatalogDocument,
  live: CatalogDocument,
  compared: ReadonlySet<string>,
  problem: (path: string, kind: VerifyProblem['kind'], detail: string) => void,
): void {
  const skillsOf = (document: CatalogDocument, label: string): Map<string, SkillsJsonSkill> =>
    new Map((document.servers.find((server) => server.label === label)?.skills ?? []).map((skill) => [skill.path, skill]));
  for (const label of compared) {
    const then = skillsOf(snapshot, label);
    const now = skillsOf(live, label);
    for (const [skillPath, skill] of then) {
      const current = now.get(skillPath);
      if (current === undefined) {
        problem(where, 'differs', `${skillPath}: a skill the server does not list now`);
        continue;
      }
      const differing = LISTED_FIELDS.filter((field) => (skill[field] ?? null) !== (current[field] ?? null));
      if (differing.length > 0) problem(where, 'differs', `${skillPath}: ${differing.join(', ')} not as the server lists it now`);
    }
    for (const skillPath of now.keys()) {
      if (!then.has(skillPath)) problem(where, 'differs', `${skillPath}: a skill the server lists now is not in it`);
    }
  }
}
