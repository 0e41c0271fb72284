// skills/get results are cacheable (the current Skills text: GetSkillResult extends
// CacheableResult, ext-skills decision of 2026-09-08), and a server declaring the extension
// declares `resources` too. skills-serve says both to the SDK's own client; the mount holds an
// entry from skills/get as long as the server's ttlMs says, and still serves a server that
// sends none (the earlier text, or 2025).
import { createHash } from 'node:crypto';
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { SkillsExtension, type SkillSource } from '@modelcontextprotocol/server/ext/skills';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, LISTING_TTL_RANGE_MS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { McpSkillSource } from '../../src/mcp/mcp-skill-source.js';
import { SKILLS_EXTENSION } from '../../src/protocol/skills-wire.js';
import type { ProtocolVersionChoice } from '../../src/protocol/revisions.js';
import { connectStdio, EXAMPLES, type ClientEra } from '../support/server-harness.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What a result carries beyond its payload: the cache fields, when there are any. */
const CacheFieldsResult = z.looseObject({ ttlMs: z.unknown().optional(), cacheScope: z.unknown().optional() });

describe('skills-serve: cache fields on skills/get, resources beside the extension', () => {
  async function served(era: ClientEra, flags: string[]) {
    const connected = await connectStdio([EXAMPLES, '--ttl', '7', '--cache-scope', 'public', ...flags], era);
    cleanups.push(() => connected.close());
    return connected.client;
  }

  it('2026-07-28: skills/get carries the configured ttlMs and cacheScope, as skills/list does, and the SDK client takes them', async () => {
    const client = await served('modern', []);
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const capabilities = client.getServerCapabilities()!;
    expect(capabilities.extensions?.[SKILLS_EXTENSION]).toBeDefined();
    expect(capabilities.resources).toBeDefined();

    const skills = new SkillsClient(client);
    const listing = await skills.list();
    expect(listing).toMatchObject({ ttlMs: 7_000, cacheScope: 'public' });
    const uri = listing.skills[0]!.uri;
    // The SDK's client refuses a 2026-07-28 skills/get result without both fields.
    const got = await skills.get(uri);
    expect(got).toMatchObject({ ttlMs: 7_000, cacheScope: 'public' });
    const raw = await client.request({ method: 'skills/get', params: { uri } }, CacheFieldsResult);
    expect({ ttlMs: raw.ttlMs, cacheScope: raw.cacheScope }).toEqual({ ttlMs: 7_000, cacheScope: 'public' });
  });

  it('2025-11-25: skills/get has no cache fields (that wire has none), and the SDK client still takes it', async () => {
    const client = await served('legacy', []);
    const skills = new SkillsClient(client);
    const uri = (await skills.list()).skills[0]!.uri;
    await expect(skills.get(uri)).resolves.toMatchObject({ skill: { uri } });
    const raw = await client.request({ method: 'skills/get', params: { uri } }, CacheFieldsResult);
    expect(raw.ttlMs).toBeUndefined();
    expect(raw.cacheScope).toBeUndefined();
  });

  it.each(['modern', 'legacy'] as const)('the index mode declares resources beside the extension too (%s)', async (era) => {
    const capabilities = (await served(era, ['--protocol', 'index'])).getServerCapabilities()!;
    expect(capabilities.extensions?.[SKILLS_EXTENSION]).toBeDefined();
    expect(capabilities.resources).toBeDefined();
  });
});

// --- the mount against the SDK's SkillsExtension serving a skill its listing leaves out ---

function skillMarkdown(name: string): string {
  return `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n`;
}

const FILES = new Map(['listed', 'hidden'].map((name) => [`skill://${name}/SKILL.md`, { name, text: skillMarkdown(name) }]));
const HIDDEN = 'skill://hidden/SKILL.md';

/** One listed skill and one reachable by URI only (a partial listing is allowed); counts skills/get. */
function partialSource(): SkillSource & { gets: string[] } {
  const entry = (uri: string) => {
    const file = FILES.get(uri)!;
    const bytes = Buffer.from(file.text);
    return {
      uri,
      frontmatter: { name: file.name, description: `The ${file.name} skill.` },
      resources: [{ uri, digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}`, size: bytes.length }],
    };
  };
  const gets: string[] = [];
  return {
    gets,
    list: async () => ({ skills: [entry('skill://listed/SKILL.md')] }),
    get: async (uri) => {
      gets.push(uri);
      return FILES.has(uri) ? entry(uri) : undefined;
    },
    read: async (uri) => (FILES.has(uri) ? { text: FILES.get(uri)!.text, mimeType: 'text/markdown' } : undefined),
  };
}

async function mountOf(protocolVersion: ProtocolVersionChoice) {
  const source = partialSource();
  // ttlMs 0, the SDK's default, is held for the 5 s floor: the shortest hold the mount allows.
  const extension = new SkillsExtension({ source, cacheHint: { ttlMs: 0, cacheScope: 'private' }, onWarning: () => undefined });
  const skillSource = new McpSkillSource(
    'sdk',
    { kind: 'stdio', command: 'unused', args: [], env: {}, cwd: undefined },
    {
      timeoutMs: 5_000,
      protocolVersion,
      log: () => undefined,
      createTransport: () => {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        // Both eras on one transport, one McpServer per connection (as the SDK's stdio serving does).
        serveStdio(
          () => {
            const mcp = new McpServer({ name: 'partial', version: '0' });
            extension.attach(mcp);
            return mcp;
          },
          { transport: serverSide },
        );
        return clientSide;
      },
      minBackoffMs: 60_000,
    },
  );
  // The listing is held 5 s too; a re-listing must not drop (or re-fetch) the entry found by path.
  const catalog = new ServerCatalog(skillSource, { ...DEFAULT_CATALOG_TIMINGS, log: () => undefined, cache: new ContentCache(1 << 20), hideDynamic: false });
  await skillSource.start();
  await catalog.refresh();
  const close = async () => {
    catalog.close();
    await skillSource.close();
  };
  return { catalog, gets: source.gets, close };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the mount and a skills/get ttlMs (SDK SkillsExtension, a skill nobody listed)', () => {
  it.concurrent('2026-07-28: the entry is asked for again when its ttlMs runs out, not before', async () => {
    const { catalog, gets, close } = await mountOf('2026-07-28');
    try {
      expect((await catalog.lookup('hidden')).kind).toBe('directory');
      expect(gets).toEqual([HIDDEN]);
      expect((await catalog.read('hidden/SKILL.md')).verified).toBe(true);
      await sleep(LISTING_TTL_RANGE_MS.min - 1_000);
      expect(gets).toEqual([HIDDEN]);
      await sleep(2_000);
      expect(gets).toEqual([HIDDEN, HIDDEN]);
      expect((await catalog.list('')).sort()).toEqual(['hidden', 'listed']);
    } finally {
      await close();
    }
  });

  it.concurrent('2025-11-25 (no ttlMs on skills/get): the skill is served and verified, with no clock of its own', async () => {
    const { catalog, gets, close } = await mountOf('2025-11-25');
    try {
      expect((await catalog.lookup('hidden')).kind).toBe('directory');
      const content = await catalog.read('hidden/SKILL.md');
      expect(content.verified).toBe(true);
      expect(content.bytes.toString()).toBe(skillMarkdown('hidden'));
      await sleep(LISTING_TTL_RANGE_MS.min + 1_000);
      expect(gets).toEqual([HIDDEN]);
    } finally {
      await close();
    }
  });
});
