// Keeps configured header values (tokens, keys) out of every text the mount shows: log
// lines, status reasons, error messages. Any library may quote a value in its error (undici's
// Headers does), so every such text passes through here; what it must not know is who wrote it.
import { escapeForLog } from '../format/escape.js';
import { redactSdkLinesWith } from '../log.js';

export const REDACTED = '[redacted]';

/** Shorter values are not secrets worth mangling messages for ("1", "no"). */
const MIN_SECRET_CHARS = 3;
/** A word of a value this long is redacted on its own too ("Bearer <token>": the token alone). */
const MIN_SECRET_WORD_CHARS = 8;
/** undici quotes a rejected value whole: `Headers.append: "<value>" is an invalid header value.` */
const HEADERS_QUOTE = /(Headers\.(?:append|set)): "[\s\S]*?(?:" is an invalid header (?:name|value)\.?|$)/g;

/** A function that replaces every form of every header value in a text with [redacted]. */
export function headerRedactor(headers: Record<string, string> | undefined): (text: string) => string {
  const secrets = new Set<string>();
  const add = (text: string, minChars: number) => {
    if (text.length < minChars) return;
    secrets.add(text);
    // The forms an escaping or JSON-quoting writer makes of it, as well.
    secrets.add(escapeForLog(text));
    secrets.add(JSON.stringify(text).slice(1, -1));
  };
  for (const value of Object.values(headers ?? {})) {
    add(value, MIN_SECRET_CHARS);
    add(value.trim(), MIN_SECRET_CHARS);
    // A writer that shows only a value's first line (or one word of it) must not show that either.
    for (const line of value.split(/\r\n|\r|\n/)) add(line.trim(), MIN_SECRET_CHARS);
    for (const word of value.split(/\s+/)) add(word, MIN_SECRET_WORD_CHARS);
  }
  // Longest first, so a value is replaced whole before a word of it is.
  const ordered = [...secrets].sort((a, b) => b.length - a.length);
  const redact = (text: string): string => {
    let result = text.replace(HEADERS_QUOTE, `$1: ${REDACTED}`);
    for (const secret of ordered) if (result.includes(secret)) result = result.split(secret).join(REDACTED);
    return result;
  };
  // The SDK's own lines too, for as long as the caller keeps this function.
  if (ordered.length > 0) redactSdkLinesWith(redact);
  return redact;
}

/** `error` with its message redacted, and its cause dropped when the cause's text quotes a value. */
export function redactError<E extends Error>(error: E, redact: (text: string) => string): E {
  const message = redact(error.message);
  if (message !== error.message) error.message = message;
  if (error.stack !== undefined) error.stack = redact(error.stack);
  const cause = (error as { cause?: unknown }).cause;
  if (cause !== undefined && redact(causeText(cause)) !== causeText(cause)) {
    (error as { cause?: unknown }).cause = undefined;
  }
  return error;
}

function causeText(cause: unknown): string {
  let text = '';
  for (let current: unknown = cause, depth = 0; current !== undefined && depth < 5; depth++) {
    if (current instanceof Error) {
      text += `${current.message}\n${current.stack ?? ''}\n`;
      current = current.cause;
    } else {
      text += String(current);
      current = undefined;
    }
  }
  return text;
}
