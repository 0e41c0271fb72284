// Public surface of the reference skills server (skills-serve).
export { SkillTree, type SkillTreeOptions, type TreeSnapshot, type TreeChange, type FileNode, type SkillNode, type DirectoryChild } from './skill-tree.js';
export type { Log } from '../log.js';
export {
  createSkillsServer,
  DEFAULT_CACHE_SCOPE,
  DEFAULT_PAGE_SIZE,
  DEFAULT_TTL_MS,
  SkillsService,
  type ChangeEvent,
  type DiscoveryProtocol,
  type Era,
  type SkillsServer,
  type SkillsServerOptions,
  type SkillsServiceOptions,
} from './skills-server.js';
export { treeSkillSource, type TreeSkillSource, type TreeSourceOptions } from './skill-source.js';
export { createSkillsHttpHandler, serveHttp, type HttpServeOptions, type HttpServing, type SkillsHttpHandler, type SkillsHttpHandlerOptions } from './http.js';
export { checkAuthBinding, createResourceAuth, grantedScopes, type ResourceAuth, type ResourceAuthOptions } from './auth.js';
export { checkIssuerUrl, DEFAULT_ISSUER_MAX_BYTES, DEFAULT_ISSUER_TIMEOUT_MS, metadataUrls, TrustedIssuer, type IssuerOptions } from './auth-issuer.js';
export { DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_MS, type SessionLimits } from './http-sessions.js';
export { sendWebResponse, toWebRequest } from './node-fetch-adapter.js';
export { parseSkillUri, uriForPath, encodeSegment } from './skill-uri.js';
