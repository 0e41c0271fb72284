// Item 14 of issue 22 (second part): a server that negotiates 2026-07-28 and then refuses
// every request (an in-band JSON-RPC error, or an HTTP error with no JSON-RPC body) must not
// show `state: connected`: after a few refusals in a row it is degraded, with the reason, in
// skills.json and status; requests are still sent, and the first answer makes it connected again.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { serverState } from '../../src/fs/skills-json.js';
import { McpSkillSource } from '../../src/mcp/mcp-skill-source.js';
import { startHttpServe, type ListeningServer } from '../support/http-server.js';
import { waitFor } from '../support/poll.js';

const EXAMPLES = new URL('../../examples/skills', import.meta.url).pathname;

let server: ListeningServer;
beforeAll(async () => {
  server = await startHttpServe([EXAMPLES]);
});
afterAll(async () => {
  await server?.stop();
});

type Refusal = 'json-rpc' | 'http-503';

/** skills-serve, behind a fetch that (while `state.refusing`) refuses every request but server/discover. */
function refusingSource(kind: Refusal) {
  const state = { refusing: true };
  const lines: string[] = [];
  const source = new McpSkillSource('web', { kind: 'http', url: server.url, headers: {} }, {
    timeoutMs: 5_000,
    protocolVersion: '2026-07-28',
    log: (line) => lines.push(line),
    createTransport: () =>
      new StreamableHTTPClientTransport(new URL(server.url), {
        fetch: async (input, init) => {
          const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { id?: unknown; method?: string }) : undefined;
          if (!state.refusing || body?.method === 'server/discover' || body?.id === undefined) return fetch(input, init);
          return kind === 'json-rpc'
            ? Response.json({ jsonrpc: '2.0', id: body.id, error: { code: -32603, message: 'Internal error: backend unavailable' } })
            : new Response('upstream unavailable', { status: 503, headers: { 'content-type': 'text/plain' } });
        },
      }),
  });
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: (line) => lines.push(line), cache: new ContentCache(1 << 24), hideDynamic: false });
  return { source, catalog, state, lines };
}

describe('a server that negotiates 2026-07-28 and then refuses every request', () => {
  for (const [kind, reason] of [
    ['json-rpc', /server error -32603: Internal error: backend unavailable/],
    ['http-503', /upstream unavailable/],
  ] as const) {
    it(`(${kind}) shows degraded with the reason, not connected, and connected again once it answers`, async () => {
      const { source, catalog, state, lines } = refusingSource(kind);
      try {
        await source.start();
        await catalog.refresh();
        for (const path of ['hello-mount/SKILL.md', 'acme/SKILL.md', 'pdf-tools/SKILL.md']) await catalog.lookup(path).catch(() => undefined);
        const shown = serverState(catalog.health());
        expect(shown.state).toBe('degraded');
        expect(shown.protocolVersion).toBe('2026-07-28');
        expect(shown.reason).toMatch(/^connected, but the server refused the last \d+ requests; the latest: /);
        expect(shown.reason).toMatch(reason);
        expect(lines.filter((line) => /\[web\] degraded: /.test(line))).toHaveLength(1);
        // It answers again: the next request brings it back, and the listing follows.
        state.refusing = false;
        await catalog.lookup('hello-mount/SKILL.md').catch(() => undefined);
        await waitFor(() => catalog.health().generation === 'listing', 5_000, 'the listing after it answered again');
        expect(serverState(catalog.health()).state).toBe('connected');
        expect((await catalog.read('hello-mount/SKILL.md')).bytes.toString()).toMatch(/^---\nname: hello-mount/);
      } finally {
        await source.close();
      }
    });
  }

  it('not found is an answer: a server answering only that stays connected', async () => {
    const { source, catalog, state } = refusingSource('json-rpc');
    state.refusing = false;
    try {
      await source.start();
      await catalog.refresh();
      for (const path of ['nope/SKILL.md', 'none/SKILL.md', 'missing/SKILL.md', 'gone/SKILL.md', 'away/SKILL.md']) await catalog.lookup(path).catch(() => undefined);
      expect(serverState(catalog.health()).state).toBe('connected');
    } finally {
      await source.close();
    }
  });
});
