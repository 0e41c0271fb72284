// skills/list and skills/get, answered from the TreeSkillSource in place of the SkillsExtension's
// two handlers (everything else stays the SDK's). Why: the extension trusts only its own
// SkillCatalog; a custom source's entries are re-checked on every request (#keepValid ->
// skillEntryProblems: a zod parse plus several `new URL` per manifest entry), ~50 µs a skill,
// which made a warm 10 000-skill listing 4-6x slower. The same checks run here once per entry
// object; the tree memoizes entries per snapshot, so once per snapshot. The wire is unchanged:
// same entries kept, same warning, same errors, ttlMs/cacheScope on 2026-07-28 only.
// --lenient skips the checks: it exists to serve entries the length rules would drop.
import { ProtocolError, ProtocolErrorCode, type CacheHint, type McpServer } from '@modelcontextprotocol/server';
import { GetSkillRequestParamsSchema, ListSkillsRequestParamsSchema, ReadResourceDirectoryRequestParamsSchema, SkillSchema } from '@modelcontextprotocol/core/ext/skills';
import type { Skill } from '@modelcontextprotocol/server/ext/skills';
import { MODERN_REVISION } from '../protocol/revisions.js';
import { DIRECTORY_READ_METHOD, SKILLS_GET_METHOD, SKILLS_LIST_METHOD } from '../protocol/skills-wire.js';
import type { Log } from '../log.js';
import type { TreeSkillSource } from './skill-source.js';
import type { ServedRequest } from './served-tree.js';

export interface ListingOptions {
  /** Check entries as the SDK does for a custom source (false: --lenient). */
  validate: boolean;
  cacheHint: CacheHint;
  log: Log;
  /** Hears each skills/get answered. */
  onServed?: (served: ServedRequest) => void;
}

/** Registers own skills/list and skills/get on `mcp` (after the extension was attached). */
export function registerListing(mcp: McpServer, source: TreeSkillSource, options: ListingOptions): void {
  // As the SDK: ttlMs/cacheScope exist only on the 2026-07-28 wire.
  const cacheFields = (): CacheHint | Record<string, never> => {
    const version = mcp.server.getNegotiatedProtocolVersion() ?? '';
    return version >= MODERN_REVISION ? { ...options.cacheHint } : {};
  };
  const problemsOf = (skill: Skill): readonly string[] => (options.validate ? entryProblems(skill) : NONE);
  mcp.server.setRequestHandler(SKILLS_LIST_METHOD, { params: ListSkillsRequestParamsSchema }, async (params) => {
    const page = await source.list(params.cursor === undefined ? {} : { cursor: params.cursor });
    let skills = page.skills;
    if (options.validate) {
      const kept: Skill[] = [];
      for (const skill of skills) {
        const problems = problemsOf(skill);
        if (problems.length === 0) kept.push(skill);
        else options.log(`warning: ${skill.uri}: invalid skill entry from the source: ${problems.join('; ')} (dropped from skills/list)`);
      }
      skills = kept;
    }
    return { skills, ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }), ...cacheFields() };
  });
  mcp.server.setRequestHandler(SKILLS_GET_METHOD, { params: GetSkillRequestParamsSchema }, async (params, ctx) => {
    const skill = await source.get(params.uri);
    if (!skill) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No skill is served at ${params.uri}`);
    const problems = problemsOf(skill);
    if (problems.length > 0) {
      const message = `invalid skill entry from the source: ${problems.join('; ')}`;
      options.log(`warning: ${params.uri}: ${message}`);
      throw new ProtocolError(ProtocolErrorCode.InternalError, message);
    }
    if (canonicalUri(skill.uri) !== canonicalUri(params.uri)) {
      throw new ProtocolError(ProtocolErrorCode.InternalError, `the skill source returned ${skill.uri} for ${params.uri}`);
    }
    options.onServed?.({ method: 'skills/get', uri: params.uri, ctx });
    return { skill, ...cacheFields() };
  });
}

/** resources/directory/read without the extension's other methods: the index mode (seed generation). */
export function registerDirectoryRead(mcp: McpServer, source: TreeSkillSource, cacheHint: CacheHint): void {
  mcp.server.setRequestHandler(DIRECTORY_READ_METHOD, { params: ReadResourceDirectoryRequestParamsSchema }, async (params, ctx) => {
    const page = await source.readDirectory!(params.uri, params.cursor === undefined ? {} : { cursor: params.cursor }, ctx);
    if (!page) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${params.uri} is not a directory resource`);
    const version = mcp.server.getNegotiatedProtocolVersion() ?? '';
    return { resources: page.resources, ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }), ...(version >= MODERN_REVISION ? { ...cacheHint } : {}) };
  });
}

const NONE: readonly string[] = Object.freeze([]);
const verdicts = new WeakMap<object, readonly string[]>();

/**
 * The SDK's check of an entry from a custom source (server/dist/extension-*.mjs:
 * skillEntryProblems = SkillSchema.safeParse + validateSkillEntry), computed once per entry
 * object. Entries are immutable snapshots' values, so a verdict never goes stale.
 */
export function entryProblems(skill: Skill): readonly string[] {
  let problems = verdicts.get(skill);
  if (problems === undefined) {
    const parsed = SkillSchema.safeParse(skill);
    problems = Object.freeze(
      parsed.success ? ruleProblems(parsed.data as Skill) : parsed.error.issues.map((issue) => `${issue.path.join('.') || '(entry)'}: ${issue.message}`),
    );
    verdicts.set(skill, problems);
  }
  return problems;
}

// --- the SDK's validateSkillEntry and its URI helpers (core-internal/src/ext/skills/{entry,uri}.ts), verbatim in behaviour ---

const SKILL_NAME_PATTERN = /^[\da-z]+(?:-[\da-z]+)*$/;
const MANIFEST_SUFFIX = '/SKILL.md';
const ENCODED_IN_SEGMENT = /[^\w!$&'()*+,.:;=@[\]|~-]/gu;
const ESCAPE_RUN = /((?:%[\dA-Fa-f]{2})+)/;

function ruleProblems(skill: Skill): string[] {
  const problems: string[] = [];
  const root = skillRootUri(skill.uri);
  if (root === undefined) return [`uri "${skill.uri}" must be a URI ending in /SKILL.md inside a named directory`];
  const frontmatter = skill.frontmatter as Record<string, unknown> & { name: string; description: string };
  const { name, description } = frontmatter;
  if (name.length === 0 || name.length > 64 || !SKILL_NAME_PATTERN.test(name)) {
    problems.push(`frontmatter name "${name}" must be 1-64 lowercase letters, digits and single hyphens`);
  } else if (lastSegmentOf(root) !== name) problems.push(`frontmatter name "${name}" must match the last path segment "${lastSegmentOf(root)}"`);
  if (description === '' || countCharacters(description) > 1024) problems.push('frontmatter description must be 1-1024 characters');
  const compatibility = frontmatter['compatibility'];
  if (compatibility !== undefined && (typeof compatibility !== 'string' || compatibility === '' || countCharacters(compatibility) > 500)) {
    problems.push('frontmatter compatibility must be a string of 1-500 characters');
  }
  if (frontmatter['metadata'] !== undefined && !isStringMap(frontmatter['metadata'])) problems.push('frontmatter metadata must map strings to strings');
  const resources = skill.resources as unknown;
  if (resources !== 'dynamic') {
    const self = canonicalUri(skill.uri);
    const seen = new Set<string>();
    let hasSelf = false;
    const below = `${root}/`;
    for (const resource of resources as ReadonlyArray<{ uri: string }>) {
      if (isPlainBelow(below, resource.uri)) {
        // Fast path, same verdict: the URI is its own canonical form and file key, and within root.
        if (seen.has(resource.uri)) problems.push(`resource "${resource.uri}" is listed more than once`);
        seen.add(resource.uri);
        if (resource.uri === self) hasSelf = true;
        continue;
      }
      const canonical = canonicalUri(resource.uri);
      if (canonical === undefined) {
        problems.push(`resource "${resource.uri}" is not a valid URI`);
        continue;
      }
      if (/[#?]/.test(canonical)) {
        problems.push(`resource "${resource.uri}" must not have a query or fragment`);
        continue;
      }
      const key = skillFileKey(root, canonical) ?? canonical;
      if (seen.has(key)) problems.push(`resource "${resource.uri}" is listed more than once`);
      seen.add(key);
      if (canonical === self) hasSelf = true;
      else if (!isWithin(root, resource.uri)) problems.push(`resource "${resource.uri}" is outside the skill directory ${root}`);
    }
    if (!hasSelf) problems.push(`resources must include ${skill.uri}`);
  }
  return problems;
}

const PLAIN_SEGMENT = /^[\w.~-]+$/;

/**
 * True when `uri` is `below` (a canonical root + "/") plus segments of unreserved characters
 * only, none "." or "..": WHATWG parsing leaves such a URI unchanged (nothing to encode, no
 * dot segments, no query or fragment), and each segment is its own file key (keyOfSegment
 * re-encodes nothing) and decodes to itself, so canonicalUri, skillFileKey and isWithin need
 * no `new URL` for it.
 */
function isPlainBelow(below: string, uri: string): boolean {
  if (!uri.startsWith(below)) return false;
  for (const segment of uri.slice(below.length).split('/')) {
    if (segment === '.' || segment === '..' || !PLAIN_SEGMENT.test(segment)) return false;
  }
  return true;
}

function isStringMap(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((item) => typeof item === 'string');
}

function countCharacters(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index += text.codePointAt(index)! > 0xffff ? 2 : 1) count++;
  return count;
}

function canonicalUri(uri: string): string | undefined {
  try {
    return new URL(uri).href;
  } catch {
    return undefined;
  }
}

function skillRootUri(skillMdUri: string): string | undefined {
  const canonical = canonicalUri(skillMdUri);
  if (canonical === undefined || !canonical.endsWith(MANIFEST_SUFFIX)) return undefined;
  const root = canonical.slice(0, -MANIFEST_SUFFIX.length);
  return root.endsWith('/') ? undefined : root;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function lastSegmentOf(rootUri: string): string {
  const url = new URL(rootUri);
  const path = url.pathname;
  return safeDecode(path === '' || path === '/' ? url.host : path.slice(path.lastIndexOf('/') + 1));
}

function isWithin(rootUri: string, uri: string): boolean {
  const canonical = canonicalUri(uri);
  if (canonical === undefined || !canonical.startsWith(`${rootUri}/`)) return false;
  return canonical
    .slice(rootUri.length + 1)
    .split('/')
    .every((segment) => {
      const decoded = safeDecode(segment);
      return decoded !== '' && decoded !== '.' && decoded !== '..' && !decoded.includes('/') && !decoded.includes('\0');
    });
}

function encodePathText(text: string): string {
  return text.replaceAll(ENCODED_IN_SEGMENT, (char) => encodeURIComponent(char));
}

function decodeOrUndefined(escapes: string): string | undefined {
  try {
    return decodeURIComponent(escapes);
  } catch {
    return undefined;
  }
}

function utf8Width(lead: number): number {
  return lead >= 240 ? 4 : lead >= 224 ? 3 : lead >= 192 ? 2 : 1;
}

function keyOfEscapes(run: string): string {
  let key = '';
  for (let at = 0; at < run.length; ) {
    const width = 3 * utf8Width(Number.parseInt(run.slice(at + 1, at + 3), 16));
    const decoded = decodeOrUndefined(run.slice(at, at + width));
    if (decoded === undefined) {
      key += `%25${run.slice(at + 1, at + 3)}`;
      at += 3;
    } else {
      key += encodePathText(decoded);
      at += width;
    }
  }
  return key;
}

function keyOfSegment(segment: string): string {
  return segment
    .split(ESCAPE_RUN)
    .map((part, index) => (index % 2 === 0 ? encodePathText(part) : keyOfEscapes(part)))
    .join('');
}

function skillFileKey(rootUri: string, uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  url.hash = '';
  const canonical = url.href;
  if (canonical.includes('?') || !canonical.startsWith(`${rootUri}/`)) return canonical;
  return `${rootUri}/${canonical
    .slice(rootUri.length + 1)
    .split('/')
    .map((segment) => keyOfSegment(segment))
    .join('/')}`;
}
