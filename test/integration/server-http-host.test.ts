// DNS rebinding: skills-serve bound to any loopback address (all of 127.0.0.0/8, ::1) answers
// only requests whose Host and Origin are this machine's loopback, over real HTTP.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveHttp, SkillsService, SkillTree, type HttpServing } from '../../src/server/index.js';
import { connectHttp, EXAMPLES, readBytes } from '../support/server-harness.js';

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } };
const DISCOVER = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 't', version: '0' } } } };

interface Answer {
  status: number | undefined;
  body: string;
}

// fetch may not set Host, so a raw request plays the DNS-rebinding page.
function post(url: string, headers: Record<string, string>, message: { method: string }): Promise<Answer> {
  const modern = message.method === 'server/discover' ? { 'mcp-protocol-version': '2026-07-28', 'mcp-method': message.method } : {};
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...modern, ...headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(message));
  });
}

async function serveOn(host: string): Promise<{ serving: HttpServing; close(): Promise<void> }> {
  const tree = await SkillTree.open({ root: EXAMPLES, watch: false });
  const service = new SkillsService(tree);
  const serving = await serveHttp({ service, host, port: 0 });
  return {
    serving,
    close: async () => {
      await serving.close();
      service.close();
      tree.close();
    },
  };
}

describe.each(['127.0.0.2', '127.0.0.1', '::1'])('bound to %s', (address) => {
  let served: Awaited<ReturnType<typeof serveOn>>;
  let port: string;
  beforeAll(async () => {
    served = await serveOn(address);
    port = new URL(served.serving.url).port;
  });
  afterAll(() => served?.close());

  it.each([
    ['2025 initialize', INIT],
    ['2026-07-28 server/discover', DISCOVER],
  ])('refuses a foreign Host or Origin with 403 (%s)', async (_era, message) => {
    const foreign: Array<Record<string, string>> = [
      { host: `evil.example:${port}` },
      { host: 'evil.example' },
      { host: `127.0.0.2.evil.example:${port}` },
      { host: `localhost.evil.example:${port}` },
      { origin: 'http://evil.example' },
      { origin: `http://evil.example:${port}` },
      { origin: 'null' },
      { host: `evil.example:${port}`, origin: 'http://evil.example' },
    ];
    for (const headers of foreign) {
      const answer = await post(served.serving.url, headers, message);
      expect(answer.status, JSON.stringify(headers)).toBe(403);
      expect(answer.body, JSON.stringify(headers)).not.toContain('acme');
      expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    }
    // Not even a host: no URL can be made of it (its URL's hostname would be 127.0.0.1).
    const answer = await post(served.serving.url, { host: `evil.example@127.0.0.1:${port}` }, message);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Host header' } });
  });

  it('answers loopback Hosts and Origins: its own address, other loopback addresses, localhost', async () => {
    const own = address.includes(':') ? `[${address}]` : address;
    const loopback: Array<Record<string, string>> = [
      {},
      { host: `${own}:${port}` },
      { host: `localhost:${port}` },
      { host: `127.0.0.1:${port}` },
      { host: `127.9.9.9:${port}` },
      { host: `[::1]:${port}` },
      { origin: `http://localhost:${port}` },
      { origin: `http://${own}:${port}` },
    ];
    for (const headers of loopback) {
      const answer = await post(served.serving.url, headers, DISCOVER);
      expect(answer.status, `${JSON.stringify(headers)} ${answer.body}`).toBe(200);
    }
  });

  it('serves an ordinary client', async () => {
    const client = await connectHttp(served.serving.url, 'legacy');
    try {
      expect((await readBytes(client, 'skill://hello-mount/SKILL.md')).bytes.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});
