// The SDK's SkillSource over a ServedTree (a SkillTree, or the gateway's view): what the
// SkillsExtension serves (entries, file bytes, directories, resources/list) and what the index mode reads. Lookups go through the
// current snapshot only, so nothing the tree did not publish can be named; no MCP wiring here.
import type { Resource } from '@modelcontextprotocol/server';
import type { Skill, SkillReadResult, SkillSource } from '@modelcontextprotocol/server/ext/skills';
import { NotFoundError } from '../errors.js';
import { INDEX_URI } from '../protocol/skills-wire.js';
import { indexAfter, paginate } from './cursor.js';
import { decodeText, mimeTypeForContent } from './mime.js';
import type { SkillNode } from './skill-tree.js';
import type { ServedTree } from './served-tree.js';
import { parseSkillUri } from './skill-uri.js';

export interface TreeSourceOptions {
  /** Items per page of skills/list and directory reads. */
  pageSize: number;
  /** Publish `skill://index.json` (the index generation). */
  serveIndex: boolean;
  /** Answer resources/directory/read (its presence is what declares `directoryRead`). */
  directoryRead: boolean;
}

/** A SkillSource (both ctx-free and SDK-shaped) reading `tree`'s current snapshot. */
export type TreeSkillSource = SkillSource & {
  list(params: { cursor?: string }): Promise<{ skills: Skill[]; nextCursor?: string }>;
  get(uri: string): Promise<Skill | undefined>;
};

const ROOT_URI = 'skill://';
const INDEX_RESOURCE: Resource = {
  uri: INDEX_URI,
  name: 'index.json',
  description: 'Index of the skills this server serves',
  mimeType: 'application/json',
};

/** The tree as a SkillSource; every call reads the snapshot current at that moment. */
export function treeSkillSource(tree: ServedTree, options: TreeSourceOptions): TreeSkillSource {
  const canonical = (uri: string): string | undefined => {
    const parsed = parseSkillUri(uri);
    return parsed.ok ? parsed.canonical : undefined;
  };
  // A client that got a page with a cursor usually asks for the next one: start hashing its
  // files now, so a cold listing's reads overlap the round trip instead of following it.
  // One page ahead at most; entries are memoized per snapshot, so nothing is read twice.
  const prefetch = (all: readonly SkillNode[], page: readonly SkillNode[]): void => {
    const start = indexAfter(all, page.at(-1)!.uri, (skill) => skill.uri);
    for (const skill of all.slice(start, start + options.pageSize)) void tree.entry(skill).catch(() => {});
  };
  const source: TreeSkillSource = {
    async list({ cursor }) {
      const all = tree.snapshot.skills;
      const { page, nextCursor } = paginate(all, cursor, options.pageSize, (skill) => skill.uri);
      const skills = (await Promise.all(page.map((skill) => tree.entry(skill)))) as Skill[];
      if (nextCursor !== undefined) prefetch(all, page);
      return nextCursor === undefined ? { skills } : { skills, nextCursor };
    },
    async get(uri) {
      const key = canonical(uri);
      const skill = key === undefined ? undefined : tree.snapshot.skillsByUri.get(key);
      return skill && ((await tree.entry(skill)) as Skill);
    },
    async read(uri): Promise<SkillReadResult | undefined> {
      if (uri === INDEX_URI) return options.serveIndex ? { text: tree.indexText(), mimeType: 'application/json' } : undefined;
      const key = canonical(uri);
      const file = key === undefined ? undefined : (tree.snapshot.files.get(key) ?? tree.lookup?.(key));
      if (!file) return undefined;
      let bytes: Buffer;
      try {
        bytes = await tree.read(file);
      } catch (error) {
        // Gone, or swapped for a link leading outside since the scan: not served.
        if (error instanceof NotFoundError) return undefined;
        throw error;
      }
      const text = decodeText(bytes);
      return text === undefined
        ? { bytes, mimeType: mimeTypeForContent(file.name, false) }
        : { text, mimeType: mimeTypeForContent(file.name, true) };
    },
    async listResources() {
      const snapshot = tree.snapshot;
      const skills = snapshot.skills.map((skill) => ({
        uri: skill.uri,
        name: String(skill.frontmatter.name),
        description: String(skill.frontmatter.description),
        mimeType: 'text/markdown',
        // A "dynamic" skill (the gateway's --include-dynamic) has no manifest, so no size.
        ...(skill.files[0] && { size: skill.files[0].size }),
      }));
      return options.serveIndex ? [INDEX_RESOURCE, ...skills] : skills;
    },
  };
  if (options.directoryRead) {
    source.readDirectory = async (uri, { cursor }) => {
      // skill:// (beyond the spec) lists the top level, so a mount can list its root; it shows
      // directories only: skill://index.json is a discovery resource, not part of the tree.
      const key = uri === ROOT_URI ? ROOT_URI : canonical(uri);
      const children = key === undefined ? undefined : (tree.snapshot.directories.get(key) ?? (key === ROOT_URI ? [] : undefined));
      if (!children) return undefined;
      const { page, nextCursor } = paginate(children, cursor, options.pageSize, (child) => child.uri);
      return nextCursor === undefined ? { resources: page } : { resources: page, nextCursor };
    };
  }
  return source;
}
