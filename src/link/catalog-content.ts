// Approved bytes from the catalogs of this process (the daemon's own, or those `link` builds over
// the configured servers where no mount runs): each file read and verified as the mount would
// serve it, by its URI's path under the label. The approved view's gate (the server still serves
// the approved set) is not needed here: the sync keeps only bytes that hash to the approval's own
// digests, and asking it per file would cost a pass over every approval.
import type { Approval } from '../approvals/approval-store.js';
import type { ServerCatalog } from '../catalog/server-catalog.js';
import { uriToSegments } from '../catalog/uri-path.js';
import { NotFoundError } from '../errors.js';
import { lockedFileContent, type KeptSkillTexts } from '../team/locked-content.js';
import { isLockedApproval } from '../team/locked-skills.js';
import type { EntryFile } from './entry-objects.js';
import type { ContentSource } from './link-sync.js';

/** `texts`: the SKILL.md texts of locked versions kept on this machine, one of the copies a locked version is had from. */
export function catalogContent(catalogs: readonly ServerCatalog[], texts: KeptSkillTexts = {}): ContentSource {
  const byLabel = new Map(catalogs.map((catalog) => [catalog.label, catalog]));
  return {
    serves: (label) => byLabel.has(label),
    missing: (label) => `no server labelled ${label} is configured here`,
    async read(approval: Approval, file: EntryFile): Promise<Buffer | undefined> {
      const catalog = byLabel.get(approval.label);
      const segments = uriToSegments(file.uri);
      if (catalog === undefined || 'problem' in segments) return undefined;
      // A locked version: by the same rule as the mount's approved view, or refused with its reason.
      if (isLockedApproval(approval)) return (await lockedFileContent(catalog, file, texts)).bytes;
      try {
        return (await catalog.read(segments.join('/'))).bytes;
      } catch (error) {
        // Gone from the server: not available now. Anything else (a verification failure, the
        // server away) is the entry's problem, reported with its reason.
        if (error instanceof NotFoundError) return undefined;
        throw error;
      }
    },
  };
}
