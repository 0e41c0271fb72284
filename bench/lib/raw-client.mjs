// The raw baseline: an MCP SDK Client talking to skills-serve directly, over the same
// transport the mount uses, with no filesystem in between.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { z } from 'zod';
import { SKILLS_SERVE } from './paths.mjs';
import { inParallel } from './stats.mjs';

const ListPage = z.looseObject({ skills: z.array(z.looseObject({ uri: z.string(), resources: z.unknown() })), nextCursor: z.string().optional() });
const REQUEST_TIMEOUT_MS = 600_000;

/** A v2 client of one era: 'legacy' (2025, initialize) by default, or 'modern' (2026-07-28). */
function newClient(era = 'legacy') {
  return new Client({ name: 'skills-bench', version: '0' }, { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
}

/**
 * Spawns `skills-serve DIR ...flags` and connects a client to it over stdio. `maxBufferSize`
 * is the SDK's limit on one incoming message (10 MiB by default); `era` as in newClient.
 */
export async function connectStdio(dir, flags = [], { maxBufferSize, era } = {}) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [SKILLS_SERVE, dir, '--lenient', ...flags], stderr: 'ignore', ...(maxBufferSize && { maxBufferSize }) });
  const client = newClient(era);
  await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  return client;
}

/** Connects a client to a Streamable HTTP endpoint. */
export async function connectHttp(url, { era } = {}) {
  const client = newClient(era);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)), { timeout: REQUEST_TIMEOUT_MS });
  return client;
}

/** Every skills/list page; resolves the skills and the number of pages. */
export async function listAllSkills(client) {
  const skills = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.request({ method: 'skills/list', params: cursor === undefined ? {} : { cursor } }, ListPage, { timeout: REQUEST_TIMEOUT_MS });
    skills.push(...page.skills);
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined);
  return { skills, pages };
}

/** Every file the listing vouches for: URI, path under the label directory, size. */
export function manifestFiles(skills) {
  const files = [];
  for (const skill of skills) {
    if (!Array.isArray(skill.resources)) throw new Error(`skill ${skill.uri} has no manifest`);
    for (const resource of skill.resources) files.push({ uri: resource.uri, path: uriToPath(resource.uri), sizeBytes: resource.size });
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** skill://a/b%20c -> a/b c: the path the mount shows for a skill:// URI. */
export function uriToPath(uri) {
  if (!uri.startsWith('skill://')) throw new Error(`not a skill:// URI: ${uri}`);
  return uri.slice('skill://'.length).split('/').map(decodeURIComponent).join('/');
}

/**
 * resources/read of one URI, decoded to bytes as any client would. `cacheMode: 'bypass'`: always
 * asks the server (a 2026-07-28 client otherwise answers a repeat from its own cache, for ttlMs).
 */
export async function readBytes(client, uri, { cacheMode } = {}) {
  const result = await client.readResource({ uri }, { timeout: REQUEST_TIMEOUT_MS, ...(cacheMode && { cacheMode }) });
  const content = result.contents.find((item) => item.uri === uri);
  if (!content) throw new Error(`resources/read ${uri}: no content for the uri`);
  return typeof content.text === 'string' ? Buffer.from(content.text, 'utf8') : Buffer.from(content.blob, 'base64');
}

/** Reads every URI with `concurrency` requests in flight; resolves the total bytes. */
export async function readAll(client, uris, concurrency) {
  let totalBytes = 0;
  await inParallel(uris, concurrency, async (uri) => {
    // Not `total += await ...`: that reads `total` before the await and loses concurrent sums.
    const { length } = await readBytes(client, uri);
    totalBytes += length;
  });
  return totalBytes;
}

/** Milliseconds of `count` sequential empty round trips (ping). */
export async function pingSamples(client, count) {
  const samples = [];
  for (let i = 0; i < count; i++) {
    const startedMs = performance.now();
    await client.ping();
    samples.push(performance.now() - startedMs);
  }
  return samples;
}
