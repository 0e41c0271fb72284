// JSON with comments and trailing commas (VS Code's mcp.json is JSONC), parsed into a
// plain value by jsonc-parser (VS Code's own parser); a syntax error says what is wrong
// and where (line and column). Knows nothing of configs.
import { printParseErrorCode, visit, type ParseErrorCode } from 'jsonc-parser';
import { SkillsMountError } from '../errors.js';

/** Where a JSON syntax error is, 1-based. */
export interface TextPosition {
  line: number;
  column: number;
}

/** The text is not JSONC; `code` is jsonc-parser's name for the problem (e.g. "CommaExpected"). */
export class JsoncSyntaxError extends SkillsMountError {
  override name = 'JsoncSyntaxError';
  readonly code = 'JSONC_SYNTAX';
  constructor(
    message: string,
    /** jsonc-parser's name for what is wrong ("CommaExpected", ...). */
    readonly syntaxError: string,
    readonly position: TextPosition,
  ) {
    super(message);
  }
}

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false } as const;
const MAX_TOKEN_SHOWN = 40;

/**
 * What each jsonc-parser error code means, in words: `found` is the text at the error,
 * `close` the bracket that would end the object or array the error is in.
 */
const PROBLEMS: Record<ReturnType<typeof printParseErrorCode>, (found: string, close: string) => string> = {
  InvalidSymbol: (found) => `unexpected ${found}${/^'[A-Za-z_$']/.test(found) ? ' (names and strings are written in double quotes)' : ''}`,
  InvalidNumberFormat: (found) => `${found} is not a number`,
  PropertyNameExpected: (found) => `expected a property name in double quotes, found ${found}`,
  ValueExpected: (found) => `expected a value, found ${found}`,
  ColonExpected: (found) => `expected ':' after the property name, found ${found}`,
  CommaExpected: (found, close) => `expected ',' or '${close}', found ${found}`,
  CloseBraceExpected: (found) => `expected '}' to close the object, found ${found}`,
  CloseBracketExpected: (found) => `expected ']' to close the array, found ${found}`,
  EndOfFileExpected: (found) => `unexpected ${found} after the end of the JSON value`,
  InvalidCommentToken: (found) => `${found} is not a comment`,
  UnexpectedEndOfComment: () => 'a /* comment is not closed with */',
  UnexpectedEndOfString: () => `a string is not closed: '"' is missing before the end of the line`,
  UnexpectedEndOfNumber: (found) => `incomplete number ${found}`,
  InvalidUnicode: () => 'a \\u escape in this string is not four hex digits',
  InvalidEscapeCharacter: () => 'this string has an invalid escape (a backslash is written \\\\)',
  InvalidCharacter: () => 'this string holds a control character (a tab is written \\t)',
  '<unknown ParseErrorCode>': (found) => `cannot parse ${found}`,
};

/** Parses JSON, JSON with `//` and block comments, and trailing commas; throws JsoncSyntaxError. */
export function parseJsonc(text: string): unknown {
  // A byte order mark is invisible in an editor, so columns are counted without it.
  const source = text.replace(/^\uFEFF/, '');
  const root = new ValueBuilder();
  let failure: JsoncSyntaxError | undefined;
  visit(
    source,
    {
      onObjectBegin: () => root.begin({}),
      onObjectProperty: (name) => root.property(name),
      onObjectEnd: () => root.end(),
      onArrayBegin: () => root.begin([]),
      onArrayEnd: () => root.end(),
      onLiteralValue: (value: unknown) => root.value(value),
      onError: (error, offset, length, startLine, startCharacter) => {
        failure ??= syntaxError(source, error, offset, length, { line: startLine + 1, column: startCharacter + 1 }, root.closingBracket());
      },
    },
    PARSE_OPTIONS,
  );
  if (failure) throw failure;
  return root.result();
}

function syntaxError(text: string, error: ParseErrorCode, offset: number, length: number, position: TextPosition, close: string): JsoncSyntaxError {
  const code = printParseErrorCode(error);
  // An empty token is where something was missing: name what comes next instead.
  const token = length > 0 ? text.slice(offset, offset + length) : text.slice(offset).trimStart().charAt(0);
  const found = token === '' ? 'the end of the file' : quote(token);
  return new JsoncSyntaxError(PROBLEMS[code](found, close), code, position);
}

function quote(token: string): string {
  const shown = token.length > MAX_TOKEN_SHOWN ? `${token.slice(0, MAX_TOKEN_SHOWN)}…` : token;
  return `'${shown}'`;
}

/** Builds the value from visitor events, with JSON.parse's semantics for every key. */
class ValueBuilder {
  readonly #stack: Array<Record<string, unknown> | unknown[]> = [];
  readonly #keys: Array<string | undefined> = [];
  #root: unknown;

  begin(container: Record<string, unknown> | unknown[]): void {
    this.value(container);
    this.#stack.push(container);
    this.#keys.push(undefined);
  }

  property(name: string): void {
    this.#keys[this.#keys.length - 1] = name;
  }

  end(): void {
    this.#stack.pop();
    this.#keys.pop();
  }

  value(value: unknown): void {
    const parent = this.#stack.at(-1);
    if (parent === undefined) {
      this.#root = value;
    } else if (Array.isArray(parent)) {
      parent.push(value);
    } else {
      const key = this.#keys.at(-1);
      // defineProperty, not assignment: a "__proto__" key is data (as in JSON.parse), not a prototype.
      if (key !== undefined) Object.defineProperty(parent, key, { value, writable: true, enumerable: true, configurable: true });
    }
  }

  /** '}' inside an object, ']' inside an array (at the top level: '}'). */
  closingBracket(): string {
    return Array.isArray(this.#stack.at(-1)) ? ']' : '}';
  }

  result(): unknown {
    return this.#root;
  }
}
