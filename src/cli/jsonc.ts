// JSON with comments and trailing commas (VS Code's mcp.json is JSONC), parsed into a
// plain value; a syntax error names the line and column. Knows nothing of configs.

/** Where a JSON syntax error is, 1-based. */
export interface TextPosition {
  line: number;
  column: number;
}

export class JsoncSyntaxError extends Error {
  override name = 'JsoncSyntaxError';
  constructor(
    message: string,
    readonly position: TextPosition | undefined,
  ) {
    super(message);
  }
}

/** Parses JSON, JSON with `//` and block comments, and trailing commas. */
export function parseJsonc(text: string): unknown {
  const plain = stripJsonc(text.replace(/^\uFEFF/, ''));
  try {
    return JSON.parse(plain);
  } catch (error) {
    const message = (error as Error).message;
    throw new JsoncSyntaxError(message, errorPosition(plain, message));
  }
}

/**
 * Blanks out comments and trailing commas with spaces, keeping every other character
 * (and so every line and column) where it was, so JSON.parse positions stay true.
 */
export function stripJsonc(text: string): string {
  const out = text.split('');
  let i = 0;
  let lastSignificant = -1; // index of the last non-space character kept
  while (i < text.length) {
    const char = text[i]!;
    if (char === '"') {
      i += 1;
      while (i < text.length && text[i] !== '"' && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
      lastSignificant = Math.min(i, text.length - 1);
      i += 1;
      continue;
    }
    if (char === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') out[i++] = ' ';
      continue;
    }
    if (char === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      for (; i < stop; i += 1) if (text[i] !== '\n') out[i] = ' ';
      continue;
    }
    if ((char === '}' || char === ']') && lastSignificant >= 0 && out[lastSignificant] === ',') {
      out[lastSignificant] = ' ';
    }
    if (!/\s/.test(char)) lastSignificant = i;
    i += 1;
  }
  return out.join('');
}

function errorPosition(text: string, message: string): TextPosition | undefined {
  // V8 says "... at position N" (Node 20) or "... (line L column C)" (Node 22+).
  const lineColumn = /line (\d+) column (\d+)/.exec(message);
  if (lineColumn) return { line: Number(lineColumn[1]), column: Number(lineColumn[2]) };
  const position = /position (\d+)/.exec(message)?.[1];
  if (position !== undefined) {
    const before = text.slice(0, Number(position));
    const lines = before.split('\n');
    return { line: lines.length, column: (lines.at(-1) ?? '').length + 1 };
  }
  if (/Unexpected end of JSON input/.test(message)) {
    const lines = text.split('\n');
    return { line: lines.length, column: (lines.at(-1) ?? '').length + 1 };
  }
  return undefined;
}
