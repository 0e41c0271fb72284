// The MCP Skills Extension (SEP-2640) on the wire: method names, schemas and constants,
// declared once and shared by the reference server and the mount's client. Constants the
// SDK v2 publishes are taken from it; the schemas here are deliberately looser than the
// SDK's (unknown fields pass, entries are checked one by one) so one bad entry, or a
// description over a length limit, costs only that entry.
import { z } from 'zod';
import {
  DIRECTORY_MIME_TYPE as SDK_DIRECTORY_MIME_TYPE,
  RESOURCES_DIRECTORY_READ_METHOD as SDK_RESOURCES_DIRECTORY_READ_METHOD,
  SKILLS_EXTENSION_ID,
  SKILLS_GET_METHOD as SDK_SKILLS_GET_METHOD,
  SKILLS_LIST_METHOD as SDK_SKILLS_LIST_METHOD,
  SKILL_LIMITS,
} from '@modelcontextprotocol/core/ext/skills';

/** Extension identifier under `capabilities.extensions`. */
export const SKILLS_EXTENSION: string = SKILLS_EXTENSION_ID;
export const SKILLS_LIST_METHOD: string = SDK_SKILLS_LIST_METHOD;
export const SKILLS_GET_METHOD: string = SDK_SKILLS_GET_METHOD;
export const DIRECTORY_READ_METHOD: string = SDK_RESOURCES_DIRECTORY_READ_METHOD;
/** Well-known URI of the index generation's catalog (the seed text; predates the final one). */
export const INDEX_URI = 'skill://index.json';
/** mimeType that marks a directory resource. */
export const DIRECTORY_MIME_TYPE: string = SDK_DIRECTORY_MIME_TYPE;
/** Per-skill limits fixed by the final text. */
export const MAX_FILES_PER_SKILL: number = SKILL_LIMITS.files;
export const MAX_BYTES_PER_SKILL: number = SKILL_LIMITS.bytes;

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

/**
 * `ttlMs`/`cacheScope` of a CacheableResult (2026-07-28). Read leniently: a value of the wrong
 * type is treated as absent (a freshness hint is never worth refusing a listing over).
 */
const CacheFields = {
  ttlMs: z.number().int().nonnegative().optional().catch(undefined),
  cacheScope: z.enum(['public', 'private']).optional().catch(undefined),
};
export type CacheScope = 'public' | 'private';

const PaginatedParams = z.looseObject({ cursor: z.string().optional() }).optional();

export const SkillsListRequestSchema = z.object({
  method: z.literal('skills/list'),
  params: PaginatedParams,
});
/** Entries are validated one by one by the caller, so one bad entry does not sink the page. */
export const SkillsListResultSchema = z.looseObject({
  skills: z.array(z.unknown()),
  nextCursor: z.string().optional(),
  ...CacheFields,
});

export const SkillsGetRequestSchema = z.object({
  method: z.literal('skills/get'),
  params: z.looseObject({ uri: z.string() }),
});
export const SkillsGetResultSchema = z.looseObject({ skill: z.unknown(), ...CacheFields });

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
