// Which project roots a run may change, and judged with which configuration, decided once: a
// project's lockfile names servers by label, and only the configuration it was linked with says
// what those labels are. So a root under a lockfile records that configuration, and a run (link,
// link --watch, approve, a mount's link keeper) changes it only when it was given the same one;
// any other run leaves it as it is. Knows configurations by name, never what they hold.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { defaultConfigPath } from '../config/config.js';
import type { ServerSelection } from '../config/server-selection.js';
import type { LinkedRoot } from './link-state.js';

/**
 * The configuration a run judges lockfiles with, as one comparable line: the file (absolute; the
 * default one when neither --config nor --server is given), a digest of the --server flags (they
 * may hold a token), the --only labels.
 */
export function configurationOf(selection: ServerSelection, where: { env: NodeJS.ProcessEnv; home: string }): string {
  const file = selection.configPath ?? (selection.serverFlags.length === 0 ? defaultConfigPath(where.env, where.home) : undefined);
  const parts = [file === undefined ? 'no file' : path.resolve(file)];
  if (selection.serverFlags.length > 0) parts.push(`--server sha256:${createHash('sha256').update([...selection.serverFlags].sort().join('\0')).digest('hex')}`);
  if (selection.only.length > 0) parts.push(`--only ${[...selection.only].sort().join(',')}`);
  return parts.join(' ');
}

/**
 * Whether a run given `configuration` judges `root`'s lockfile: only the configuration the root was
 * linked with does (a root linked before roots recorded one waits for its project's next link).
 */
export function judgesLock(root: Pick<LinkedRoot, 'configuration'>, configuration: string): boolean {
  return root.configuration === configuration;
}
