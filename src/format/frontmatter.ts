// SKILL.md frontmatter: extraction, YAML parsing, and field-by-field comparison.
// Shared by the server (which publishes it) and the mount (which verifies it).
import { parse as parseYaml } from 'yaml';

export class FrontmatterError extends Error {
  override name = 'FrontmatterError';
}

const OPENING = /^\uFEFF?---[ \t]*\r?\n/;
const CLOSING = /^---[ \t]*$/m;

/** Parses the YAML frontmatter of a SKILL.md text into a JSON object; throws FrontmatterError. */
export function parseFrontmatter(markdown: string): Record<string, unknown> {
  const opening = OPENING.exec(markdown);
  if (!opening) throw new FrontmatterError('no frontmatter: SKILL.md must start with a --- line');
  const rest = markdown.slice(opening[0].length);
  const closing = CLOSING.exec(rest);
  if (!closing) throw new FrontmatterError('frontmatter is not closed by a --- line');
  let value: unknown;
  try {
    // JSON-compatible output: no Dates, no custom tags, so it compares with JSON listings.
    value = parseYaml(rest.slice(0, closing.index), { schema: 'core', uniqueKeys: true, maxAliasCount: 100 });
  } catch (error) {
    throw new FrontmatterError(`frontmatter is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new FrontmatterError('frontmatter is not a YAML mapping');
  }
  return value as Record<string, unknown>;
}

/**
 * Compares two frontmatter objects field by field (deep, key order ignored).
 * Returns the first differing field path, or undefined when they are identical in content.
 */
export function frontmatterDifference(expected: unknown, actual: unknown, path = ''): string | undefined {
  if (Object.is(expected, actual)) return undefined;
  if (Array.isArray(expected) || Array.isArray(actual)) {
    if (!Array.isArray(expected) || !Array.isArray(actual)) return path || '(root)';
    if (expected.length !== actual.length) return `${path}.length`;
    for (let i = 0; i < expected.length; i++) {
      const diff = frontmatterDifference(expected[i], actual[i], `${path}[${i}]`);
      if (diff !== undefined) return diff;
    }
    return undefined;
  }
  if (isPlainObject(expected) && isPlainObject(actual)) {
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    for (const key of [...keys].sort()) {
      // An empty key is a field too: name it so the path is never "" (which reads as no difference).
      const child = path ? `${path}.${key}` : key === '' ? '""' : key;
      if (!Object.hasOwn(expected, key) || !Object.hasOwn(actual, key)) return child;
      const diff = frontmatterDifference(expected[key], actual[key], child);
      if (diff !== undefined) return diff;
    }
    return undefined;
  }
  return path || '(root)';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
