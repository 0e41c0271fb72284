// Item 1 of issue 22: over Streamable HTTP a JSON-RPC error may arrive with an HTTP error
// status (2026-07-28 servers answer -32601 with 404; servers and proxies use 400, 403, 409).
// It is the server's answer, not a lost connection: -32601 from skills/list means the index
// generation, -32602 means not found, and the connection stays up. Reproduced against the
// real skills-serve, with no kernel mount: McpSkillSource and the catalog in this process.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { NotFoundError, NotSupportedError } from '../../src/errors.js';
import { boundedFetch } from '../../src/mcp/bounded-fetch.js';
import { McpSkillSource } from '../../src/mcp/mcp-skill-source.js';
import type { ServerConfig } from '../../src/config/server-config.js';
import type { ProtocolVersionChoice } from '../../src/protocol/revisions.js';
import { startHttpServe, type ListeningServer } from '../support/http-server.js';

const EXAMPLES = new URL('../../examples/skills', import.meta.url).pathname;
const ERAS = [
  ['2026-07-28', 'negotiate'],
  ['2025-11-25', '2025-11-25'],
] as const;

let indexServer: ListeningServer;
beforeAll(async () => {
  indexServer = await startHttpServe([EXAMPLES, '--protocol', 'index']);
});
afterAll(async () => {
  await indexServer?.stop();
});

function sourceFor(url: string, protocolVersion: ProtocolVersionChoice, options: { status?: number } = {}) {
  const lines: string[] = [];
  const config: ServerConfig = { kind: 'http', url, headers: {} };
  const source = new McpSkillSource('web', config, {
    timeoutMs: 5_000,
    protocolVersion,
    log: (line) => lines.push(line),
    ...(options.status === undefined ? {} : { createTransport: () => errorStatusTransport(url, options.status!) }),
  });
  return { source, lines };
}

/**
 * The real transport, over a fetch that moves every JSON-RPC error answer onto HTTP `status`
 * (as servers and proxies do), the body unchanged: JSON, or the one event of an event stream.
 */
function errorStatusTransport(url: string, status: number) {
  const fetch = boundedFetch({
    maxMessageBytes: 1 << 24,
    fetch: async (input, init) => {
      const response = await globalThis.fetch(input, init);
      if ((init?.method ?? 'GET') !== 'POST' || response.status !== 200) return response;
      const text = await response.text();
      const json = text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)?.[1];
      const message = json === undefined ? undefined : (JSON.parse(json) as { error?: unknown; id?: unknown });
      const headers = new Headers(response.headers);
      if (message?.error === undefined || message.id === undefined) return new Response(text, { status: 200, headers });
      headers.set('content-type', 'application/json');
      return new Response(json, { status, headers });
    },
  });
  return new StreamableHTTPClientTransport(new URL(url), { fetch });
}

describe('an index-generation server over Streamable HTTP (skills/list answered -32601 with HTTP 404 at 2026-07-28)', () => {
  for (const [era, choice] of ERAS) {
    it(`is mounted as the index generation at ${era}, the connection untouched`, async () => {
      const { source, lines } = sourceFor(indexServer.url, choice);
      try {
        await source.start();
        expect(source.connection()).toEqual({ status: 'connected', protocolVersion: era });
        await expect(source.listSkills()).rejects.toBeInstanceOf(NotSupportedError);
        const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: (line) => lines.push(line), cache: new ContentCache(1 << 24), hideDynamic: false });
        await catalog.refresh();
        expect(catalog.summary().generation).toBe('index');
        expect((await catalog.list('')).sort()).toEqual(['acme', 'brand-kit', 'hello-mount', 'index.json', 'pdf-tools']);
        expect((await catalog.read('hello-mount/SKILL.md')).bytes.toString()).toMatch(/^---\nname: hello-mount/);
        expect(source.connection()).toEqual({ status: 'connected', protocolVersion: era });
        expect(lines.join('\n')).not.toMatch(/connection lost|retrying/);
        expect(lines.filter((line) => /connected \(protocol/.test(line))).toHaveLength(1);
      } finally {
        await source.close();
      }
    });
  }
});

describe('a JSON-RPC error carried by an HTTP error status is an answer', () => {
  for (const status of [400, 403, 404, 409]) {
    for (const [era, choice] of ERAS) {
      it(`HTTP ${status} at ${era}: not found is NotFoundError, the method missing is NotSupportedError, and the connection stays`, async () => {
        const { source, lines } = sourceFor(indexServer.url, choice, { status });
        try {
          await source.start();
          expect(source.connection()).toEqual({ status: 'connected', protocolVersion: era });
          await expect(source.listSkills()).rejects.toBeInstanceOf(NotSupportedError);
          await expect(source.getSkill('skill://hello-mount/SKILL.md')).rejects.toBeInstanceOf(NotSupportedError);
          await expect(source.readResource('skill://no-such-skill/SKILL.md')).rejects.toBeInstanceOf(NotFoundError);
          await expect(source.readDirectory('skill://no-such-skill')).rejects.toBeInstanceOf(NotFoundError);
          // Answered in the same connection: no reconnect, and the next request just works.
          expect(source.connection()).toEqual({ status: 'connected', protocolVersion: era });
          expect((await source.readResource('skill://hello-mount/SKILL.md')).bytes.toString()).toMatch(/^---\nname: hello-mount/);
          expect(lines.join('\n')).not.toMatch(/connection lost|retrying|protocol error/);
        } finally {
          await source.close();
        }
      });
    }
  }
});
