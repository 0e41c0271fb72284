// Writes frontmatter data (JSON-compatible: strings, finite numbers, booleans, null, lists, maps)
// as YAML that every common reader reads the same: one `key: value` line per top-level field (a
// map of scalars as an indented block, as people write `metadata`), keys and strings plain only
// where no reader could take them for anything else and double-quoted otherwise, deeper values in
// flow style, every control, C1, line-separator, bidi and BOM character escaped. So there is no
// anchor, alias, tag, merge key, comment, block scalar or raw line break for a YAML 1.1 reader to
// read otherwise. Callers still read the result back (entry-transform.ts): this is the writer only.

/** Data that cannot be written as such (a Date, a function, a non-finite number, a lone surrogate). */
export class FrontmatterEmitError extends Error {
  override name = 'FrontmatterEmitError';
}

/**
 * The YAML text of a frontmatter mapping, each line ending in `lineEnding` ("\n", or "\r\n" to
 * match a file written so: no value holds a raw line break, so that is every break there is).
 */
export function emitFrontmatter(data: Readonly<Record<string, unknown>>, lineEnding: '\n' | '\r\n' = '\n'): string {
  return Object.entries(data)
    .map(([key, value]) => {
      if (isScalarMap(value) && Object.keys(value).length > 0) {
        return `${emitKey(key)}:${lineEnding}${Object.entries(value)
          .map(([inner, item]) => `  ${emitKey(inner)}: ${emitScalar(item)}${lineEnding}`)
          .join('')}`;
      }
      return `${emitKey(key)}: ${typeof value === 'string' ? emitScalar(value) : emitValue(value, 0)}${lineEnding}`;
    })
    .join('');
}

const MAX_DEPTH = 64;
/** Characters escaped in a double-quoted scalar: controls, DEL, C1 (NEL included), LS, PS, bidi controls, BOM, and the quote and backslash. */
const ESCAPED = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff"\\]/g;
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\t': '\\t', '\r': '\\r', '"': '\\"', '\\': '\\\\' };
/** A key written plain: letters, digits, `-` and `_`, starting with a letter, and no word a YAML 1.1 reader resolves to a boolean or null. */
const PLAIN_KEY = /^[A-Za-z][A-Za-z0-9_-]*$/;
const YAML_1_1_WORDS = /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL)$/;

/**
 * A string written plain in block context: starts with a letter; letters, digits, spaces and
 * punctuation that no reader treats as an indicator there; no `: ` or ` #`, no `:` or space at the
 * end. Starting with a letter rules out numbers, dates and YAML 1.1's sexagesimals.
 */
const PLAIN_STRING = /^[A-Za-z][A-Za-z0-9 .,;:()/_+*@=!?&%'[\]-]*$/;

function emitKey(key: string): string {
  return PLAIN_KEY.test(key) && !YAML_1_1_WORDS.test(key) ? key : quoted(key);
}

/** A top-level or block-map value: plain where that is safe, else as emitValue writes it. */
function emitScalar(value: unknown): string {
  if (typeof value === 'string' && PLAIN_STRING.test(value) && !/: | #|[: ]$/.test(value) && !YAML_1_1_WORDS.test(value)) return value;
  return emitValue(value, 0);
}

function isScalarMap(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  return Object.values(value).every((item) => item === null || typeof item !== 'object');
}

function emitValue(value: unknown, depth: number): string {
  if (depth > MAX_DEPTH) throw new FrontmatterEmitError('frontmatter is nested too deeply');
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return quoted(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return emitNumber(value);
    case 'object':
      if (Array.isArray(value)) return `[${value.map((item) => emitValue(item, depth + 1)).join(', ')}]`;
      if (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null) {
        return `{${Object.entries(value as Record<string, unknown>)
          .map(([key, item]) => `${quoted(key)}: ${emitValue(item, depth + 1)}`)
          .join(', ')}}`;
      }
      throw new FrontmatterEmitError(`frontmatter holds a ${(value as object).constructor?.name ?? 'non-JSON'} value`);
    default:
      throw new FrontmatterEmitError(`frontmatter holds a ${typeof value} value`);
  }
}

/** Integers as digits; other numbers with a "." so that YAML 1.1 readers (which want one) read a float too. */
function emitNumber(value: number): string {
  if (!Number.isFinite(value)) throw new FrontmatterEmitError(`frontmatter holds the number ${value}`);
  if (Number.isInteger(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER) return Object.is(value, -0) ? '-0.0' : String(value);
  const text = String(value);
  const [mantissa, exponent] = text.split('e');
  const withDot = mantissa!.includes('.') ? mantissa! : `${mantissa}.0`;
  return exponent === undefined ? withDot : `${withDot}e${exponent.startsWith('-') ? exponent : `+${exponent.replace('+', '')}`}`;
}

function quoted(text: string): string {
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)) throw new FrontmatterEmitError('frontmatter holds a lone surrogate');
  return `"${text.replace(ESCAPED, (character) => SHORT_ESCAPES[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}
