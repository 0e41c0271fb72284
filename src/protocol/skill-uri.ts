// skill:// URIs as both sides spell them: one scheme, one segment encoding. The mount's
// URI <-> path mapping (catalog/uri-path.ts) and the server's URI parser (server/skill-uri.ts)
// build on these, so a name the server publishes is the name the mount decodes.

/** The extension's URI scheme. */
export const SKILL_SCHEME = 'skill';
export const SKILL_URI_PREFIX = `${SKILL_SCHEME}://`;

// RFC 3986 pchar minus pct-encoded: what a segment may carry unencoded.
const SEGMENT_SAFE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]*$/;
// encodeURIComponent escapes these pchar characters too; they are put back.
const PCHAR_ESCAPES = /%(?:3A|40|24|26|2B|2C|3B|3D)/g;

/** Percent-encodes one path segment (UTF-8, uppercase hex), leaving pchar characters readable. */
export function encodeSegment(segment: string): string {
  if (SEGMENT_SAFE.test(segment)) return segment;
  // A lone surrogate cannot be UTF-8: it is encoded as U+FFFD rather than throwing.
  const wellFormed = segment.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  return encodeURIComponent(wellFormed).replace(PCHAR_ESCAPES, (escape) => decodeURIComponent(escape));
}
