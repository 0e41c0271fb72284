// One approved skill (docs pdf, a SKILL.md alone) and a content source that serves exactly its
// bytes: the fixture of the link race tests. `version` makes each version's bytes (and approval) its own.
import { createHash } from 'node:crypto';
import type { Approval } from '../../src/approvals/approval-store.js';
import { resourcesDigest } from '../../src/catalog/resources-digest.js';
import type { ContentSource } from '../../src/link/link-sync.js';

export function pdfApproval(version: string, options: { revoked?: boolean } = {}): { approval: Approval; content: ContentSource } {
  const text = `---\nname: pdf\ndescription: Reads PDFs.\nlicense: ${version}\n---\n# pdf\n`;
  const resources = [{ uri: 'skill://pdf/SKILL.md', digest: `sha256:${createHash('sha256').update(text).digest('hex')}`, sizeBytes: Buffer.byteLength(text) }];
  return {
    approval: {
      label: 'docs',
      skillUri: 'skill://pdf/SKILL.md',
      name: 'pdf',
      resources,
      resourcesDigest: resourcesDigest(resources),
      approvedAt: `2026-12-0${version.length}T00:00:00.000Z`,
      allowedToolsApproved: false,
      allowedTools: null,
      execApproved: false,
      revokedAt: options.revoked ? '2026-12-05T00:00:00.000Z' : null,
    },
    content: { serves: () => true, missing: () => '', read: async () => Buffer.from(text) },
  };
}
