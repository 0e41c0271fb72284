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
}

export type NamespaceNode = { kind: 'file'; facts: FileFacts } | { kind: 'directory'; uri: string; children: Map<string, 'file' | 'directory'> };

export class Namespace {
  private readonly nodes = new Map<string, NamespaceNode>();
  readonly problems: string[] = [];

  constructor(rootUri: string) {
    this.nodes.set('', { kind: 'directory', uri: rootUri, children: new Map() });
  }

  get(path: string): NamespaceNode | undefined {
    return this.nodes.get(path);
  }

  /** Adds a file and its ancestor directories; returns false (and records why) on a conflict. */
  addFile(segments: readonly string[], facts: FileFacts): boolean {
    const path = segments.join('/');
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
    this.childrenOf(segments.slice(0, -1))?.set(segments[segments.length - 1]!, 'file');
    return true;
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
    this.nodes.set(path, { kind: 'directory', uri, children: new Map() });
    this.childrenOf(segments.slice(0, -1))?.set(segments[segments.length - 1]!, 'directory');
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
      this.nodes.set(path, { kind: 'directory', uri: ancestorUri(uri, depth), children: new Map() });
      this.childrenOf(parent.slice(0, -1))?.set(parent[parent.length - 1]!, 'directory');
    }
    return true;
  }

  private childrenOf(segments: readonly string[]): Map<string, 'file' | 'directory'> | undefined {
    const node = this.nodes.get(segments.join('/'));
    return node?.kind === 'directory' ? node.children : undefined;
  }
}

/** Facts vouched for by a listing digest are never replaced by facts without one. */
function mergeFacts(existing: FileFacts, incoming: FileFacts): FileFacts {
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
