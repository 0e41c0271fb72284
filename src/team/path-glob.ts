// Globs over a skill's folder path under its server ("acme/**", "team/*/review"), as a policy
// names skills: matched segment by segment with no regular expression, so nothing in a pattern
// or a path is ever code. Knows paths and patterns only.

/** A pattern element: `**` (any number of segments, none included) or one segment's glob. */
type Element = { kind: 'any-segments' } | { kind: 'segment'; chars: readonly string[] };

/** Why a pattern cannot name a skill folder, or undefined when it can. */
export function pathGlobProblem(pattern: string): string | undefined {
  if (pattern === '') return 'is empty';
  if (pattern.startsWith('/')) return 'starts with "/" (a skill path is relative to its server: "acme/**", not "/acme/**")';
  if (pattern.includes('\u0000')) return 'holds a NUL character';
  for (const segment of pattern.split('/')) {
    if (segment === '') return 'has an empty segment ("//" or a trailing "/")';
    if (segment === '.' || segment === '..') return `has a "${segment}" segment (skill paths are matched as listed, never resolved)`;
  }
  return undefined;
}

/**
 * A compiled path pattern: `*` any characters within one segment, `?` one character, `**` as a
 * whole segment any number of segments (none included); every other character stands for itself.
 */
export class PathGlob {
  readonly #elements: readonly Element[];

  private constructor(readonly pattern: string) {
    this.#elements = pattern.split('/').map((segment): Element => (segment === '**' ? { kind: 'any-segments' } : { kind: 'segment', chars: Array.from(segment) }));
  }

  /** The compiled pattern; throws a TypeError naming the problem when pathGlobProblem() has one. */
  static compile(pattern: string): PathGlob {
    const problem = pathGlobProblem(pattern);
    if (problem !== undefined) throw new TypeError(`path pattern ${JSON.stringify(pattern)} ${problem}`);
    return new PathGlob(pattern);
  }

  /**
   * Whether `skillPath` (e.g. "acme/billing/refunds") matches. A path that is not a plain relative
   * folder path (empty, absolute, with empty, "." or ".." segments) matches nothing.
   */
  matches(skillPath: string): boolean {
    if (pathGlobProblem(skillPath) !== undefined) return false;
    return matchSequence(this.#elements, skillPath.split('/'), (element) => element.kind === 'any-segments', matchElement);
  }
}

function matchElement(element: Element, segment: string): boolean {
  if (element.kind === 'any-segments') return false; // handled as the wildcard by matchSequence
  return matchSequence(element.chars, Array.from(segment), (char) => char === '*', (char, actual) => char === '?' || char === actual);
}

/**
 * Wildcard matching over sequences: `isStar` elements take any run of items (none included),
 * others one item each (`one`). Greedy with one backtrack point, as for shell globs: linear
 * in practice and never worse than |pattern| × |items| steps, whatever the input.
 */
function matchSequence<P, T>(pattern: readonly P[], items: readonly T[], isStar: (element: P) => boolean, one: (element: P, item: T) => boolean): boolean {
  let p = 0;
  let i = 0;
  let starAt = -1;
  let resumeAt = 0;
  while (i < items.length) {
    const element = pattern[p];
    if (element !== undefined && isStar(element)) {
      starAt = p++;
      resumeAt = i;
    } else if (element !== undefined && one(element, items[i]!)) {
      p++;
      i++;
    } else if (starAt >= 0) {
      p = starAt + 1;
      i = ++resumeAt;
    } else {
      return false;
    }
  }
  while (p < pattern.length && isStar(pattern[p]!)) p++;
  return p === pattern.length;
}
