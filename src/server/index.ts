// Public surface of the reference skills server (skills-serve).
export { SkillTree, type SkillTreeOptions, type TreeSnapshot, type TreeChange, type FileNode, type SkillNode, type DirectoryChild, type Log } from './skill-tree.js';
export {
  createSkillsServer,
  createSkillsSession,
  DEFAULT_PAGE_SIZE,
  type DiscoveryProtocol,
  type SkillsServerOptions,
  type SkillsSession,
  type SkillsSessionOptions,
} from './skills-server.js';
export { serveHttp, type HttpServeOptions, type HttpServing } from './http.js';
export { parseSkillUri, uriForPath, encodeSegment } from './skill-uri.js';
