// What a SkillsService serves from: a snapshot of skills, files and directories, each skill's
// listing entry, and a file's bytes. SkillTree (a folder on disk) is one; the gateway of
// `skills-mount serve` (src/serve/) is another. Nothing here knows where the bytes come from.
import type { SkillEntry } from '../protocol/skills-wire.js';
import type { FileNode, SkillNode, TreeChange, TreeSnapshot } from './skill-tree.js';

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
