// resources/directory/read: when a directory read can say more than listings did, one read per
// directory at a time, and adding what it names to the tree. Knows nothing of file content.
import { NotSupportedError, SkillsMountError } from '../errors.js';
import type { SkillSource } from '../mcp/skill-source.js';
import { DIRECTORY_MIME_TYPE } from '../protocol/skills-wire.js';
import type { CatalogState } from './catalog-state.js';
import { childNames, type NamespaceNode } from './namespace.js';
import type { PathObservations } from './path-observations.js';
import type { ServerLog } from './server-log.js';
import { ancestryOf } from './skill-ancestry.js';
import type { SkillEntries } from './skill-entries.js';
import { splitPath, uriToSegments } from './uri-path.js';

export class DirectoryReads {
  /** The server declared directoryRead, then answered -32601: use what is known instead, until it reconnects. */
  private refusedByServer = false;

  constructor(
    private readonly source: SkillSource,
    private readonly state: CatalogState,
    private readonly observations: PathObservations,
    private readonly entries: SkillEntries,
    private readonly log: ServerLog,
    private readonly options: { directoryTtlMs: number; now: () => number },
  ) {}

  /** The server answered a declared directoryRead with -32601. */
  get refused(): boolean {
    return this.refusedByServer;
  }

  /** A reconnected server is asked again. */
  reconnected(): void {
    this.refusedByServer = false;
  }

  /** readdir: the names of a directory's children, read from the server first when that can say more. */
  async names(path: string, directory: NamespaceNode): Promise<string[]> {
    let node = directory;
    if (this.shouldRead(path)) {
      try {
        await this.read(path);
      } catch (error) {
        // What listings put in this directory is known without the server: a failed (or
        // refused: "not a directory resource" for a prefix directory) read shows that.
        // With nothing known, the failure is the answer, never an empty directory.
        if (!(error instanceof SkillsMountError) || node.kind !== 'directory' || childNames(node.children).length === 0) throw error;
        this.log.rememberOnce(`resources/directory/read ${node.uri} failed (${error.message}); showing the children listings named`);
      }
      node = this.state.namespace.get(path) ?? node;
    }
    return node.kind === 'directory' ? childNames(node.children) : [];
  }

  /** The server can be asked for this directory at all (not the label directory, not a scheme directory). */
  readable(path: string): boolean {
    if (!this.source.features().directoryRead || this.refusedByServer || path === '') return false;
    const segments = splitPath(path);
    return !(segments.length === 1 && segments[0]!.endsWith(':'));
  }

  /** A directory read can say something about this directory that the tree does not. */
  shouldRead(path: string): boolean {
    if (!this.readable(path)) return false;
    const around = ancestryOf(this.state, splitPath(path));
    const own = around.own;
    // Inside a skill with a manifest, the manifest already says everything a directory read could.
    const manifestOwner = own && Array.isArray(own.files) && !own.declined ? own : around.manifestOwner;
    return !manifestOwner && !around.declined && !around.refused;
  }

  /** One read of the directory at a time; a successful one stands for directoryTtlMs. */
  async read(path: string): Promise<void> {
    const reads = this.observations.directoryReads;
    const state = reads.get(path);
    if (state?.pending) return state.pending;
    if (state && this.options.now() - state.atMs < this.options.directoryTtlMs) return;
    // Only a read that succeeded stands for the directory; a failure is never remembered as an answer.
    const pending: Promise<void> = this.fetch(path).then(
      () => {
        if (reads.get(path)?.pending === pending) reads.set(path, { atMs: this.options.now() });
      },
      (error: unknown) => {
        if (reads.get(path)?.pending === pending) reads.delete(path);
        throw error;
      },
    );
    reads.set(path, { atMs: state?.atMs ?? Number.NEGATIVE_INFINITY, pending });
    return pending;
  }

  private async fetch(path: string): Promise<void> {
    const directory = this.state.namespace.get(path);
    if (directory?.kind !== 'directory') return;
    const parentSegments = splitPath(path);
    let listing;
    try {
      listing = await this.source.readDirectory(directory.uri);
    } catch (error) {
      if (!(error instanceof NotSupportedError)) throw error;
      this.refusedByServer = true;
      this.log.remember(`resources/directory/read ${directory.uri}: declared in capabilities but answered -32601; directories show what listings and lookups found`);
      return;
    }
    for (const problem of listing.problems) this.log.remember(`resources/directory/read ${directory.uri}: ${problem}`);
    const children: Array<{ segments: string[]; uri: string; isDirectory: boolean; sizeBytes: number | undefined }> = [];
    const seen = new Set<string>();
    for (const child of listing.items) {
      const segments = uriToSegments(child.uri);
      if ('problem' in segments) {
        this.log.remember(`resources/directory/read ${directory.uri}: child ${child.uri}: ${segments.problem}`);
        continue;
      }
      const isDirectChild = segments.length === parentSegments.length + 1 && parentSegments.every((segment, i) => segments[i] === segment);
      if (!isDirectChild) {
        this.log.remember(`resources/directory/read ${directory.uri}: child ${child.uri} is not inside the directory`);
        continue;
      }
      const name = segments[segments.length - 1]!;
      if (seen.has(name)) {
        this.log.remember(`resources/directory/read ${directory.uri}: child "${name}" listed twice; the first is used`);
        continue;
      }
      seen.add(name);
      children.push({ segments, uri: child.uri, isDirectory: child.mimeType === DIRECTORY_MIME_TYPE, sizeBytes: child.size });
    }
    // A skill seen only through a directory read: its entry must come first (skills/get), so
    // its manifest governs its files; an invalid or declined entry leaves the directory empty,
    // and only a SKILL.md the server says is no skill at all is an ordinary file.
    const skillMd = children.find((child) => !child.isDirectory && child.segments[child.segments.length - 1] === 'SKILL.md');
    if (skillMd && this.state.generation === 'listing' && !this.state.records.has(skillMd.uri)) {
      if (await this.entries.register(skillMd.uri)) return;
      const around = ancestryOf(this.state, skillMd.segments);
      if (around.refused || around.declinedAbove) return;
    }
    for (const child of children) {
      if (child.isDirectory) this.state.namespace.addDirectory(child.segments, child.uri);
      else this.state.namespace.addFile(child.segments, { uri: child.uri, sizeBytes: child.sizeBytes, digest: undefined, frontmatter: undefined, skillUri: undefined });
    }
    for (const problem of this.state.namespace.problems.splice(0)) this.log.remember(problem);
  }
}
