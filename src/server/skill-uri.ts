// skill:// URIs <-> relative POSIX paths. The only place that parses a client's URI;
// it never touches the filesystem, so a refused URI cannot reach a path join.

import { SKILL_URI_PREFIX, encodeSegment } from '../protocol/skill-uri.js';

export { encodeSegment };

/** The skill:// URI of a relative POSIX path (segments separated by `/`). */
export function uriForPath(relativePath: string): string {
  return SKILL_URI_PREFIX + relativePath.split('/').map(encodeSegment).join('/');
}

export type ParsedUri = { ok: true; segments: string[]; canonical: string } | { ok: false; reason: string };

/**
 * Parses a client-supplied skill:// URI into decoded path segments and the canonical
 * URI the server publishes for them. Refuses anything that could name a path outside
 * the served tree: empty, `.` or `..` segments (encoded or not), encoded slashes,
 * backslashes, NUL, query or fragment.
 */
export function parseSkillUri(uri: string): ParsedUri {
  if (!uri.startsWith(SKILL_URI_PREFIX)) return { ok: false, reason: 'not a skill:// URI' };
  const rest = uri.slice(SKILL_URI_PREFIX.length);
  if (rest.length === 0) return { ok: false, reason: 'empty path' };
  if (/[\\\0?#]/.test(rest)) return { ok: false, reason: 'backslash, NUL, query or fragment in URI' };
  const segments: string[] = [];
  for (const raw of rest.split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return { ok: false, reason: 'malformed percent-encoding' };
    }
    if (segment.length === 0) return { ok: false, reason: 'empty path segment' };
    if (segment === '.' || segment === '..') return { ok: false, reason: 'dot segment' };
    if (/[/\\\0]/.test(segment)) return { ok: false, reason: 'encoded separator or NUL in a segment' };
    segments.push(segment);
  }
  return { ok: true, segments, canonical: SKILL_URI_PREFIX + segments.map(encodeSegment).join('/') };
}

/** Whether `uri` is already in the WHATWG form the SDK publishes and checks (it drops entries whose URIs are not). */
export function isCanonicalUri(uri: string): boolean {
  try {
    return new URL(uri).href === uri;
  } catch {
    return false;
  }
}
