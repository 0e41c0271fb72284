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

/** Where a SKILL.md's frontmatter lies, as indices into the text given (a BOM before it counted). */
export interface FrontmatterBounds {
  /** The first character of the YAML: just after the opening `---` line's "\n". */
  yamlStart: number;
  /** Just after the YAML: where the closing `---` line starts. */
  yamlEnd: number;
  /** The first character of the body: after the closing `---` line and its line ending (the text's length when it has none). */
  bodyStart: number;
  /** The opening `---` line's line ending: the file's own style. */
  lineEnding: '\n' | '\r\n';
}

/**
 * Where the frontmatter lies. Lines are split on "\n" only, with an optional "\r" before it, as
 * the Agent Skills format reads them: U+2028, U+2029 and a lone "\r" are ordinary characters, so
 * nothing can end the block where a YAML reader would not. Works on any text whose line breaks
 * and delimiters are ASCII (bytes read as Latin-1 too). Throws FrontmatterError.
 */
export function frontmatterBounds(markdown: string): FrontmatterBounds {
  const offset = markdown.startsWith(BOM) ? BOM.length : 0;
  let lineStart = offset;
  let yamlStart = -1;
  let lineEnding: FrontmatterBounds['lineEnding'] = '\n';
  while (lineStart <= markdown.length) {
    const newline = markdown.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? markdown.length : newline;
    const crlf = lineEnd > lineStart && markdown[lineEnd - 1] === '\r';
    const line = markdown.slice(lineStart, crlf ? lineEnd - 1 : lineEnd);
    if (yamlStart === -1) {
      if (!DELIMITER.test(line) || newline === -1) throw new FrontmatterError('no frontmatter: SKILL.md must start with a --- line');
      yamlStart = newline + 1;
      if (crlf) lineEnding = '\r\n';
    } else if (DELIMITER.test(line)) {
      return { yamlStart, yamlEnd: lineStart, bodyStart: newline === -1 ? markdown.length : newline + 1, lineEnding };
    }
    if (newline === -1) break;
    lineStart = newline + 1;
  }
  throw new FrontmatterError('frontmatter is not closed by a --- line');
}

/** The YAML between the opening and closing `---` lines (frontmatterBounds says how they are found). */
export function frontmatterBlock(markdown: string): string {
  const { yamlStart, yamlEnd } = frontmatterBounds(markdown);
  return markdown.slice(yamlStart, yamlEnd);
}

/**
 * Parses one small frontmatter so the YAML parser's first use (module set-up and first compile,
 * ~6 ms) is not paid by the first SKILL.md a reader opens. Call while nothing waits.
 */
export function warmUpFrontmatterParser(): void {
  parseFrontmatter('---\nname: warm-up\ndescription: "A frontmatter: strings, a list, a map."\nmetadata:\n  tags: [a, b]\n  version: 1\n---\n');
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
