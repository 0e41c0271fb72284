// SkillSource over a live MCP connection: the extension's methods, every page of every
// list (bounded against endless cursors), shapes checked entry by entry.
//
// The SDK's SkillsClient does not do this job, for reasons docs/protocol.md lists: it
// refuses a whole listing for one invalid entry, refuses published skills whose description
// is over 1,024 characters (in listings, skills/get and reads), throws instead of keeping a
// partial listing at its page cap, has no byte caps, accepts a read result with several
// contents for one URI, and has no index generation.
import { z } from 'zod';
import { NotSupportedError, ProtocolError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import { Connection, type ConnectionOptions } from './connection.js';
import { decodeReadResult } from './content-decoding.js';
import {
  DirectoryChildSchema,
  DirectoryReadResultSchema,
  DIRECTORY_READ_METHOD,
  INDEX_URI,
  IndexDocumentSchema,
  IndexEntrySchema,
  MAX_BYTES_PER_SKILL,
  SKILLS_EXTENSION,
  SKILLS_GET_METHOD,
  SKILLS_LIST_METHOD,
  SkillEntrySchema,
  SkillsGetResultSchema,
  SkillsListResultSchema,
  type DirectoryChild,
  type IndexEntry,
  type SkillEntry,
  type SkillsCapability,
} from '../protocol/skills-wire.js';
import type { ServerConfig } from '../config/server-config.js';
import type { CacheHint, ConnectionStatus, Listing, SkillSource, SourceEvent, SourceFeatures, UnverifiedContent } from './skill-source.js';

/** Bounds on paging, so a hostile server cannot keep the mount listing forever or fill its memory. */
export interface PagingLimits {
  maxPages: number;
  maxItems: number;
  /** Sum of the entries' JSON sizes: a few large manifests cost as much memory as many small ones. */
  maxEntryBytes: number;
}

/** When a long listing first shows the entries it has so far (then after 4, 8, 16 s more...). */
const FIRST_PROGRESS_AFTER_MS = 2_000;

/** No file of a conforming skill can be larger than the whole skill may be. */
const MAX_FILE_BYTES = MAX_BYTES_PER_SKILL;
/** The index describes every skill, not one: a larger cap, still far below what could exhaust memory. */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

// A listing may legitimately be large (the benchmark mounts 100,000 skills); these caps only
// stop a hostile one from exhausting memory or time. Measured (docs/robustness.md): a
// one-file entry costs ~1.8 KiB of daemon RSS, so 250,000 entries stay under ~600 MiB;
// 10,000 pages of a cursor loop take a few seconds.
export const DEFAULT_PAGING_LIMITS: PagingLimits = { maxPages: 10_000, maxItems: 250_000, maxEntryBytes: 256 * 1024 * 1024 };

const ReadResultSchema = z.looseObject({ contents: z.array(z.unknown()) });

/** One configured server, reached over stdio or Streamable HTTP. */
export class McpSkillSource implements SkillSource {
  private readonly connectionToServer: Connection;
  private readonly paging: PagingLimits;
  /** What the server declared when it was last connected. */
  private declared: ReturnType<Connection['serverCapabilities']>;

  constructor(
    readonly label: string,
    config: ServerConfig,
    options: ConnectionOptions & { paging?: PagingLimits },
  ) {
    this.connectionToServer = new Connection(label, config, options);
    this.paging = options.paging ?? DEFAULT_PAGING_LIMITS;
  }

  start(): Promise<void> {
    return this.connectionToServer.start();
  }

  close(): Promise<void> {
    return this.connectionToServer.close();
  }

  connection(): ConnectionStatus {
    return this.connectionToServer.connection();
  }

  onEvent(listener: (event: SourceEvent) => void): void {
    this.connectionToServer.onEvent(listener);
  }

  /**
   * What the server declared; while it cannot be reached, what it declared last: an outage does
   * not take its directoryRead away, or a directory the catalog never read would look empty
   * instead of failing.
   */
  features(): SourceFeatures {
    this.declared = this.connectionToServer.serverCapabilities() ?? this.declared;
    const capabilities = this.declared;
    const extensions = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
    const skills = extensions?.[SKILLS_EXTENSION] as SkillsCapability | undefined;
    const declared = skills !== null && typeof skills === 'object';
    return {
      extension: declared,
      directoryRead: declared && skills.directoryRead === true,
      subscribe: capabilities?.resources?.subscribe === true,
      listChanged: capabilities?.resources?.listChanged === true,
      liveChannel: this.connectionToServer.hasLiveChannel(),
    };
  }

  async listSkills(onProgress?: (soFar: Listing<SkillEntry>) => void): Promise<Listing<SkillEntry> & CacheHint> {
    this.requireExtension(SKILLS_LIST_METHOD);
    let hint: CacheHint = {};
    const listing = await this.paginate(
      SKILLS_LIST_METHOD,
      {},
      SkillsListResultSchema,
      (page, index) => {
        if (index === 0) hint = { ttlMs: page.ttlMs, cacheScope: page.cacheScope };
        return page.skills;
      },
      (raw) => parseSkillEntry(raw),
      onProgress,
    );
    return { ...listing, ...hint };
  }

  async getSkill(uri: string): Promise<{ entry: SkillEntry } & CacheHint> {
    this.requireExtension(SKILLS_GET_METHOD);
    const context = { server: this.label, method: SKILLS_GET_METHOD, uri };
    const result = await this.connectionToServer.request(SKILLS_GET_METHOD, { uri }, SkillsGetResultSchema, uri);
    const parsed = parseSkillEntry(result.skill);
    if (typeof parsed === 'string') throw new ProtocolError(parsed, context);
    if (parsed.uri !== uri) throw new ProtocolError(`answered for another skill (${escapeForLog(parsed.uri)})`, context);
    return { entry: parsed, ttlMs: result.ttlMs, cacheScope: result.cacheScope };
  }

  /** Clients send skills/* only after seeing the server declare the extension (spec, Capability Negotiation). */
  private requireExtension(method: string): void {
    if (this.connectionToServer.connection().status === 'connected' && !this.features().extension) {
      throw new NotSupportedError('the server did not declare the skills extension', { server: this.label, method });
    }
  }

  async readIndex(): Promise<Listing<IndexEntry> & { content: UnverifiedContent }> {
    const content = await this.readWithin(INDEX_URI, MAX_INDEX_BYTES);
    const context = { server: this.label, method: 'resources/read', uri: INDEX_URI };
    let document: unknown;
    try {
      document = JSON.parse(content.bytes.toString('utf8'));
    } catch (error) {
      throw new ProtocolError(`not JSON: ${(error as Error).message}`, context);
    }
    const parsed = IndexDocumentSchema.safeParse(document);
    if (!parsed.success) {
      throw new ProtocolError(`not an index: ${parsed.error.issues[0]?.message ?? 'bad shape'}`, context);
    }
    const items: IndexEntry[] = [];
    const problems: string[] = [];
    for (const [position, raw] of parsed.data.skills.entries()) {
      const entry = IndexEntrySchema.safeParse(raw);
      if (entry.success) items.push(entry.data);
      else problems.push(`index entry ${position}: ${describeIssue(entry.error)}`);
    }
    return { items, problems, complete: true, content };
  }

  async readResource(uri: string): Promise<UnverifiedContent> {
    return this.readWithin(uri, MAX_FILE_BYTES);
  }

  private async readWithin(uri: string, maxBytes: number): Promise<UnverifiedContent> {
    const result = await this.connectionToServer.request('resources/read', { uri }, ReadResultSchema, uri);
    return decodeReadResult(this.label, uri, result, maxBytes);
  }

  readDirectory(uri: string): Promise<Listing<DirectoryChild>> {
    return this.paginate(DIRECTORY_READ_METHOD, { uri }, DirectoryReadResultSchema, (page) => page.resources, (raw) => {
      const child = DirectoryChildSchema.safeParse(raw);
      return child.success ? child.data : describeIssue(child.error);
    });
  }

  subscribe(uri: string): Promise<void> {
    return this.connectionToServer.subscribe(uri);
  }

  /** Follows nextCursor to the end, within the paging limits; a failing later page yields a partial listing. */
  private async paginate<P extends { nextCursor?: string | undefined }, T>(
    method: string,
    params: Record<string, unknown>,
    schema: z.ZodType<P>,
    itemsOf: (page: P, index: number) => unknown[],
    parse: (raw: unknown) => T | string,
    onProgress?: (soFar: Listing<T>) => void,
  ): Promise<Listing<T>> {
    const items: T[] = [];
    const problems: string[] = [];
    const refused: string[] = [];
    let progressAtMs = performance.now();
    let progressIntervalMs = FIRST_PROGRESS_AFTER_MS;
    const seenCursors = new Set<string>();
    let entryBytes = 0;
    let cursor: string | undefined;
    const uri = typeof params.uri === 'string' ? params.uri : undefined;
    for (let page = 0; ; page++) {
      if (page >= this.paging.maxPages) {
        problems.push(`stopped after ${page} pages`);
        return { items, problems, complete: false, refused };
      }
      let result: P;
      try {
        result = await this.connectionToServer.request(method, cursor === undefined ? params : { ...params, cursor }, schema, uri);
      } catch (error) {
        // The first page failing means we know nothing: let the caller see why.
        if (page === 0) throw error;
        problems.push(`page ${page + 1}: ${(error as Error).message}`);
        return { items, problems, complete: false, refused };
      }
      for (const raw of itemsOf(result, page)) {
        if (items.length >= this.paging.maxItems) {
          problems.push(`stopped at ${this.paging.maxItems} entries`);
          return { items, problems, complete: false, refused };
        }
        entryBytes += JSON.stringify(raw)?.length ?? 0;
        if (entryBytes > this.paging.maxEntryBytes) {
          problems.push(`stopped at ${items.length} entries: over ${this.paging.maxEntryBytes} bytes of entries`);
          return { items, problems, complete: false, refused };
        }
        const parsed = parse(raw);
        if (typeof parsed === 'string') {
          problems.push(`entry ${items.length + problems.length}: ${escapeForLog(parsed)}`);
          const named = (raw as { uri?: unknown } | null)?.uri;
          if (typeof named === 'string') refused.push(named);
        } else items.push(parsed);
      }
      const next = result.nextCursor;
      if (next === undefined) return { items, problems, complete: true, refused };
      if (onProgress && performance.now() - progressAtMs >= progressIntervalMs) {
        // Doubling intervals: a listing of any length shows progress a logarithmic number of times.
        progressAtMs = performance.now();
        progressIntervalMs *= 2;
        onProgress({ items, problems: [...problems], complete: false, refused: [...refused] });
      }
      if (seenCursors.has(next)) {
        problems.push(`cursor ${JSON.stringify(next).slice(0, 40)} returned twice`);
        return { items, problems, complete: false, refused };
      }
      seenCursors.add(next);
      cursor = next;
    }
  }
}

function parseSkillEntry(raw: unknown): SkillEntry | string {
  const entry = SkillEntrySchema.safeParse(raw);
  return entry.success ? entry.data : describeIssue(entry.error);
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid entry';
  return `${issue.path.length ? issue.path.join('.') + ': ' : ''}${issue.message}`;
}

