// Properties of frontmatter comparison (frontmatterDifference), which decides whether a
// served SKILL.md matches its listing: reflexive, symmetric, blind to key order, and
// blind to no single-field change.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { frontmatterDifference } from '../../src/format/frontmatter.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** JSON-shaped frontmatter (what YAML's core schema and JSON listings both produce). */
const frontmatter = fc
  .dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 8 })
  .map((value) => JSON.parse(JSON.stringify(value)) as Record<string, Json>);

/** The same content with every object's keys in a shuffled order. */
function reorder(value: Json, seed: number): Json {
  if (Array.isArray(value)) return value.map((item, i) => reorder(item, seed + i));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  const shuffled = keys.map((key, i) => [key, (seed * 31 + i * 17) % (keys.length + 7)] as const).sort((a, b) => a[1] - b[1]);
  // fromEntries defines own properties, so a "__proto__" key stays a key.
  return Object.fromEntries(shuffled.map(([key]) => [key, reorder(value[key]!, seed + key.length)]));
}

/** Every path to a value inside `value`, as key/index lists. */
function paths(value: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const here = prefix.length ? [prefix] : [];
  if (Array.isArray(value)) return [...here, ...value.flatMap((item, i) => paths(item, [...prefix, i]))];
  if (value !== null && typeof value === 'object') return [...here, ...Object.keys(value).flatMap((key) => paths(value[key]!, [...prefix, key]))];
  return here;
}

function withChange(value: Json, at: Array<string | number>, replacement: Json): Json {
  if (at.length === 0) return replacement;
  const [head, ...rest] = at;
  if (Array.isArray(value)) return value.map((item, i) => (i === head ? withChange(item, rest, replacement) : item));
  const object = value as Record<string, Json>;
  return { ...object, [head!]: withChange(object[head as string]!, rest, replacement) };
}

describe('frontmatter comparison properties', () => {
  it('is reflexive: a value equals its own deep copy', () => {
    fc.assert(
      fc.property(frontmatter, (a) => {
        expect(frontmatterDifference(a, structuredClone(a))).toBeUndefined();
      }),
      { numRuns: 2_000 },
    );
  });

  it('is symmetric in detecting a difference', () => {
    fc.assert(
      fc.property(frontmatter, frontmatter, (a, b) => {
        expect(frontmatterDifference(a, b) === undefined).toBe(frontmatterDifference(b, a) === undefined);
      }),
      { numRuns: 2_000 },
    );
  });

  it('ignores key order at every depth', () => {
    fc.assert(
      fc.property(frontmatter, fc.nat(), (a, seed) => {
        expect(frontmatterDifference(a, reorder(a, seed))).toBeUndefined();
      }),
      { numRuns: 2_000 },
    );
  });

  it('detects any single-field change, naming a field on the way to it', () => {
    fc.assert(
      fc.property(frontmatter, fc.nat(), fc.jsonValue({ maxDepth: 2 }), (a, pick, raw) => {
        const all = paths(a);
        fc.pre(all.length > 0);
        const at = all[pick % all.length]!;
        const replacement = JSON.parse(JSON.stringify(raw)) as Json;
        const before = at.reduce<Json>((node, key) => (node as Record<string, Json>)[key as string]!, a);
        fc.pre(JSON.stringify(before) !== JSON.stringify(replacement) || typeof before !== typeof replacement);
        const changed = withChange(a, at, replacement);
        const field = frontmatterDifference(a, changed);
        expect(field).toBeDefined();
        // The reported field starts with the changed field's top-level key.
        expect(field!.startsWith(String(at[0]))).toBe(true);
        expect(frontmatterDifference(changed, a)).toBeDefined();
      }),
      { numRuns: 3_000 },
    );
  });

  it('detects an added or removed key', () => {
    fc.assert(
      fc.property(frontmatter, fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 1 }), (a, key, value) => {
        fc.pre(!(key in a));
        const b = { ...a, [key]: JSON.parse(JSON.stringify(value)) as Json };
        const named = key === '' ? '""' : key;
        expect(frontmatterDifference(a, b)).toBe(named);
        expect(frontmatterDifference(b, a)).toBe(named);
      }),
      { numRuns: 1_000 },
    );
  });
});
