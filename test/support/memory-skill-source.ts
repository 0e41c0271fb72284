// An in-memory SkillSource: a server's skills as plain data (files by URI, entries built
// from them or set by hand), with a request log and fault hooks, so catalog behaviour can be
// tested at unit speed. test/integration/skill-source-contract.test.ts holds it to the same
// contract as the real MCP-backed source.
import { createHash } from 'node:crypto';
import { NotFoundError, NotSupportedError, UnavailableError } from '../../src/errors.js';
import type { CacheHint, ConnectionStatus, Listing, SkillSource, SourceEvent, SourceFeatures, UnverifiedContent } from '../../src/mcp/skill-source.js';
import { INDEX_URI, type DirectoryChild, type IndexEntry, type SkillEntry } from '../../src/protocol/skills-wire.js';

export interface RecordedRequest {
  method: string;
  uri?: string;
}

export function sha256(bytes: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** A SKILL.md text with the given frontmatter lines. */
export function skillMarkdown(name: string, description = `Does ${name} things`, extra = ''): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n# ${name}\n`;
}

export class MemorySkillSource implements SkillSource {
  readonly requests: RecordedRequest[] = [];
  /** Served bytes by URI. */
  readonly files = new Map<string, Buffer>();
  /** Entries served by skills/list and skills/get, by SKILL.md URI; `listed: false` ones only by skills/get. */
  readonly entries = new Map<string, { entry: SkillEntry; listed: boolean }>();
  featureFlags: SourceFeatures = { extension: true, directoryRead: false, subscribe: false, listChanged: false, liveChannel: false };
  status: ConnectionStatus = { status: 'connected', protocolVersion: '2026-07-28' };
  hint: CacheHint = {};
  /** Throw this from the next requests of a method (until cleared). */
  readonly failures = new Map<string, Error>();
  private readonly listeners: Array<(event: SourceEvent) => void> = [];

  constructor(readonly label = 'mem') {}

  /** Adds a skill: its files (paths under the skill directory) and an entry that lists them truthfully. */
  addSkill(path: string, files: Record<string, string | Buffer>, options: { listed?: boolean; frontmatter?: Record<string, unknown> } = {}): SkillEntry {
    const name = path.split('/').pop()!;
    const resources = Object.entries(files).map(([rel, content]) => {
      const bytes = Buffer.from(content);
      const uri = `skill://${path}/${rel}`;
      this.files.set(uri, bytes);
      return { uri, digest: sha256(bytes), size: bytes.length };
    });
    const uri = `skill://${path}/SKILL.md`;
    const entry: SkillEntry = {
      uri,
      frontmatter: options.frontmatter ?? { name, description: `Does ${name} things` },
      resources: resources.sort((a, b) => (a.uri === uri ? -1 : b.uri === uri ? 1 : a.uri.localeCompare(b.uri))),
    };
    this.entries.set(uri, { entry, listed: options.listed ?? true });
    return entry;
  }

  /** Changes a file's bytes; with `updateEntry`, the entry too (as an honest server would). */
  changeFile(uri: string, content: string | Buffer, updateEntry = true): void {
    const bytes = Buffer.from(content);
    this.files.set(uri, bytes);
    if (!updateEntry) return;
    for (const { entry } of this.entries.values()) {
      if (!Array.isArray(entry.resources)) continue;
      for (const file of entry.resources) {
        if (file.uri !== uri) continue;
        file.digest = sha256(bytes);
        file.size = bytes.length;
      }
    }
  }

  emit(event: SourceEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  count(method: string, uri?: string): number {
    return this.requests.filter((request) => request.method === method && (uri === undefined || request.uri === uri)).length;
  }

  features(): SourceFeatures {
    return this.featureFlags;
  }

  connection(): ConnectionStatus {
    return this.status;
  }

  onEvent(listener: (event: SourceEvent) => void): void {
    this.listeners.push(listener);
  }

  async listSkills(_onProgress?: (soFar: Listing<SkillEntry>) => void): Promise<Listing<SkillEntry> & CacheHint> {
    // As the MCP source: never sent to a server that did not declare the extension.
    if (!this.featureFlags.extension) throw new NotSupportedError('no extension', { server: this.label, method: 'skills/list' });
    this.record('skills/list');
    const items = [...this.entries.values()].filter((item) => item.listed).map((item) => structuredClone(item.entry));
    return { items, problems: [], complete: true, ...this.hint };
  }

  async getSkill(uri: string): Promise<{ entry: SkillEntry } & CacheHint> {
    if (!this.featureFlags.extension) throw new NotSupportedError('no extension', { server: this.label, method: 'skills/get', uri });
    this.record('skills/get', uri);
    const found = this.entries.get(uri);
    if (!found) throw new NotFoundError('not a skill', { server: this.label, method: 'skills/get', uri });
    return { entry: structuredClone(found.entry), ...this.hint };
  }

  async readIndex(): Promise<Listing<IndexEntry> & { content: UnverifiedContent }> {
    this.record('resources/read', INDEX_URI);
    throw new NotFoundError('no index', { server: this.label, method: 'resources/read', uri: INDEX_URI });
  }

  async readResource(uri: string): Promise<UnverifiedContent> {
    this.record('resources/read', uri);
    const bytes = this.files.get(uri);
    if (!bytes) throw new NotFoundError('no such resource', { server: this.label, method: 'resources/read', uri });
    return { uri, bytes: Buffer.from(bytes), mimeType: undefined };
  }

  async readDirectory(uri: string): Promise<Listing<DirectoryChild>> {
    this.record('resources/directory/read', uri);
    const prefix = `${uri}/`;
    const children = new Map<string, DirectoryChild>();
    for (const fileUri of this.files.keys()) {
      if (!fileUri.startsWith(prefix)) continue;
      const [name, ...deeper] = fileUri.slice(prefix.length).split('/');
      children.set(name!, deeper.length ? { uri: `${prefix}${name}`, name: name!, mimeType: 'inode/directory' } : { uri: fileUri, name: name!, mimeType: 'text/plain' });
    }
    return { items: [...children.values()], problems: [], complete: true };
  }

  async subscribe(uri: string): Promise<void> {
    this.record('resources/subscribe', uri);
  }

  private record(method: string, uri?: string): void {
    this.requests.push(uri === undefined ? { method } : { method, uri });
    const failure = this.failures.get(method);
    if (failure) throw failure;
    if (this.status.status !== 'connected') throw new UnavailableError('not connected', { server: this.label, method, uri });
  }
}
