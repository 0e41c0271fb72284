// Approved bytes from a filesystem core in this process (the daemon's own, or one `link` builds
// over the configured servers where no mount runs): read from its approved view, which serves a
// skill only while its server serves the approved files. No kernel in between.
import type { Approval } from '../approvals/approval-store.js';
import type { ServerCatalog } from '../catalog/server-catalog.js';
import { skillDirectory } from '../catalog/skill-record.js';
import { NotFoundError } from '../errors.js';
import { APPROVED_DIR } from '../fs/mount-layout.js';
import type { SkillsFilesystem } from '../fs/skills-filesystem.js';
import type { EntryFile } from './entry-objects.js';
import type { ContentSource } from './link-sync.js';

export function filesystemContent(filesystem: SkillsFilesystem, catalogs: readonly ServerCatalog[]): ContentSource {
  const byLabel = new Map(catalogs.map((catalog) => [catalog.label, catalog]));
  return {
    serves: (label) => byLabel.has(label),
    missing: (label) => `no server labelled ${label} is configured here`,
    async read(approval: Approval, file: EntryFile): Promise<Buffer | undefined> {
      const record = byLabel.get(approval.label)?.skillRecord(approval.skillUri);
      if (record === undefined) return undefined;
      const where = `/${APPROVED_DIR}/${approval.label}/${skillDirectory(record)}/${file.relative}`;
      let handle: number;
      try {
        handle = await filesystem.open(where);
      } catch (error) {
        // Not in the approved view now: its server changed it or cannot be reached.
        if (error instanceof NotFoundError) return undefined;
        throw error;
      }
      try {
        return Buffer.from(filesystem.read(handle, 0, filesystem.fgetattr(handle).sizeBytes));
      } finally {
        filesystem.release(handle);
      }
    },
  };
}
