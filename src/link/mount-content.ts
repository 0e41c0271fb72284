// Approved bytes from the running mounts, for the commands that link (`link`, `approve`,
// `revoke`): each mount's `_approved/skills.json` says which skills it shows and where, and
// their files are read through the mount like any reader's (this process serves no mount). A
// mount that does not answer in time is passed over; every byte is re-hashed by the sync.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Approval } from '../approvals/approval-store.js';
import { uriToSegments } from '../catalog/uri-path.js';
import { APPROVED_DIR, SKILLS_JSON } from '../fs/mount-layout.js';
import { skillsMounts } from '../fuse/index.js';
import type { EntryFile } from './entry-objects.js';
import type { ContentSource } from './link-sync.js';
import { readMountFile } from '../fuse/mount-read.js';

const INDEX_TIMEOUT_MS = 2_000;
const FILE_TIMEOUT_MS = 10_000;

interface ApprovedIndex {
  servers?: Array<{ label?: unknown }>;
}

/**
 * The running mounts, by the labels they serve. A skill's folder in a mount's approved view is its
 * URI's path (the mount's layout), so no rendering of skills.json is waited for: right after an
 * approval, the folder is there before the index says so.
 */
export async function mountContent(): Promise<ContentSource & { mountpoints: string[] }> {
  const byLabel = new Map<string, string>();
  const mountpoints: string[] = [];
  for (const mount of await skillsMounts().catch(() => [])) {
    const index = await readMountFile(path.join(mount.mountpoint, APPROVED_DIR, SKILLS_JSON), INDEX_TIMEOUT_MS);
    if (index.kind !== 'ok') continue;
    let document: ApprovedIndex;
    try {
      document = JSON.parse(index.text) as ApprovedIndex;
    } catch {
      continue;
    }
    mountpoints.push(mount.mountpoint);
    for (const server of document.servers ?? []) {
      if (typeof server.label === 'string' && !byLabel.has(server.label)) byLabel.set(server.label, mount.mountpoint);
    }
  }
  return {
    mountpoints,
    serves: (label) => byLabel.has(label),
    missing: (label) => `no running mount serves ${label} (start skills-mount with it, or link with --config or --server to read it from the server itself)`,
    async read(approval: Approval, file: EntryFile): Promise<Buffer | undefined> {
      const mountpoint = byLabel.get(approval.label);
      const skill = uriToSegments(approval.skillUri);
      if (mountpoint === undefined || 'problem' in skill) return undefined;
      const where = path.join(mountpoint, APPROVED_DIR, approval.label, ...skill.slice(0, -1), ...file.relative.split('/'));
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), FILE_TIMEOUT_MS)));
      try {
        return await Promise.race([readFile(where).catch(() => undefined), late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * Each source that serves a label, in order, until one has the bytes: a mount that lists a label
 * but does not show that version (a project's locked one, say) passes it on to the server itself.
 */
export function eitherContent(sources: readonly ContentSource[]): ContentSource {
  return {
    serves: (label) => sources.some((source) => source.serves(label)),
    missing: (label) => sources.map((source) => source.missing(label)).at(-1) ?? `nothing serves ${label}`,
    async read(approval, file) {
      for (const source of sources) {
        if (!source.serves(approval.label)) continue;
        const bytes = await source.read(approval, file);
        if (bytes !== undefined) return bytes;
      }
      return undefined;
    },
  };
}
