// SKILL.md frontmatter: extraction, YAML parsing, and field-by-field comparison.
// Shared by the server (which publishes it) and the mount (which verifies it).
import { parse as parseYaml } from 'yaml';
import { SkillsMountError } from '../errors.js';

export class FrontmatterError extends SkillsMountError {
  override name = 'FrontmatterError';
  readonly code = 'BAD_FRONTMATTER';
}

const BOM = '\uFEFF';
const DELIMITER = /^---[ \t]*$/;

/**
 * The YAML between the opening and closing `---` lines. Lines are split on "\n" only, with
 * an optional "\r" before it, as the Agent Skills format reads them: U+2028, U+2029 and a
 * lone "\r" are ordinary characters, so nothing can end the block where a YAML reader would not.
 */
export function frontmatterBlock(markdown: string): string {
  const text = markdown.startsWith(BOM) ? markdown.slice(1) : markdown;
  let lineStart = 0;
  let blockStart = -1;
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd > lineStart && text[lineEnd - 1] === '\r' ? lineEnd - 1 : lineEnd);
    if (blockStart === -1) {
      if (!DELIMITER.test(line) || newline === -1) throw new FrontmatterError('no frontmatter: SKILL.md must start with a --- line');
      blockStart = newline + 1;
    } else if (DELIMITER.test(line)) {
      return text.slice(blockStart, lineStart);
    }
    if (newline === -1) break;
    lineStart = newline + 1;
  }
  throw new FrontmatterError('frontmatter is not closed by a --- line');
}

/** Parses the YAML frontmatter of a SKILL.md text into a JSON object; throws FrontmatterError. */
export function parseFrontmatter(markdown: string): Record<string, unknown> {
  return parseFrontmatterYaml(frontmatterBlock(markdown));
}

/** Parses a frontmatter block's YAML (JSON-compatible: no Dates, no custom tags); throws FrontmatterError. */
export function parseFrontmatterYaml(yaml: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseYaml(yaml, { schema: 'core', uniqueKeys: true, maxAliasCount: 100 });
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
