// What a SkillsService serves from: a snapshot of skills, files and directories, each skill's
// listing entry, and a file's bytes. SkillTree (a folder on disk) is one; the gateway of
// `skills-mount serve` (src/serve/) is another. Nothing here knows where the bytes come from.
import type { ServerContext } from '@modelcontextprotocol/server';
import type { SkillEntry } from '../protocol/skills-wire.js';

export interface FileNode {
  uri: string;
  rel: string;
  name: string;
  path: string;
  size: number;
  version: string;
  mimeType: string;
}

export interface SkillNode {
  /** URI of the skill's SKILL.md. */
  uri: string;
  rel: string;
  frontmatter: Record<string, unknown>;
  skillMdDigest: string;
  /** Complete manifest: SKILL.md first, then every file below the skill root (nested skills' too). */
  files: readonly FileNode[];
}

export interface DirectoryChild {
  uri: string;
  name: string;
  mimeType: string;
  size?: number;
}

export interface TreeSnapshot {
  readonly files: ReadonlyMap<string, FileNode>;
  /** Served skills, sorted by URI. */
  readonly skills: readonly SkillNode[];
  readonly skillsByUri: ReadonlyMap<string, SkillNode>;
  /** Directory URI -> children sorted by URI. */
  readonly directories: ReadonlyMap<string, readonly DirectoryChild[]>;
}

export interface TreeChange {
  previous: TreeSnapshot;
  current: TreeSnapshot;
}

/** One answered skills/get or resources/read, with the request's context (session, auth). */
export interface ServedRequest {
  method: 'skills/get' | 'resources/read';
  /** The URI as the client asked for it. */
  uri: string;
  ctx: ServerContext;
}

export interface ServedTree {
  /** The current snapshot; replaced whole on change, never mutated. */
  readonly snapshot: TreeSnapshot;
  /** Subscribes to snapshot changes; returns the unsubscribe function. */
  onChange(listener: (change: TreeChange) => void): () => void;
  /** The skill's listing entry (uri, verbatim frontmatter, complete manifest or "dynamic"). */
  entry(skill: SkillNode): Promise<SkillEntry>;
  /** The exact bytes of a served file; NotFoundError when it is no longer there. */
  read(file: FileNode): Promise<Buffer>;
  /** A file the snapshot does not list but serves (a "dynamic" skill's), by canonical URI. */
  lookup?(uri: string): FileNode | undefined;
  /** The index-generation catalog (`skill://index.json`) of a snapshot. */
  indexText(snapshot?: TreeSnapshot): string;
}
