// Server-supplied strings on their way into a log line, `status` or a report: control characters
// (newlines included), the Unicode line separators and every character a terminal shows as
// nothing (or as a space) are escaped, so a server can never start a line of its own, forge one
// for another label, or pass `SKILL.md` + U+200B off as `SKILL.md`; length is capped.

const MAX_SHOWN_CHARS = 4_000;
// By Unicode property, so a new invisible character is covered as soon as Node's Unicode knows it:
// controls (Cc), format characters (Cf: zero-width, bidi, soft hyphen, tag characters), line and
// paragraph separators (Zl, Zp), lone surrogates (Cs), private use (Co: no meaning a reviewer can
// see), unassigned code points (Cn: a terminal may draw them as nothing), what Unicode says to
// ignore when drawing (variation selectors, Hangul fillers, ...) and spaces (all but U+0020, below).
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\p{Zs}]/u;

/** The text with every unsafe character escaped by code point (`\u200b`; beyond U+FFFF `\u{e0041}`), at most 4,000 characters. */
export function escapeForLog(text: string): string {
  return escapeWithin(text, MAX_SHOWN_CHARS);
}

/** As escapeForLog, at most `maxShownChars` characters of it (escapes counted), then its length. */
export function escapeWithin(text: string, maxShownChars: number): string {
  let shown = '';
  // By code point: an astral character is one escape, and a lone surrogate is one too.
  for (const character of text) {
    const next = character !== ' ' && UNSAFE.test(character) ? escapedCodePoint(character.codePointAt(0)!) : character;
    if (shown.length + next.length > maxShownChars) return `${shown}... (${text.length} chars)`;
    shown += next;
  }
  return shown;
}

function escapedCodePoint(codePoint: number): string {
  const hex = codePoint.toString(16);
  return codePoint > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, '0')}`;
}
