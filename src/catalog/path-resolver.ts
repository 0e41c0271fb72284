// Paths nobody listed: asked of the server (skills/get, a directory read, resources/read) and
// added to the tree, or remembered as missing for a negativeTtlMs. Never guesses bytes.
import { NotADirectoryError, NotFoundError } from '../errors.js';
import type { CatalogState } from './catalog-state.js';
import type { ContentFetcher } from './content-fetcher.js';
import type { DirectoryReads } from './directory-reads.js';
import type { NamespaceNode } from './namespace.js';
import type { PathObservations } from './path-observations.js';
import { ancestryOf } from './skill-ancestry.js';
import type { SkillEntries } from './skill-entries.js';
import { nameProblem, segmentsToUri, splitPath } from './uri-path.js';

export class PathResolver {
  constructor(
    private readonly state: CatalogState,
    private readonly observations: PathObservations,
    private readonly entries: SkillEntries,
    private readonly directories: DirectoryReads,
    private readonly fetcher: ContentFetcher,
    private readonly options: { negativeTtlMs: number; now: () => number },
  ) {}

  /** The node at a path the tree does not hold, asking the server; NotFoundError when there is none. */
  async resolve(path: string): Promise<NamespaceNode> {
    const label = this.state.label;
    const segments = splitPath(path);
    const notFound = () => new NotFoundError(`${label}: ${path}: no such file or directory`, { server: label });
    const expiresAtMs = this.observations.misses.get(path);
    if (expiresAtMs !== undefined && expiresAtMs > this.options.now()) throw notFound();
    const name = segments[segments.length - 1];
    if (name === undefined || nameProblem(name)) throw notFound();
    const parentPath = segments.slice(0, -1).join('/');
    const parent = this.state.namespace.get(parentPath) ?? (await this.resolve(parentPath));
    if (parent.kind === 'file') throw new NotADirectoryError(`${label}: ${parentPath} is a file`, { server: label });

    const found = await this.askServer(segments, parentPath, parent.uri).catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
    if (found) return found;
    this.observations.misses.set(path, this.options.now() + this.options.negativeTtlMs);
    throw notFound();
  }

  private async askServer(segments: string[], parentPath: string, parentUri: string): Promise<NamespaceNode | undefined> {
    const path = segments.join('/');
    const name = segments[segments.length - 1]!;
    const around = ancestryOf(this.state, segments);
    const owner = around.manifestOwner;
    if (owner) {
      // The manifest is authoritative for its skill: a file it lacks appears only after skills/get says so.
      if (!this.entries.claimRefresh(owner.uri)) return undefined;
      await this.entries.refresh(owner.uri);
      return this.state.namespace.get(path);
    }
    if (around.declined || around.refused) return undefined;
    // The skills around the parent are the path's, checked just above: only the server's side is left to ask.
    if (this.directories.readable(parentPath)) {
      await this.directories.read(parentPath);
      if (!this.directories.refused) return this.state.namespace.get(path);
    }
    if (parentPath === '' && /^[a-z][a-z0-9+.-]*:$/.test(name)) {
      // A scheme directory exists for every scheme; what is inside is asked for separately.
      this.state.namespace.addDirectory(segments, `${name}//`);
      return this.state.namespace.get(path);
    }
    const uri = childUri(parentUri, name);
    if (name === 'SKILL.md' && this.state.generation === 'listing') {
      const registered = await this.entries.register(uri);
      if (registered) return this.state.namespace.get(path);
    }
    try {
      const content = await this.fetcher.fetchResource(uri);
      this.state.namespace.addFile(segments, { uri, sizeBytes: undefined, digest: undefined, frontmatter: undefined, skillUri: undefined });
      this.fetcher.keepUnlisted(content);
      return this.state.namespace.get(path);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
    }
    // Not a file. Inside a skill whose files nobody enumerates (index generation, dynamic
    // skills) on a server without directory reads, nothing can tell a directory from a
    // typo, and relative references like references/GUIDE.md must resolve: presume a directory.
    // (Walked again: the tree may have changed while the server was asked.)
    if (ancestryOf(this.state, segments).insideUnenumerated) {
      this.state.namespace.addDirectory(segments, uri);
      return this.state.namespace.get(path);
    }
    // Perhaps the root of a skill nobody listed.
    const skillUri = `${uri}/SKILL.md`;
    if (this.state.generation === 'listing') {
      return (await this.entries.register(skillUri)) ? this.state.namespace.get(path) : undefined;
    }
    const content = await this.fetcher.fetchResource(skillUri);
    this.state.namespace.addFile([...segments, 'SKILL.md'], { uri: skillUri, sizeBytes: undefined, digest: undefined, frontmatter: undefined, skillUri: undefined });
    this.fetcher.keepUnlisted(content);
    return this.state.namespace.get(path);
  }
}

/** The URI of a child named `name` in the directory `parentUri`, spelled canonically. */
function childUri(parentUri: string, name: string): string {
  const encoded = segmentsToUri([name]).slice('skill://'.length);
  return parentUri.endsWith('//') ? `${parentUri}${encoded}` : `${parentUri}/${encoded}`;
}
