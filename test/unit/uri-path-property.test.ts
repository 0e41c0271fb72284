// Properties of the URI <-> path mapping beyond test/unit/uri-path.test.ts: round trips
// through scheme directories, canonical spellings, confinement under the label for URIs
// built from escape attempts, and one URI per path once a Namespace holds them.
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Namespace } from '../../src/catalog/namespace.js';
import { nameProblem, segmentsToUri, uriToSegments } from '../../src/catalog/uri-path.js';
import { parseSkillUri, uriForPath } from '../../src/server/skill-uri.js';

const LABEL_DIR = '/mnt/label';

/** Any valid file name: arbitrary code points, percent signs and colons included. */
const validName = fc.string({ minLength: 1, maxLength: 30, unit: 'binary' }).filter((name) => nameProblem(name) === undefined);
/** Names with letters and digits, which have more than one spelling in a URI. */
const wordName = fc.stringMatching(/^[A-Za-z0-9 %é._-]{1,12}$/).filter((name) => nameProblem(name) === undefined);
/** Escape attempts, spelled every way a server might. */
const hostileToken = fc.constantFrom('..', '.', '%2e', '%2E', '%2e%2e', '%2f', '%2F', '%5c', '\\', '%00', '\0', '/', '//', '', 'a', 'b', 'ü', '%', '%zz', ':', 'x:', '?', '#', '%3a', 'n'.repeat(200));
const hostileUri = fc
  .tuple(fc.constantFrom('skill://', 'github://', 'file://', 'Skill://', '', '/', 'skill:/', 'x+y.z://'), fc.array(hostileToken, { maxLength: 8 }))
  .map(([prefix, tokens]) => prefix + tokens.join(''));
/** A URI of any shape: hostile tokens or plain random text after a scheme. */
const anyUri = fc.oneof(hostileUri, fc.string({ maxLength: 60, unit: 'binary' }).map((tail) => `skill://${tail}`));

/** Another spelling of the same URI: some unreserved characters percent-encoded. */
function respell(uri: string, mask: number): string {
  const [scheme, rest] = [uri.slice(0, uri.indexOf('://') + 3), uri.slice(uri.indexOf('://') + 3)];
  let i = 0;
  // Existing escapes stay as they are; only plain letters and digits get another spelling.
  return scheme + rest.replace(/%[0-9A-F]{2}|[A-Za-z0-9]/g, (token) => (token.length === 1 && (mask >> i++ % 30) & 1 ? `%${token.charCodeAt(0).toString(16).toUpperCase()}` : token));
}

describe('URI <-> path properties', () => {
  it('round trip: segments -> URI -> the same segments, under skill:// and scheme directories', () => {
    const scheme = fc.stringMatching(/^[a-z][a-z0-9+.-]{0,8}$/).filter((s) => s !== 'skill');
    fc.assert(
      fc.property(fc.option(scheme, { nil: undefined }), fc.array(validName, { minLength: 1, maxLength: 6 }), (schemeName, names) => {
        const segments = schemeName === undefined ? names : [`${schemeName}:`, ...names];
        // A skill:// path may not start with a name that looks like a scheme directory.
        fc.pre(schemeName !== undefined || !names[0]!.endsWith(':'));
        expect(uriToSegments(segmentsToUri(segments))).toEqual(segments);
      }),
      { numRuns: 2_000 },
    );
  });

  it('one codec for both sides: the URI skills-serve publishes for a path is the one the mount maps back to it, spelled alike', () => {
    fc.assert(
      fc.property(fc.array(validName, { minLength: 1, maxLength: 6 }), (names) => {
        fc.pre(!names[0]!.endsWith(':'));
        const published = uriForPath(names.join('/'));
        expect(uriToSegments(published)).toEqual(names);
        expect(segmentsToUri(names)).toBe(published);
        expect(parseSkillUri(published)).toEqual({ ok: true, segments: names, canonical: published });
      }),
      { numRuns: 2_000 },
    );
  });

  it('canonical: any URI that maps re-spells to a URI mapping to the same path', () => {
    fc.assert(
      fc.property(anyUri, (uri) => {
        const segments = uriToSegments(uri);
        if (!Array.isArray(segments)) return;
        expect(uriToSegments(segmentsToUri(segments))).toEqual(segments);
      }),
      { numRuns: 5_000 },
    );
  });

  it('confinement: no URI, however spelled, maps outside its label directory', () => {
    fc.assert(
      fc.property(anyUri, (uri) => {
        const segments = uriToSegments(uri);
        if (!Array.isArray(segments)) return;
        expect(segments.length).toBeGreaterThan(0);
        const joined = path.posix.join(LABEL_DIR, ...segments);
        // Nothing collapses or escapes: the path is exactly label + segments, strictly inside.
        expect(joined).toBe(`${LABEL_DIR}/${segments.join('/')}`);
        expect(path.posix.relative(LABEL_DIR, joined).split('/')).toEqual(segments);
        for (const segment of segments) {
          expect(nameProblem(segment)).toBeUndefined();
          expect(Buffer.byteLength(segment)).toBeLessThanOrEqual(255);
        }
        // Only a scheme directory (never a skill:// name) may end the first segment with ":".
        if (uri.startsWith('skill://')) expect(segments[0]!.endsWith(':')).toBe(false);
      }),
      { numRuns: 10_000 },
    );
  });

  it('different spellings of one path map to it, and a Namespace gives the path to the first only', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(validName, wordName), { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 2 ** 30 - 1 }), (names, mask) => {
        fc.pre(!names[0]!.endsWith(':'));
        const canonical = segmentsToUri(names);
        const other = respell(canonical, mask);
        fc.pre(other !== canonical);
        expect(uriToSegments(other)).toEqual(names);
        const namespace = new Namespace('skill://');
        const facts = (uri: string) => ({ uri, sizeBytes: 1, digest: undefined, frontmatter: undefined, skillUri: undefined });
        expect(namespace.addFile(names, facts(canonical))).toBe(true);
        expect(namespace.addFile(names, facts(other))).toBe(false);
        const node = namespace.get(names.join('/'));
        expect(node?.kind === 'file' && node.facts.uri).toBe(canonical);
        expect(namespace.problems).toHaveLength(1);
        expect(namespace.problems[0]).toContain(other);
      }),
      { numRuns: 2_000 },
    );
  });

  it('a Namespace filled from any URIs holds one URI per path, and every refusal is recorded', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(anyUri, fc.boolean()), { maxLength: 40 }), (claims) => {
        const namespace = new Namespace('skill://');
        const claimsByPath = new Map<string, Set<string>>();
        let refused = 0;
        for (const [uri, asDirectory] of claims) {
          const segments = uriToSegments(uri);
          if (!Array.isArray(segments)) continue;
          const added = asDirectory
            ? namespace.addDirectory(segments, uri)
            : namespace.addFile(segments, { uri, sizeBytes: undefined, digest: undefined, frontmatter: undefined, skillUri: undefined });
          if (!added) refused += 1;
          else if (!asDirectory) claimsByPath.set(segments.join('/'), (claimsByPath.get(segments.join('/')) ?? new Set()).add(uri));
        }
        expect(namespace.problems).toHaveLength(refused);
        // A path a file holds answers with one URI: the one that was accepted there.
        for (const [pathKey, uris] of claimsByPath) {
          expect(uris.size).toBe(1);
          const node = namespace.get(pathKey);
          expect(node?.kind).toBe('file');
          expect(uris.has(node?.kind === 'file' ? node.facts.uri : '')).toBe(true);
        }
      }),
      { numRuns: 3_000 },
    );
  });
});
