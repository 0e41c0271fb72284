// The tree of one server's paths that are known without asking: files with what is
// known of them, directories with their known children. First claim on a path wins;
// a conflicting claim is reported, never silently merged.
import { ancestorUri } from './uri-path.js';

/** What is known of one file before its bytes are fetched. */
export interface FileFacts {
  uri: string;
  sizeBytes: number | undefined;
  /** Listing digest: reads must match it. */
  digest: string | undefined;
  /** For a skill's own SKILL.md: the entry's frontmatter, compared on every read. */
  frontmatter: Record<string, unknown> | undefined;
  /** URI of the SKILL.md whose entry vouches for this file, if any. */
  skillUri: string | undefined;
  /** Set when two entries (a skill and one nested in it) vouch for different bytes: no read can verify. */
  conflict?: string;
}

/**
 * Names of a directory's children. Most directories hold a handful, and a Map per
 * directory cost ~350 bytes per listed skill (docs/benchmarks.md), so small ones are a
 * plain array; a directory that grows past SET_THRESHOLD names switches to a Set.
 */
export type ChildNames = string[] | Set<string>;
const SET_THRESHOLD = 32;
/** Every skill directory has one: keep a single copy of the string. */
const SKILL_MD = 'SKILL.md';

export type NamespaceNode = { kind: 'file'; facts: FileFacts } | { kind: 'directory'; uri: string; children: ChildNames };

/** The child names of a directory node, in insertion order. */
export function childNames(children: ChildNames): string[] {
  return [...children];
}

export class Namespace {
  private readonly nodes = new Map<string, NamespaceNode>();
  readonly problems: string[] = [];

  constructor(rootUri: string) {
    this.nodes.set('', { kind: 'directory', uri: rootUri, children: [] });
  }

  get(path: string): NamespaceNode | undefined {
    return this.nodes.get(path);
  }

  /**
   * Adds a file and its ancestor directories; returns false (and records why) on a conflict.
   * Given the path as a string, that string itself becomes the key (no copy per file).
   */
  addFile(where: readonly string[] | string, facts: FileFacts): boolean {
    const path = typeof where === 'string' ? where : where.join('/');
    const segments = typeof where === 'string' ? where.split('/') : where;
    const existing = this.nodes.get(path);
    if (existing) {
      if (existing.kind === 'file' && existing.facts.uri === facts.uri) {
        existing.facts = mergeFacts(existing.facts, facts);
        return true;
      }
      this.problems.push(`${facts.uri} maps to "${path}", already taken by ${describe(existing)}`);
      return false;
    }
    if (!this.addParents(segments, facts.uri)) return false;
    this.nodes.set(path, { kind: 'file', facts });
    this.addChild(segments.slice(0, -1), segments[segments.length - 1]!);
    return true;
  }

  /** Why a file at `path` for `uri` could not be added (without adding it), or undefined. */
  fileConflict(path: string, uri: string): string | undefined {
    const existing = this.nodes.get(path);
    if (existing && !(existing.kind === 'file' && existing.facts.uri === uri)) return `${uri} maps to "${path}", already taken by ${describe(existing)}`;
    for (let end = path.indexOf('/'); end !== -1; end = path.indexOf('/', end + 1)) {
      const parent = this.nodes.get(path.slice(0, end));
      if (parent?.kind === 'file') return `${uri} needs "${path.slice(0, end)}" to be a directory, but it is the file ${parent.facts.uri}`;
    }
    return undefined;
  }

  /** Adds a directory and its ancestors; returns false on a conflict with a file. */
  addDirectory(segments: readonly string[], uri: string): boolean {
    const path = segments.join('/');
    const existing = this.nodes.get(path);
    if (existing) {
      if (existing.kind === 'directory') return true;
      this.problems.push(`directory ${uri} maps to "${path}", already taken by ${describe(existing)}`);
      return false;
    }
    if (!this.addParents(segments, uri)) return false;
    this.nodes.set(path, { kind: 'directory', uri, children: [] });
    this.addChild(segments.slice(0, -1), segments[segments.length - 1]!);
    return true;
  }

  /** Updates what is known of a file already present (a refreshed entry, a measured size). */
  updateFile(path: string, facts: Partial<FileFacts>): void {
    const node = this.nodes.get(path);
    if (node?.kind === 'file') node.facts = { ...node.facts, ...facts };
  }

  private addParents(segments: readonly string[], uri: string): boolean {
    for (let depth = 1; depth < segments.length; depth++) {
      const parent = segments.slice(0, depth);
      const path = parent.join('/');
      const existing = this.nodes.get(path);
      if (existing?.kind === 'file') {
        this.problems.push(`${uri} needs "${path}" to be a directory, but it is the file ${existing.facts.uri}`);
        return false;
      }
    }
    for (let depth = 1; depth < segments.length; depth++) {
      const parent = segments.slice(0, depth);
      const path = parent.join('/');
      if (this.nodes.has(path)) continue;
      this.nodes.set(path, { kind: 'directory', uri: ancestorUri(uri, depth), children: [] });
      this.addChild(parent.slice(0, -1), parent[parent.length - 1]!);
    }
    return true;
  }

  /** Records `name` under the directory at `segments` (callers add each path once). */
  private addChild(segments: readonly string[], name: string): void {
    const node = this.nodes.get(segments.join('/'));
    if (node?.kind !== 'directory') return;
    if (!Array.isArray(node.children)) {
      node.children.add(name);
    } else if (node.children.length === 0) {
      // A fresh literal holds exactly one slot; a first push would reserve 17.
      node.children = [name === SKILL_MD ? SKILL_MD : name];
    } else if (node.children.length < SET_THRESHOLD) {
      node.children.push(name);
    } else {
      node.children = new Set([...node.children, name]);
    }
  }
}

/**
 * Facts vouched for by a listing digest are never replaced by facts without one; two digests
 * that disagree (an enclosing skill and a nested one listing the file differently) are a
 * conflict: the file must verify against every entry that lists it, and no bytes can.
 */
function mergeFacts(existing: FileFacts, incoming: FileFacts): FileFacts {
  if (existing.digest !== undefined && incoming.digest !== undefined && (existing.digest !== incoming.digest || existing.sizeBytes !== incoming.sizeBytes)) {
    const as = (facts: FileFacts) => `${facts.skillUri ?? 'an entry'} as ${facts.digest} (${facts.sizeBytes} bytes)`;
    return { ...existing, conflict: `listed by ${as(existing)} and by ${as(incoming)}` };
  }
  const merged = { ...existing };
  const incomingWins = incoming.digest !== undefined || existing.digest === undefined;
  for (const key of Object.keys(incoming) as Array<keyof FileFacts>) {
    const value = incoming[key];
    if (value === undefined) continue;
    if (incomingWins || merged[key] === undefined) (merged as Record<string, unknown>)[key] = value;
  }
  return merged;
}

function describe(node: NamespaceNode): string {
  return node.kind === 'file' ? `the file ${node.facts.uri}` : `the directory ${node.uri}`;
}
