// Labels from config keys: keys from other tools' configs ("GitHub Copilot", "my.server")
// are normalized by one documented rule into a label (src/labels.ts says what one may be).
import { MAX_LABEL_LENGTH } from '../labels.js';

export { LABEL_PATTERN, MAX_LABEL_LENGTH, isValidLabel } from '../labels.js';

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
