// The MCP face of skills-serve: one McpServer per connection (2025) or per request (2026-07-28
// over HTTP), all on one ServedTree (a SkillTree, or the gateway's view). The SDK's
// SkillsExtension owns the wire; own code here: the index mode, 2025 subscriptions, change fan-out and skills/list+get (listing.ts).
import { McpServer, ProtocolError, ProtocolErrorCode, ResourceTemplate, type CacheHint, type CacheScope, type ServerContext, type Transport } from '@modelcontextprotocol/server';
import { SkillsExtension } from '@modelcontextprotocol/server/ext/skills';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { INDEX_URI, SKILLS_EXTENSION } from '../protocol/skills-wire.js';
import { registerDirectoryRead, registerListing } from './listing.js';
import type { Log } from '../log.js';
import { SkillTree, type SkillTreeOptions, type TreeChange } from './skill-tree.js';
import type { ServedRequest, ServedTree } from './served-tree.js';

export type { ServedRequest } from './served-tree.js';
import { treeSkillSource, type TreeSkillSource } from './skill-source.js';
import { parseSkillUri } from './skill-uri.js';
import { logTraffic } from './traffic-log.js';

/** Which discovery generation(s) to serve: `skill://index.json`, `skills/list`+`skills/get`, or both. */
export type DiscoveryProtocol = 'index' | 'listing' | 'both';
export type Era = 'legacy' | 'modern';

export interface SkillsServiceOptions {
  protocol?: DiscoveryProtocol;
  /** Items per page of skills/list and directory reads. */
  pageSize?: number;
  /** Serve `resources/directory/read` and declare it (default true). */
  directoryRead?: boolean;
  /** The tree serves skills that break only a length limit; list them past the SDK's re-validation. */
  lenient?: boolean;
  /** Freshness hint on every cacheable 2026-07-28 result (default 30 000). */
  ttlMs?: number;
  /** Who may share a cached result (default private: a server's answer is not assumed shareable). */
  cacheScope?: CacheScope;
  /** Log every request with its duration. */
  verbose?: boolean;
  log?: Log;
  /** The name and version in serverInfo (default skills-serve's). */
  serverInfo?: { name: string; version: string };
  /** Hears each skills/get answered and each file read served (the gateway records activations). */
  onServed?: (served: ServedRequest) => void;
}


export const DEFAULT_PAGE_SIZE = 100;
export const DEFAULT_TTL_MS = 30_000;
export const DEFAULT_CACHE_SCOPE: CacheScope = 'private';
const SERVER_INFO = { name: 'skills-serve', version: '0.2.0' };
const NOT_HEARD = (): void => {};

/** A server instance that outlives one request, and what its 2025 client subscribed to. */
interface Live {
  mcp: WeakRef<McpServer>;
  era: Era;
  subscriptions: Set<string>;
}

/** What a tree change means on the wire: the list changed, and these URIs' contents did. */
export interface ChangeEvent {
  updated: string[];
}

/** Everything one served tree needs: builds McpServers and fans tree changes out to them. */
export class SkillsService {
  readonly tree: ServedTree;
  readonly source: TreeSkillSource;
  private readonly options: Required<Omit<SkillsServiceOptions, 'log'>> & { log: Log };
  private readonly extension: SkillsExtension | undefined;
  private readonly cacheHint: CacheHint;
  private readonly live = new Set<Live>();
  private readonly sinks = new Set<(event: ChangeEvent) => void>();
  private readonly stopWatching: () => void;

  constructor(tree: ServedTree, options: SkillsServiceOptions = {}) {
    this.tree = tree;
    this.options = {
      protocol: options.protocol ?? 'both',
      pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
      directoryRead: options.directoryRead ?? true,
      lenient: options.lenient ?? false,
      ttlMs: options.ttlMs ?? DEFAULT_TTL_MS,
      cacheScope: options.cacheScope ?? DEFAULT_CACHE_SCOPE,
      verbose: options.verbose ?? false,
      log: options.log ?? (() => {}),
      serverInfo: options.serverInfo ?? SERVER_INFO,
      onServed: options.onServed ?? NOT_HEARD,
    };
    this.cacheHint = { ttlMs: this.options.ttlMs, cacheScope: this.options.cacheScope };
    const listing = this.options.protocol !== 'index';
    this.source = treeSkillSource(tree, {
      pageSize: this.options.pageSize,
      serveIndex: this.options.protocol !== 'listing',
      directoryRead: this.options.directoryRead,
    });
    const log = this.options.log;
    this.extension = listing
      ? new SkillsExtension({ source: this.source, cacheHint: this.cacheHint, onWarning: (w) => log(`warning: ${w.path}: ${w.message}`) })
      : undefined;
    this.stopWatching = tree.onChange((change) => this.publish(change));
  }

  get verbose(): boolean {
    return this.options.verbose;
  }

  get log(): Log {
    return this.options.log;
  }

  /**
   * A new McpServer for one era (an McpServerFactory). `track` keeps it for change
   * notifications: stdio connections and 2025 HTTP sessions, not per-request instances.
   */
  build(era: Era, track = true): McpServer {
    const mcp = new McpServer(this.options.serverInfo, {
      capabilities: { resources: { subscribe: true, listChanged: true } },
      cacheHints: { 'resources/list': this.cacheHint, 'resources/templates/list': this.cacheHint, 'resources/read': this.cacheHint },
      instructions:
        'Agent Skills are served as skill:// resources. ' +
        (this.extension ? 'Enumerate them with skills/list. ' : 'Enumerate them by reading skill://index.json. ') +
        'Read a skill by its SKILL.md URI, and its other files relative to that.',
    });
    if (this.extension) {
      this.extension.attach(mcp);
      // skills/list and skills/get: the SDK's checks once per entry instead of per request
      // (none under --lenient); see listing.ts.
      registerListing(mcp, this.source, { validate: !this.options.lenient, cacheHint: this.cacheHint, log: this.options.log, onServed: this.options.onServed });
      // resources/read in place of the extension's: the same answer, but the SDK base64-encodes
      // blobs through String.fromCodePoint over 32 KiB chunks and btoa, ~1 s per 15 MiB file
      // (3x slower than 1.x end to end); Buffer's encoder takes milliseconds.
      mcp.server.setRequestHandler('resources/read', async (request, ctx) => this.readServed(request.params.uri, ctx));
    } else {
      // Index mode, as the seed text's servers: the extension declared (with directoryRead
      // when offered) but no skills/list or skills/get (clients get -32601 and read the index).
      mcp.server.registerCapabilities({ extensions: { [SKILLS_EXTENSION]: this.options.directoryRead ? { directoryRead: true } : {} } });
      if (this.options.directoryRead) registerDirectoryRead(mcp, this.source, this.cacheHint);
      const template = new ResourceTemplate('skill://{+path}', { list: async (ctx) => ({ resources: await this.source.listResources!(ctx) }) });
      mcp.registerResource('skills', template, { cacheHint: this.cacheHint }, async (uri, _variables, ctx) => this.readServed(uri.href, ctx));
    }
    const entry: Live = { mcp: new WeakRef(mcp), era, subscriptions: new Set() };
    if (era === 'legacy') this.registerSubscriptions(mcp, entry.subscriptions);
    if (track) this.live.add(entry);
    return mcp;
  }

  /** Also deliver change events to `sink` (the HTTP handler's subscriptions/listen bus). */
  addSink(sink: (event: ChangeEvent) => void): () => void {
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
  }

  /** Serves both eras on one stdio-like transport (process stdio when omitted). */
  serveStdio(transport?: Transport): { close(): Promise<void> } {
    const base = transport ?? new StdioServerTransport();
    return serveStdio((ctx) => this.build(ctx.era), {
      transport: this.options.verbose ? logTraffic(base, this.options.log) : base,
      onerror: (error) => this.options.log(`stdio: ${error.message}`),
    });
  }

  /** Stops change notifications; open connections are closed by their owners. */
  close(): void {
    this.stopWatching();
    this.sinks.clear();
    this.live.clear();
  }

  private async readServed(uri: string, ctx: ServerContext) {
    const result = await readContents(this.source, uri, ctx);
    this.options.onServed({ method: 'resources/read', uri, ctx });
    return result;
  }

  // 2025 only: 2026-07-28 has no resources/subscribe (clients use subscriptions/listen).
  private registerSubscriptions(mcp: McpServer, subscriptions: Set<string>): void {
    const known = (uri: string): string => {
      const parsed = parseSkillUri(uri);
      const canonical = uri === INDEX_URI ? INDEX_URI : parsed.ok ? parsed.canonical : undefined;
      const served = canonical === INDEX_URI ? this.options.protocol !== 'listing' : canonical !== undefined && this.tree.snapshot.files.has(canonical);
      if (!served) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Resource not found: ${uri}`, { uri });
      return canonical!;
    };
    mcp.server.setRequestHandler('resources/subscribe', async (request) => {
      subscriptions.add(known(request.params.uri));
      return {};
    });
    mcp.server.setRequestHandler('resources/unsubscribe', async (request) => {
      const parsed = parseSkillUri(request.params.uri);
      subscriptions.delete(request.params.uri);
      if (parsed.ok) subscriptions.delete(parsed.canonical);
      return {};
    });
  }

  private publish(change: TreeChange): void {
    const event: ChangeEvent = { updated: changedUris(this.tree, change, this.options.protocol !== 'listing') };
    for (const sink of this.sinks) sink(event);
    for (const entry of this.live) {
      const mcp = entry.mcp.deref();
      if (!mcp) {
        this.live.delete(entry);
        continue;
      }
      if (!mcp.isConnected()) continue;
      const server = mcp.server;
      void server.sendResourceListChanged().catch(() => {});
      // A 2026 stdio connection filters by its subscriptions/listen filter itself.
      const uris = entry.era === 'modern' ? event.updated : event.updated.filter((uri) => entry.subscriptions.has(uri));
      for (const uri of uris) void server.sendResourceUpdated({ uri }).catch(() => {});
    }
  }
}

/** URIs whose content changed, appeared or went away between two snapshots. */
function changedUris(tree: ServedTree, { previous, current }: TreeChange, serveIndex: boolean): string[] {
  const uris: string[] = [];
  for (const [uri, file] of current.files) if (previous.files.get(uri)?.version !== file.version) uris.push(uri);
  for (const uri of previous.files.keys()) if (!current.files.has(uri)) uris.push(uri);
  if (serveIndex && tree.indexText(previous) !== tree.indexText(current)) uris.push(INDEX_URI);
  return uris;
}

export interface SkillsServerOptions extends SkillTreeOptions, SkillsServiceOptions {}

export interface SkillsServer {
  tree: SkillTree;
  service: SkillsService;
  /** Serves both eras on `transport` (e.g. one end of InMemoryTransport.createLinkedPair()). */
  server: { connect(transport: Transport): Promise<void>; close(): Promise<void> };
  close(): Promise<void>;
}

/** A tree over `root` and a service on it: the in-process entry point for tests and embedders. */
export async function createSkillsServer(options: SkillsServerOptions): Promise<SkillsServer> {
  const tree = await SkillTree.open(options);
  const service = new SkillsService(tree, options);
  const handles: Array<{ close(): Promise<void> }> = [];
  const closeAll = async (): Promise<void> => {
    await Promise.allSettled(handles.splice(0).map((handle) => handle.close()));
  };
  return {
    tree,
    service,
    server: {
      connect: async (transport) => {
        handles.push(service.serveStdio(transport));
      },
      close: closeAll,
    },
    close: async () => {
      await closeAll();
      service.close();
      tree.close();
    },
  };
}

/** One file of the source as a resources/read result: text as text, anything else as base64 (Buffer's encoder). */
async function readContents(source: TreeSkillSource, uri: string, ctx: Parameters<TreeSkillSource['read']>[1]) {
  const result = await source.read(uri, ctx);
  if (!result) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Resource not found: ${uri}`, { uri });
  const content = 'text' in result ? { text: result.text } : { blob: Buffer.from(result.bytes.buffer, result.bytes.byteOffset, result.bytes.byteLength).toString('base64') };
  return { contents: [{ uri, ...(result.mimeType === undefined ? {} : { mimeType: result.mimeType }), ...content }] };
}
