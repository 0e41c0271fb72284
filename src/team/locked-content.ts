// A locked version's files on this machine: one rule for every outlet (the approved view, `link`).
// A file is had as the server serves it while that is the locked version, else as a copy of that
// digest this machine verified before (memory, the disk cache, a kept SKILL.md text), verified
// again; never the server's other bytes. A locked skill is shown or linked only when every file can
// be had so, and the reason it cannot is the same sentence in each outlet.
import type { Approval } from '../approvals/approval-store.js';
import type { ServerCatalog } from '../catalog/server-catalog.js';
import { uriToSegments } from '../catalog/uri-path.js';
import { verifyContent, type VerifiedContent } from '../catalog/verified-content.js';
import { IntegrityError, SkillsMountError } from '../errors.js';

/** One file of a locked version. */
export interface LockedFileVersion {
  uri: string;
  digest: string;
  sizeBytes: number;
}

/** Where the SKILL.md texts of locked versions are kept (the lock ledger's), for an outlet that has them. */
export interface KeptSkillTexts {
  keptSkillText?(digest: string): Promise<Buffer | undefined>;
  keepSkillText?(digest: string, bytes: Buffer): Promise<void>;
}

/**
 * The locked file's verified bytes: the server's while it serves that digest (a SKILL.md's then
 * kept for later), else a copy held here. Throws IntegrityError saying why neither can be had.
 */
export async function lockedFileContent(catalog: ServerCatalog, file: LockedFileVersion, texts: KeptSkillTexts = {}): Promise<VerifiedContent> {
  const path = pathUnderLabel(file.uri);
  const served = path === undefined ? undefined : await catalog.read(path, file.digest).catch((error: unknown) => (error instanceof SkillsMountError ? error : Promise.reject(error)));
  if (served !== undefined && !(served instanceof SkillsMountError) && served.digest === file.digest) {
    if (isSkillMd(file.uri)) await texts.keepSkillText?.(file.digest, served.bytes);
    return served;
  }
  const kept = await keptCopy(catalog, file, texts);
  if (kept !== undefined) return kept;
  const now = served === undefined ? 'its URI has no path here' : served instanceof SkillsMountError ? served.message : `the server serves ${served.digest} now`;
  throw new IntegrityError(`${catalog.label}: ${notHeld(file, now)}`, { server: catalog.label, uri: file.uri });
}

/**
 * Why the locked version `approval` cannot be served whole here, or undefined when every file can:
 * listed by the server now at its digest (the read verifies it), or a verified copy held. Reads
 * no content from the server; a copy held on disk is read and hashed.
 */
export async function lockedVersionProblem(catalog: ServerCatalog, approval: Approval, texts: KeptSkillTexts = {}): Promise<string | undefined> {
  const record = catalog.rejection(approval.skillUri) === undefined ? catalog.skillRecord(approval.skillUri) : undefined;
  const listed = new Map(record !== undefined && Array.isArray(record.files) ? record.files.map((file) => [file.uri, file]) : []);
  for (const file of approval.resources) {
    const now = listed.get(file.uri);
    if (now?.digest === file.digest && now.sizeBytes === file.sizeBytes) continue;
    if ((await keptCopy(catalog, file, texts)) !== undefined) continue;
    return `${catalog.label}: ${notHeld(file, now === undefined ? 'the server does not list it now' : `the server serves ${now.digest} now`)}`;
  }
  return undefined;
}

/** A copy of the locked file this machine verified before: in memory, the disk cache, or (a SKILL.md) the kept texts. */
async function keptCopy(catalog: ServerCatalog, file: LockedFileVersion, texts: KeptSkillTexts): Promise<VerifiedContent | undefined> {
  const kept = await catalog.keptVersion(file.uri, file.digest, file.sizeBytes);
  if (kept !== undefined || !isSkillMd(file.uri)) return kept;
  const bytes = await texts.keptSkillText?.(file.digest);
  if (bytes === undefined) return undefined;
  try {
    return verifyContent(catalog.label, { uri: file.uri, bytes, mimeType: undefined }, { digest: file.digest, sizeBytes: file.sizeBytes });
  } catch {
    return undefined;
  }
}

/** The one sentence both outlets give for a locked file this machine cannot serve. */
function notHeld(file: LockedFileVersion, now: string): string {
  return `${file.uri}: locked as ${file.digest}, which this machine has not kept, and ${now}`;
}

function pathUnderLabel(uri: string): string | undefined {
  const segments = uriToSegments(uri);
  return 'problem' in segments ? undefined : segments.join('/');
}

function isSkillMd(uri: string): boolean {
  return uri.endsWith('/SKILL.md');
}
