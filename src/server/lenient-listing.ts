// --lenient only: skills/list and skills/get answered from the same source without the SDK's
// re-validation, which would drop the over-long entries --lenient exists to serve. Replaces
// the SkillsExtension's two handlers on one server; everything else stays the SDK's.
import { ProtocolError, ProtocolErrorCode, type CacheHint, type McpServer } from '@modelcontextprotocol/server';
import { GetSkillRequestParamsSchema, ListSkillsRequestParamsSchema } from '@modelcontextprotocol/core/ext/skills';
import { MODERN_REVISION } from '../protocol/revisions.js';
import { SKILLS_GET_METHOD, SKILLS_LIST_METHOD } from '../protocol/skills-wire.js';
import type { TreeSkillSource } from './skill-source.js';

/** Registers own skills/list and skills/get on `mcp` (after the extension was attached). */
export function registerLenientListing(mcp: McpServer, source: TreeSkillSource, cacheHint: CacheHint): void {
  // As the SDK: ttlMs/cacheScope exist only on the 2026-07-28 wire.
  const cacheFields = (): CacheHint | Record<string, never> => {
    const version = mcp.server.getNegotiatedProtocolVersion() ?? '';
    return version >= MODERN_REVISION ? { ...cacheHint } : {};
  };
  mcp.server.setRequestHandler(SKILLS_LIST_METHOD, { params: ListSkillsRequestParamsSchema }, async (params) => {
    const page = await source.list(params.cursor === undefined ? {} : { cursor: params.cursor });
    return { ...page, ...cacheFields() };
  });
  mcp.server.setRequestHandler(SKILLS_GET_METHOD, { params: GetSkillRequestParamsSchema }, async (params) => {
    const skill = await source.get(params.uri);
    if (!skill) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No skill is served at ${params.uri}`);
    return { skill, ...cacheFields() };
  });
}
