// MCP request handlers of skills-serve: one Server per session, all sharing one SkillTree.
// Maps tree lookups to SEP-2640 results and domain errors to JSON-RPC errors; no file I/O here.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { sha256Digest } from '../format/digest.js';
import { NotFoundError } from '../errors.js';
import {
  DirectoryReadRequestSchema,
  INDEX_URI,
  SKILLS_EXTENSION,
  SkillsGetRequestSchema,
  SkillsListRequestSchema,
  type SkillsCapability,
} from '../mcp/protocol.js';
import { paginate } from './cursor.js';
import { decodeText, mimeTypeForContent } from './mime.js';
import { SkillTree, type FileNode, type Log, type SkillTreeOptions, type TreeChange, type TreeSnapshot } from './skill-tree.js';
import { parseSkillUri } from './skill-uri.js';

/** Which discovery generation(s) to serve: `skill://index.json`, `skills/list`+`skills/get`, or both. */
export type DiscoveryProtocol = 'index' | 'listing' | 'both';

export interface SkillsSessionOptions {
  protocol?: DiscoveryProtocol;
  /** Items per page of every paginated result. */
  pageSize?: number;
  /** Serve `resources/directory/read` and declare it (default true). */
  directoryRead?: boolean;
  /** Log every request with its duration. */
  verbose?: boolean;
  log?: Log;
}

export interface SkillsSession {
  server: Server;
  /** Closes the session's transport and stops its notifications. */
  close(): Promise<void>;
}

export const DEFAULT_PAGE_SIZE = 100;
const ROOT_URI = 'skill://';
const SERVER_INFO = { name: 'skills-serve', version: '0.1.0' };

/** A new MCP Server answering for `tree`; connect it to one transport. */
export function createSkillsSession(tree: SkillTree, options: SkillsSessionOptions = {}): SkillsSession {
  const protocol = options.protocol ?? 'both';
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const directoryRead = options.directoryRead ?? true;
  const serveIndex = protocol !== 'listing';
  const serveListing = protocol !== 'index';
  const log = options.log ?? (() => {});
  const extension: SkillsCapability = directoryRead ? { directoryRead: true } : {};

  const server = new Server(SERVER_INFO, {
    capabilities: {
      resources: { subscribe: true, listChanged: true },
      extensions: { [SKILLS_EXTENSION]: extension },
    },
    instructions:
      'Agent Skills are served as skill:// resources. ' +
      (serveListing ? 'Enumerate them with skills/list. ' : 'Enumerate them by reading skill://index.json. ') +
      'Read a skill by its SKILL.md URI, and its other files relative to that.',
  });

  // Every handler goes through here: domain misses become -32602, unknown errors -32603
  // and a log line with method and URI.
  const handle =
    <Q extends { method: string; params?: unknown }, R>(run: (request: Q) => Promise<R>) =>
    async (request: Q): Promise<R> => {
      const started = performance.now();
      const uri = (request.params as { uri?: unknown } | undefined)?.uri;
      const where = typeof uri === 'string' ? `${request.method} ${uri}` : request.method;
      const elapsed = (): string => `${(performance.now() - started).toFixed(1)} ms`;
      try {
        const result = await run(request);
        if (options.verbose) log(`${where} ok ${elapsed()}`);
        return result;
      } catch (error) {
        if (error instanceof McpError) {
          if (options.verbose) log(`${where} error ${error.code} ${elapsed()}`);
          throw error;
        }
        if (error instanceof NotFoundError) {
          if (options.verbose) log(`${where} not found: ${error.message}`);
          throw new McpError(ErrorCode.InvalidParams, `Resource not found: ${String(uri)}`, { uri });
        }
        log(`${where} failed after ${elapsed()}: ${(error as Error).message}`);
        throw new McpError(ErrorCode.InternalError, `${request.method} failed: ${(error as Error).message}`, { uri });
      }
    };

  server.setRequestHandler(
    ListResourcesRequestSchema,
    handle(async ({ params }) => {
      const snapshot = tree.snapshot;
      const items = snapshot.skills.map((skill) => ({
        uri: skill.uri,
        name: String(skill.frontmatter.name),
        description: String(skill.frontmatter.description),
        mimeType: 'text/markdown',
        size: skill.files[0]!.size,
      }));
      const all = serveIndex
        ? [{ uri: INDEX_URI, name: 'index.json', description: 'Index of the skills this server serves', mimeType: 'application/json' }, ...items]
        : items;
      const { page, nextCursor } = paginate(all, params?.cursor, 'resources/list', pageSize);
      return { resources: page, ...(nextCursor && { nextCursor }) };
    }),
  );

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [] }));

  server.setRequestHandler(
    ReadResourceRequestSchema,
    handle(async ({ params }) => {
      if (params.uri === INDEX_URI && serveIndex) {
        return { contents: [{ uri: INDEX_URI, mimeType: 'application/json', text: tree.indexText() }] };
      }
      const file = fileFor(tree.snapshot, params.uri);
      const bytes = await tree.read(file);
      const text = decodeText(bytes);
      const content =
        text === undefined
          ? { uri: file.uri, mimeType: mimeTypeForContent(file.name, false), blob: bytes.toString('base64') }
          : { uri: file.uri, mimeType: mimeTypeForContent(file.name, true), text };
      return { contents: [content] };
    }),
  );

  // Subscribed URI -> digest last seen by this session (undefined: gone or unreadable).
  const subscriptions = new Map<string, string | undefined>();
  const digestOf = async (uri: string, snapshot: TreeSnapshot): Promise<string | undefined> => {
    if (uri === INDEX_URI) return serveIndex ? sha256Digest(Buffer.from(tree.indexText(snapshot))) : undefined;
    const file = snapshot.files.get(uri);
    return file && (await tree.describe(file).then((described) => described.digest, () => undefined));
  };

  server.setRequestHandler(
    SubscribeRequestSchema,
    handle(async ({ params }) => {
      const uri = params.uri === INDEX_URI && serveIndex ? INDEX_URI : fileFor(tree.snapshot, params.uri).uri;
      subscriptions.set(uri, await digestOf(uri, tree.snapshot));
      return {};
    }),
  );
  server.setRequestHandler(
    UnsubscribeRequestSchema,
    handle(async ({ params }) => {
      const parsed = parseSkillUri(params.uri);
      subscriptions.delete(params.uri);
      if (parsed.ok) subscriptions.delete(parsed.canonical);
      return {};
    }),
  );

  if (serveListing) {
    server.setRequestHandler(
      SkillsListRequestSchema,
      handle(async ({ params }) => {
        const { page, nextCursor } = paginate(tree.snapshot.skills, params?.cursor, 'skills/list', pageSize);
        const skills = await Promise.all(page.map((skill) => tree.entry(skill)));
        return { resultType: 'complete', skills, ...(nextCursor && { nextCursor }) };
      }),
    );
    server.setRequestHandler(
      SkillsGetRequestSchema,
      handle(async ({ params }) => {
        const parsed = parseSkillUri(params.uri);
        const skill = parsed.ok ? tree.snapshot.skillsByUri.get(parsed.canonical) : undefined;
        if (!skill) throw invalidUri(params.uri, parsed.ok ? 'not a skill served here' : parsed.reason);
        return { resultType: 'complete', skill: await tree.entry(skill) };
      }),
    );
  }

  if (directoryRead) {
    server.setRequestHandler(
      DirectoryReadRequestSchema,
      handle(async ({ params }) => {
        const parsed = params.uri === ROOT_URI ? ({ ok: true, canonical: ROOT_URI } as const) : parseSkillUri(params.uri);
        if (!parsed.ok) throw invalidUri(params.uri, parsed.reason);
        // skill:// (beyond the spec) lists the top level, so a mount can list its root; it shows
        // directories only: skill://index.json is a discovery resource, not part of the tree.
        const children = tree.snapshot.directories.get(parsed.canonical) ?? (parsed.canonical === ROOT_URI ? [] : undefined);
        if (!children) {
          const reason = tree.snapshot.files.has(parsed.canonical) ? 'not a directory' : 'no such directory';
          throw invalidUri(params.uri, reason);
        }
        const { page, nextCursor } = paginate(children, params.cursor, `dir ${parsed.canonical}`, pageSize);
        return { resultType: 'complete', resources: page, ...(nextCursor && { nextCursor }) };
      }),
    );
  }

  const notify = async ({ current }: TreeChange): Promise<void> => {
    if (!server.transport) return;
    await server.sendResourceListChanged().catch(() => {});
    for (const [uri, seen] of subscriptions) {
      const now = await digestOf(uri, current);
      if (now === seen) continue;
      subscriptions.set(uri, now);
      await server.sendResourceUpdated({ uri }).catch(() => {});
    }
  };
  const stopNotifying = tree.onChange((change) => void notify(change));

  return {
    server,
    close: async () => {
      stopNotifying();
      await server.close();
    },
  };
}

/** The served file named by a client's URI; -32602 with the URI for anything else. */
function fileFor(snapshot: TreeSnapshot, uri: string): FileNode {
  const parsed = parseSkillUri(uri);
  if (!parsed.ok) throw invalidUri(uri, parsed.reason);
  const file = snapshot.files.get(parsed.canonical);
  if (!file) throw invalidUri(uri, 'no such resource');
  return file;
}

function invalidUri(uri: string, reason: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Resource not found: ${uri} (${reason})`, { uri });
}

export interface SkillsServerOptions extends SkillTreeOptions, SkillsSessionOptions {}

/** A tree over `root` plus one session on it: the in-process entry point for tests and embedders. */
export async function createSkillsServer(options: SkillsServerOptions): Promise<{ server: Server; tree: SkillTree; close(): Promise<void> }> {
  const tree = await SkillTree.open(options);
  const session = createSkillsSession(tree, options);
  return {
    server: session.server,
    tree,
    close: async () => {
      await session.close();
      tree.close();
    },
  };
}
