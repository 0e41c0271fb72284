// What the catalog needs from one server: the backend contract, implemented over MCP
// by McpSkillSource and in memory by tests. Results are shape-checked, never trusted.
import type { CacheScope, DirectoryChild, IndexEntry, SkillEntry } from '../protocol/skills-wire.js';

/** Bytes as a server sent them: decoded, not yet verified against anything. */
export interface UnverifiedContent {
  uri: string;
  bytes: Buffer;
  mimeType: string | undefined;
}

/** A listing and what was wrong with it: entries that failed their shape check are dropped and named. */
export interface Listing<T> {
  items: T[];
  problems: string[];
  /** False when paging stopped early (error, cap, cursor loop): absence proves nothing. */
  complete: boolean;
  /** URIs named by entries that were refused: nothing under them may be loaded by path either. */
  refused?: string[];
}

/** The freshness hint of a CacheableResult (2026-07-28); absent on 2025 servers. */
export interface CacheHint {
  ttlMs?: number | undefined;
  cacheScope?: CacheScope | undefined;
}

export interface SourceFeatures {
  /** The server declared the skills extension (`skills/list` and `skills/get` may be sent). */
  extension: boolean;
  /** The server declared `directoryRead: true`. */
  directoryRead: boolean;
  /** The server accepts `resources/subscribe`. */
  subscribe: boolean;
  /** The server promises `notifications/resources/list_changed`. */
  listChanged: boolean;
  /** Change events can reach us now (stdio, an open event stream or listen stream). */
  liveChannel: boolean;
}

export type ConnectionStatus =
  | { status: 'connecting'; reason?: string }
  | { status: 'connected'; protocolVersion: string }
  /** Connected, but the server refused (or never answered) every recent request; requests are still sent. */
  | { status: 'degraded'; protocolVersion: string; reason: string }
  | { status: 'failed'; reason: string }
  /** The two sides share no protocol revision: not retried until restarted or reconfigured. */
  | { status: 'incompatible'; reason: string }
  /** The server wants a sign-in only a person can give (`skills-mount login LABEL`): not retried until the token store changes. */
  | { status: 'needs-login'; reason: string }
  | { status: 'closed' };

export type SourceEvent =
  | { type: 'connected' }
  | { type: 'disconnected'; reason: string }
  | { type: 'list-changed' }
  | { type: 'resource-updated'; uri: string };

/**
 * One server's skill namespace as raw protocol operations. Methods throw NotFoundError
 * (-32602), NotSupportedError (-32601), UnavailableError or ProtocolError.
 */
export interface SkillSource {
  readonly label: string;
  features(): SourceFeatures;
  connection(): ConnectionStatus;
  onEvent(listener: (event: SourceEvent) => void): void;
  /** Every page; `onProgress` sees the entries so far (read them at once: the array grows) while a long listing pages on. */
  listSkills(onProgress?: (soFar: Listing<SkillEntry>) => void): Promise<Listing<SkillEntry> & CacheHint>;
  getSkill(uri: string): Promise<{ entry: SkillEntry } & CacheHint>;
  /** Reads and parses skill://index.json; `content` is the raw document, for serving as a file. */
  readIndex(): Promise<Listing<IndexEntry> & { content: UnverifiedContent }>;
  readResource(uri: string): Promise<UnverifiedContent>;
  readDirectory(uri: string): Promise<Listing<DirectoryChild>>;
  subscribe(uri: string): Promise<void>;
}
