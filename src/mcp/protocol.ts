// The MCP Skills Extension (SEP-2640) on the wire: method names, schemas and
// constants, declared once and shared by the reference server and the mount's client.
// Schemas validate what a (possibly hostile) peer sends; unknown fields pass through.
import { z } from 'zod';

/** Extension identifier under `capabilities.extensions`. */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';
/** Well-known URI of the index generation's catalog. */
export const INDEX_URI = 'skill://index.json';
/** mimeType that marks a directory resource. */
export const DIRECTORY_MIME_TYPE = 'inode/directory';
/** Per-skill limits fixed by the listing generation. */
export const MAX_FILES_PER_SKILL = 512;
export const MAX_BYTES_PER_SKILL = 16 * 1024 * 1024;

/** `sha256:` followed by 64 lowercase hex characters. */
export const DigestSchema = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'digest must be sha256:<64 lowercase hex>');

export const FrontmatterSchema = z.record(z.string(), z.unknown());
export type Frontmatter = z.infer<typeof FrontmatterSchema>;

export const SkillFileSchema = z.looseObject({
  uri: z.string().min(1),
  digest: DigestSchema,
  size: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
});
export type SkillFile = z.infer<typeof SkillFileSchema>;

export const SkillEntrySchema = z.looseObject({
  uri: z.string().min(1),
  frontmatter: FrontmatterSchema,
  resources: z.union([z.array(SkillFileSchema), z.literal('dynamic')]),
});
export type SkillEntry = z.infer<typeof SkillEntrySchema>;

const PaginatedParams = z.looseObject({ cursor: z.string().optional() }).optional();

export const SkillsListRequestSchema = z.object({
  method: z.literal('skills/list'),
  params: PaginatedParams,
});
/** Entries are validated one by one by the caller, so one bad entry does not sink the page. */
export const SkillsListResultSchema = z.looseObject({
  skills: z.array(z.unknown()),
  nextCursor: z.string().optional(),
});

export const SkillsGetRequestSchema = z.object({
  method: z.literal('skills/get'),
  params: z.looseObject({ uri: z.string() }),
});
export const SkillsGetResultSchema = z.looseObject({ skill: z.unknown() });

export const DirectoryReadRequestSchema = z.object({
  method: z.literal('resources/directory/read'),
  params: z.looseObject({ uri: z.string(), cursor: z.string().optional() }),
});
export const DirectoryChildSchema = z.looseObject({
  uri: z.string().min(1),
  name: z.string(),
  mimeType: z.string().optional(),
  size: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
});
export type DirectoryChild = z.infer<typeof DirectoryChildSchema>;
export const DirectoryReadResultSchema = z.looseObject({
  resources: z.array(z.unknown()),
  nextCursor: z.string().optional(),
});

export const IndexEntrySchema = z.looseObject({
  url: z.string().min(1),
  digest: DigestSchema,
  frontmatter: FrontmatterSchema,
});
export type IndexEntry = z.infer<typeof IndexEntrySchema>;
export const IndexDocumentSchema = z.looseObject({ skills: z.array(z.unknown()) });

/** The extension's settings as declared in the server's capabilities. */
export interface SkillsCapability {
  directoryRead?: boolean;
}
