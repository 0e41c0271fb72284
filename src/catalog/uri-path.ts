// The reversible mapping between a server's resource URIs and paths under its label.
//   skill://a/b/c.md      <->  a/b/c.md
//   github://o/r/x.md     <->  github:/o/r/x.md   (a scheme directory ends with ":")
// Segments are percent-decoded; any URI whose segments could escape, collide with a
// scheme directory, or not be a file name is unmappable and never shown.

import { SKILL_SCHEME, encodeSegment } from '../protocol/skill-uri.js';

const MAX_NAME_BYTES = 255;
const URI_PATTERN = /^([a-z][a-z0-9+.-]*):\/\/([^?#]*)$/s;

/** Path segments (relative to the label directory) for a URI, or the reason it cannot be mapped. */
export function uriToSegments(uri: string): string[] | { problem: string } {
  const match = URI_PATTERN.exec(uri);
  if (!match) return { problem: 'not an absolute scheme://path URI (lowercase scheme, no query or fragment)' };
  const scheme = match[1]!;
  const rawSegments = match[2]!.split('/');
  const segments: string[] = [];
  for (const raw of rawSegments) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      return { problem: `segment "${raw}" has invalid percent-encoding` };
    }
    const problem = nameProblem(decoded);
    if (problem) return { problem: `segment "${raw}": ${problem}` };
    segments.push(decoded);
  }
  if (scheme === SKILL_SCHEME) {
    if (segments[0]!.endsWith(':')) return { problem: 'first segment ends with ":", reserved for scheme directories' };
    return segments;
  }
  return [`${scheme}:`, ...segments];
}

/** The canonical URI for path segments under a label; inverse of uriToSegments for canonical URIs. */
export function segmentsToUri(segments: readonly string[]): string {
  const [first, ...rest] = segments;
  if (first === undefined) return `${SKILL_SCHEME}://`;
  if (first.endsWith(':') && /^[a-z][a-z0-9+.-]*:$/.test(first)) {
    return `${first}//${rest.map(encodeSegment).join('/')}`;
  }
  return `${SKILL_SCHEME}://${segments.map(encodeSegment).join('/')}`;
}

/** Why a string cannot be one path segment under the mount, or undefined. */
export function nameProblem(name: string): string | undefined {
  if (name === '') return 'empty';
  if (name === '.' || name === '..') return 'is a relative reference';
  if (name.includes('/')) return 'contains "/"';
  if (name.includes('\\')) return 'contains a backslash';
  if (name.includes('\0')) return 'contains NUL';
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) return `longer than ${MAX_NAME_BYTES} bytes`;
  return undefined;
}

/** Splits a relative path ("a/b/c", "" for the label root) into segments. */
export function splitPath(path: string): string[] {
  return path === '' ? [] : path.split('/');
}

/** The URI of the ancestor directory `depth` segments deep, spelled as the server spelled `uri`. */
export function ancestorUri(uri: string, depth: number): string {
  const match = URI_PATTERN.exec(uri);
  if (!match) return segmentsToUri([]);
  const scheme = match[1]!;
  const raw = match[2]!.split('/');
  const keep = scheme === SKILL_SCHEME ? depth : depth - 1;
  return `${scheme}://${raw.slice(0, Math.max(0, keep)).join('/')}`;
}
