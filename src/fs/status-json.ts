// Renders MOUNTPOINT/status.json: the daemon and each server in counts, a few hundred bytes a
// server whatever the catalogs hold, so `skills-mount status` answers fast at any size.
import type { CatalogHealth } from '../catalog/server-catalog.js';
import type { ServerApprovals } from './approved-view.js';
import { documentText, serverState, type MountStatus } from './skills-json.js';

/** The status.json document for the given catalogs, as JSON text; `approvalsOf` adds each server's approval figures. */
export function renderStatusJson(catalogs: readonly CatalogHealth[], mount?: MountStatus, approvalsOf?: (label: string) => ServerApprovals | undefined): string {
  const servers = catalogs.map((catalog) => ({
    ...serverState(catalog),
    skills: catalog.skills,
    declined: catalog.declined,
    rejected: catalog.rejected,
    changed: catalog.changed,
    problems: catalog.problems,
    ...approvalsField(approvalsOf?.(catalog.label)),
  }));
  return documentText(mount ? { mount, servers } : { servers });
}

function approvalsField(approvals: ServerApprovals | undefined): { approvals?: ServerApprovals } {
  return approvals ? { approvals } : {};
}
