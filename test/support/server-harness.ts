// Shared helpers for skills-serve tests: clients over in-memory, stdio and HTTP, paging,
// and a writable copy of the real corpus. Skill trees, digests, temp dirs and HTTP servers
// have helpers of their own (skill-builder, digest.mjs, temp-dir, http-server).
import { execFileSync } from 'node:child_process';
import { cp } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { z } from 'zod';
import { createSkillsServer, type SkillsServerOptions } from '../../src/server/index.js';
import { SKILLS_SERVE } from './http-server.js';
import { makeTempDir } from './temp-dir.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The built skills-serve (the name these tests have always used for http-server's SKILLS_SERVE). */
export const CLI = SKILLS_SERVE;
/** A real skills corpus to test against, when the environment names one (SKILLS_MOUNT_CORPUS). */
export const CORPUS: string | undefined = process.env.SKILLS_MOUNT_CORPUS ? resolve(process.env.SKILLS_MOUNT_CORPUS) : undefined;
export const EXAMPLES = join(REPO_ROOT, 'examples/skills');

/** The era a test client speaks: 2025 (initialize, sessions) or 2026-07-28 (server/discover, stateless). */
export type ClientEra = 'legacy' | 'modern';

/** A v2 client pinned to one era. */
export function newClient(era: ClientEra = 'legacy'): Client {
  return new Client({ name: 'test', version: '0' }, { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
}

/** Copies the read-only corpus to a writable temp dir. */
export async function copyCorpus(): Promise<string> {
  if (!CORPUS) throw new Error('SKILLS_MOUNT_CORPUS is not set');
  const dir = await makeTempDir('skills-serve-corpus-');
  await cp(CORPUS, dir, { recursive: true });
  // The corpus is read-only; the copy must be writable so tests can change and delete it.
  execFileSync('chmod', ['-R', 'u+w', dir]);
  return dir;
}

export const ListResult = z.looseObject({ skills: z.array(z.any()), nextCursor: z.string().optional() });
export const GetResult = z.looseObject({ skill: z.any() });
export const DirResult = z.looseObject({ resources: z.array(z.any()), nextCursor: z.string().optional() });

export interface Entry {
  uri: string;
  frontmatter: Record<string, unknown>;
  resources: Array<{ uri: string; digest: string; size: number }>;
}

export interface DirChild {
  uri: string;
  name: string;
  mimeType: string;
  size?: number;
}

/** Every page of skills/list, and the number of pages. */
export async function listAllSkills(client: Client): Promise<{ skills: Entry[]; pages: number }> {
  const skills: Entry[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const result = await client.request({ method: 'skills/list', params: cursor === undefined ? {} : { cursor } }, ListResult);
    skills.push(...(result.skills as Entry[]));
    cursor = result.nextCursor;
    pages++;
  } while (cursor !== undefined);
  return { skills, pages };
}

export async function readDirectoryAll(client: Client, uri: string): Promise<DirChild[]> {
  const children: DirChild[] = [];
  let cursor: string | undefined;
  do {
    const result = await client.request(
      { method: 'resources/directory/read', params: cursor === undefined ? { uri } : { uri, cursor } },
      DirResult,
    );
    children.push(...(result.resources as DirChild[]));
    cursor = result.nextCursor;
  } while (cursor !== undefined);
  return children;
}

/** The bytes of a resources/read result's single content. */
export async function readBytes(client: Client, uri: string): Promise<{ bytes: Buffer; mimeType: string | undefined; kind: 'text' | 'blob' }> {
  const result = await client.readResource({ uri });
  const content = result.contents[0]!;
  if ('text' in content && typeof content.text === 'string') {
    return { bytes: Buffer.from(content.text, 'utf8'), mimeType: content.mimeType, kind: 'text' };
  }
  return { bytes: Buffer.from((content as { blob: string }).blob, 'base64'), mimeType: content.mimeType, kind: 'blob' };
}

/** The JSON-RPC error code (and data) a call fails with. */
export async function errorOf(call: Promise<unknown>): Promise<{ code: number; data: unknown; message: string }> {
  try {
    await call;
  } catch (error) {
    const e = error as { code: number; data: unknown; message: string };
    return { code: e.code, data: e.data, message: e.message };
  }
  throw new Error('expected the call to fail');
}

export interface Connected {
  client: Client;
  logs: string[];
  close(): Promise<void>;
}

/** An in-process server on `root` and a client linked to it in memory. */
export async function connectInMemory(
  options: Omit<SkillsServerOptions, 'log'> & { root: string; era?: ClientEra },
): Promise<Connected & { tree: Awaited<ReturnType<typeof createSkillsServer>>['tree'] }> {
  const logs: string[] = [];
  const served = await createSkillsServer({ debounceMs: 50, ...options, log: (line) => logs.push(line) });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = newClient(options.era);
  await served.server.connect(serverTransport);
  await client.connect(clientTransport);
  return {
    client,
    logs,
    tree: served.tree,
    close: async () => {
      await client.close();
      await served.close();
    },
  };
}

/** skills-serve as a child process on stdio. */
export function connectStdio(args: string[], era: ClientEra = 'legacy'): Promise<Connected> {
  return connectStdioNode([CLI, ...args], era);
}

/** `node ...args` (a script and its arguments) as a child process on stdio, in `env` (default: the SDK's few inherited variables). */
export async function connectStdioNode(args: string[], era: ClientEra = 'legacy', env?: Record<string, string>): Promise<Connected> {
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: 'pipe', ...(env && { env }) });
  const logs: string[] = [];
  transport.stderr?.on('data', (chunk: Buffer) => logs.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const client = newClient(era);
  await client.connect(transport);
  return { client, logs, close: () => client.close() };
}

export async function connectHttp(url: string, era: ClientEra = 'legacy'): Promise<Client> {
  const client = newClient(era);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}
