// Server labels: the directory names under the mount, and the cache's per-server subtrees.
// The rule lives here, below every layer that names a server by its label.

/** What a label may look like: it names a directory, so no case games, dots or slashes. */
export const LABEL_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
export const MAX_LABEL_LENGTH = 64;

/** True when `label` can be used as is. */
export function isValidLabel(label: string): boolean {
  return LABEL_PATTERN.test(label) && label.length <= MAX_LABEL_LENGTH;
}
