// Server labels: the directory names under the mount. Keys from other tools' configs
// ("GitHub Copilot", "my.server") are normalized by one documented rule.

/** What a label may look like: it names a directory, so no case games, dots or slashes. */
export const LABEL_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
export const MAX_LABEL_LENGTH = 64;

/**
 * The label for a config key: lowercase; whitespace, dots, slashes and colons become '-';
 * other characters outside [a-z0-9_-] are dropped; repeated '-' collapse; leading and
 * trailing '-' and '_' go. Returns '' when nothing is left.
 */
export function normalizeLabel(key: string): string {
  return key
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[\s./:\\]+/g, '-')
    .replace(/[^a-z0-9_-]/g, '')
    .replace(/-{2,}/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
    .slice(0, MAX_LABEL_LENGTH)
    .replace(/[-_]+$/g, '');
}

/** True when `label` can be used as is. */
export function isValidLabel(label: string): boolean {
  return LABEL_PATTERN.test(label) && label.length <= MAX_LABEL_LENGTH;
}
