// escapeForLog (and escapeWithin, its shorter cut), the last step before a server's string reaches
// a terminal: no character a terminal shows as nothing, as a space, or as a line break gets through
// raw (by Unicode category, astral code points included), each is escaped by code point, and what
// is visible stays as it was.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeForLog, escapeWithin } from '../../src/format/escape.js';

/** One pattern per kind of character that must never reach a terminal raw. */
const HIDDEN_KINDS: Record<string, RegExp> = {
  'control (Cc)': /\p{Cc}/u,
  'format (Cf)': /\p{Cf}/u,
  'line separator (Zl)': /\p{Zl}/u,
  'paragraph separator (Zp)': /\p{Zp}/u,
  'lone surrogate (Cs)': /\p{Cs}/u,
  'private use (Co)': /\p{Co}/u,
  'unassigned (Cn)': /\p{Cn}/u,
  'default ignorable': /\p{Default_Ignorable_Code_Point}/u,
  'space other than U+0020': /(?! )\p{Zs}/u,
};

/** The escapes back into characters (for text with no backslash of its own). */
function unescape(text: string): string {
  return text.replace(/\\u\{([0-9a-f]+)\}|\\u([0-9a-f]{4})/g, (_, astral: string | undefined, bmp: string | undefined) => String.fromCodePoint(parseInt(astral ?? bmp!, 16)));
}

/** Any code point at all, lone surrogates included, weighted towards the planes where the hidden ones live. */
const anyCodePoint = fc.oneof(fc.integer({ min: 0, max: 0x10ffff }), fc.integer({ min: 0, max: 0x3000 }), fc.integer({ min: 0xe0000, max: 0xe01ef }), fc.integer({ min: 0xd800, max: 0xdfff }));
const anyText = fc.array(anyCodePoint, { maxLength: 40 }).map((points) => points.map((point) => String.fromCodePoint(point)).join(''));

describe('escapeForLog', () => {
  it.each([
    ['zero-width space', 'SKILL.md\u200b', 'SKILL.md\\u200b'],
    ['zero-width joiners and marks', 'a\u200c\u200d\u200e\u200fb', 'a\\u200c\\u200d\\u200e\\u200fb'],
    ['word joiner and invisible operators', 'a\u2060\u2061\u2062\u2063\u2064b', 'a\\u2060\\u2061\\u2062\\u2063\\u2064b'],
    ['byte order mark', '\ufeffname', '\\ufeffname'],
    ['soft hyphen', 'soft\u00adhyphen', 'soft\\u00adhyphen'],
    ['Arabic letter mark, Mongolian vowel separator', '\u061c\u180e', '\\u061c\\u180e'],
    ['right-to-left override', '\u202egnp.exe', '\\u202egnp.exe'],
    ['tag characters, astral', 'tag\u{e0041}\u{e007f}', 'tag\\u{e0041}\\u{e007f}'],
    ['line and paragraph separators', 'line\u2028para\u2029', 'line\\u2028para\\u2029'],
    ['ESC and newline', '\u001b[31mred\n', '\\u001b[31mred\\u000a'],
    ['C1 controls', '\u0085\u009b', '\\u0085\\u009b'],
    ['spaces that look like U+0020', 'a\u00a0b\u3000c\u2007d', 'a\\u00a0b\\u3000c\\u2007d'],
    ['lone surrogates', 'lone \ud800 and \udfff', 'lone \\ud800 and \\udfff'],
    ['private use', '\ue000\u{f0000}', '\\ue000\\u{f0000}'],
    ['variation selector and Hangul fillers', '\ufe0f\u3164\u115f', '\\ufe0f\\u3164\\u115f'],
  ])('escapes the %s', (_kind, text, shown) => {
    expect(escapeForLog(text)).toBe(shown);
  });

  it.each(['SKILL.md', 'références/été.md', 'Grüße, 日本語, العربية', 'emoji 😀 stays', 'words with spaces'])('leaves %j as it is', (text) => {
    expect(escapeForLog(text)).toBe(text);
  });

  it('lets no hidden character of any kind through, whatever the text', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const shown = escapeForLog(text);
        for (const [kind, pattern] of Object.entries(HIDDEN_KINDS)) expect(pattern.test(shown), `${kind} in ${JSON.stringify(shown)}`).toBe(false);
      }),
      { numRuns: 2_000 },
    );
  });

  it('changes nothing but the hidden characters: the escapes read back give the text', () => {
    fc.assert(
      fc.property(anyText.filter((text) => !text.includes('\\')), (text) => {
        expect(unescape(escapeForLog(text))).toBe(text);
      }),
      { numRuns: 2_000 },
    );
  });

  it('escapes each hidden code point alone as one escape of that code point', () => {
    fc.assert(
      fc.property(anyCodePoint, (point) => {
        const character = String.fromCodePoint(point);
        const hidden = Object.values(HIDDEN_KINDS).some((pattern) => pattern.test(character));
        const hex = point.toString(16);
        expect(escapeForLog(character)).toBe(hidden ? (point > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, '0')}`) : character);
      }),
      { numRuns: 5_000 },
    );
  });

  it('caps what it shows, escapes counted, cutting no escape and no character in two', () => {
    expect(escapeForLog('x'.repeat(10_000))).toBe(`${'x'.repeat(4_000)}... (10000 chars)`);
    expect(escapeForLog('\u200b'.repeat(1_000))).toBe(`${'\\u200b'.repeat(666)}... (1000 chars)`);
    expect(escapeWithin(`ab${'\u{1f600}'.repeat(3)}`, 5)).toBe('ab\u{1f600}... (8 chars)');
    fc.assert(
      fc.property(anyText, fc.integer({ min: 0, max: 60 }), (text, maxShownChars) => {
        const shown = escapeWithin(text, maxShownChars);
        const whole = escapeForLog(text);
        if (shown === whole) return;
        expect(shown.endsWith(`... (${text.length} chars)`)).toBe(true);
        const kept = shown.slice(0, shown.length - `... (${text.length} chars)`.length);
        expect(kept.length).toBeLessThanOrEqual(maxShownChars);
        expect(whole.startsWith(kept)).toBe(true);
        expect(/\p{Cs}/u.test(kept), 'a surrogate pair cut in two').toBe(false);
        if (!text.includes('\\')) expect(text.startsWith(unescape(kept))).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });
});
