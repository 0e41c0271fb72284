// The view a snapshot is made of, walked through the filesystem core the mount serves: every
// file and directory with its size and listing digest (no content fetched), and the catalog
// (skills.json) with each server's state. What `snapshot` writes and `verify --against-server`
// compares with. Knows the core's interface and the mount's layout, nothing of MCP or disks.
import { IntegrityError, NoAttributeError, SkillsMountError } from '../errors.js';
import type { FilesystemCore } from '../fs/filesystem-core.js';
import { APPROVED_DIR, INSPECT_DIR, SKILLS_JSON, STATUS_JSON } from '../fs/mount-layout.js';
import { XATTR } from '../fs/skills-filesystem.js';
import type { SkillsJsonServer } from '../fs/skills-json.js';
import { safeName } from './snapshot-manifest.js';

export type SnapshotViewName = 'mount' | 'approved';

/** One file of the view. */
export interface WalkedFile {
  /** Relative to the snapshot root. */
  path: string;
  corePath: string;
  sizeBytes: number;
  digest: string | undefined;
  verified: boolean;
}

/** Every file and directory of the view, and what could not be walked. */
export interface WalkResult {
  files: WalkedFile[];
  directories: string[];
  /** Generated documents at the view's root (skills.json), read after every file so they show what the reads found. */
  documents: string[];
  failures: Array<{ path: string; error: unknown }>;
}

/** Every file and directory of the view, with sizes and listing digests; no content is fetched. */
export async function walkView(core: FilesystemCore, view: SnapshotViewName, signal: AbortSignal | undefined): Promise<WalkResult> {
  const result: WalkResult = { files: [], directories: [], documents: [], failures: [] };
  const rootNames = view === 'mount' ? (await core.readdir('/')).filter((name) => name !== STATUS_JSON && name !== APPROVED_DIR && name !== INSPECT_DIR) : [APPROVED_DIR];
  const pending: string[] = [];
  for (const name of rootNames) {
    if (name === SKILLS_JSON) result.documents.push(name);
    else pending.push(name);
  }
  for (let next = 0; next < pending.length; next++) {
    signal?.throwIfAborted();
    const relative = pending[next]!;
    const corePath = `/${relative}`;
    let attributes;
    try {
      attributes = await core.getattr(corePath);
    } catch (error) {
      if (!(error instanceof SkillsMountError)) throw error;
      result.failures.push({ path: relative, error });
      continue;
    }
    if (attributes.kind === 'file') {
      const { digest, verified } = await digestOf(core, corePath);
      result.files.push({ path: relative, corePath, sizeBytes: attributes.sizeBytes, digest, verified });
      continue;
    }
    result.directories.push(relative);
    let names: string[];
    try {
      names = await core.readdir(corePath);
    } catch (error) {
      if (!(error instanceof SkillsMountError)) throw error;
      result.failures.push({ path: relative, error });
      continue;
    }
    for (const name of names.sort(compare)) {
      if (view === 'approved' && relative === APPROVED_DIR && name === SKILLS_JSON) {
        result.documents.push(`${APPROVED_DIR}/${SKILLS_JSON}`);
        continue;
      }
      if (!safeName(name)) {
        result.failures.push({ path: `${relative}/${name}`, error: new IntegrityError(`${relative}: a child named ${JSON.stringify(name)} cannot be a file name`) });
        continue;
      }
      pending.push(`${relative}/${name}`);
    }
  }
  return result;
}

async function digestOf(core: FilesystemCore, corePath: string): Promise<{ digest: string | undefined; verified: boolean }> {
  const attribute = async (name: string): Promise<string | undefined> => {
    try {
      return (await core.getxattr(corePath, name)).toString('utf8');
    } catch (error) {
      if (error instanceof NoAttributeError) return undefined;
      throw error;
    }
  };
  const verified = (await attribute(XATTR.verified)) === 'true';
  return { digest: verified ? await attribute(XATTR.digest) : undefined, verified };
}

/** Every byte of a file through open/read/release, as a reader of the mount gets them; the size checked. */
export async function readWhole(core: FilesystemCore, corePath: string): Promise<Buffer> {
  const handle = await core.open(corePath);
  try {
    const { sizeBytes } = core.fgetattr(handle);
    // One byte more than the size: a version longer than it says would show.
    const bytes = core.read(handle, 0, sizeBytes + 1);
    if (bytes.length !== sizeBytes) throw new IntegrityError(`${corePath}: ${bytes.length} bytes read, ${sizeBytes} expected`);
    // Not copied: the bytes are hashed and written at once, and nothing here changes them.
    return bytes;
  } finally {
    core.release(handle);
  }
}

/** The mount's skills.json (the root one, whatever the view): server states and skill directories. */
export async function readCatalog(core: FilesystemCore): Promise<{ servers: SkillsJsonServer[] } | undefined> {
  try {
    return JSON.parse((await readWhole(core, `/${SKILLS_JSON}`)).toString('utf8')) as { servers: SkillsJsonServer[] };
  } catch (error) {
    if (error instanceof SkillsMountError || error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/** Why a server's part is incomplete, from its skills.json entry; undefined when it is whole. */
export function serverProblem(server: SkillsJsonServer): string | undefined {
  if (server.offline) return `offline since ${server.offline.since}: its last kept listing is shown`;
  if (server.state !== 'connected' && server.state !== 'degraded') return `${server.state}${server.reason ? `: ${server.reason}` : ''}`;
  if (!server.listingComplete) return 'its listing is incomplete';
  return undefined;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
