// Server-supplied strings on their way into a log line, `status` or skills.json: control
// characters (newlines included) and the Unicode line separators are escaped, so a server
// can never start a line of its own or forge one for another label; length is capped.

const MAX_SHOWN_CHARS = 4_000;
// C0 and C1 controls, DEL, U+2028/U+2029, and the bidi overrides that can reorder a terminal line.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The text with every unsafe character as a JSON-style escape, at most 4,000 characters. */
export function escapeForLog(text: string): string {
  const shown = text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}... (${text.length} chars)` : text;
  return shown.replace(UNSAFE, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
