// Renders MOUNTPOINT/status.json: the daemon and each server in counts, a few hundred bytes a
// server whatever the catalogs hold, so `skills-mount status` answers fast at any size.
import type { CatalogHealth } from '../catalog/server-catalog.js';
import { documentText, serverState, type MountStatus } from './skills-json.js';

/** The status.json document for the given catalogs, as JSON text. */
export function renderStatusJson(catalogs: readonly CatalogHealth[], mount?: MountStatus): string {
  const servers = catalogs.map((catalog) => ({
    ...serverState(catalog),
    skills: catalog.skills,
    declined: catalog.declined,
    rejected: catalog.rejected,
    changed: catalog.changed,
    problems: catalog.problems,
  }));
  return documentText(mount ? { mount, servers } : { servers });
}
