// `skills-mount serve --http` safe by default (issue 51, item 5), through the built CLI: a
// non-loopback address is refused without sign-in and served, said so, with
// --unauthenticated-network; a rebinding Host or a foreign Origin is refused; with --auth-issuer a
// request without a token gets 401, one with a token is served and its activations name the
// token's subject; the client's token never reaches the upstream server (whose every request a
// recording proxy sees); sessions are bounded by --max-sessions.
import { readFile } from 'node:fs/promises';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { startHttpServe, type ListeningServer } from '../support/http-server.js';
import { startJwtAuthServer, type JwtAuthServer } from '../support/jwt-auth-server.js';
import { servedBytes, servedUris, startServe, type RunningServe } from '../support/serve-watch.js';
import { connectHttp, newClient } from '../support/server-harness.js';
import { skillMd, writeTree } from '../support/skill-builder.js';
import { cli, person, writeConfig, type Person } from '../support/team-lock-world.js';
import { makeTempDir } from '../support/temp-dir.js';

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } };

/** A raw POST (fetch may not set Host): status and body. */
function post(url: string, headers: Record<string, string>, body: unknown = INIT): Promise<{ status: number | undefined; body: string; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** An HTTP proxy in front of `target` that keeps the headers of every request it forwards. */
async function recordingProxy(target: string): Promise<{ url: string; seen: IncomingHttpHeaders[]; close(): Promise<void> }> {
  const upstream = new URL(target);
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    const forwarded = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${upstream.pathname}`;
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('serve over HTTP', () => {
  let base: string;
  let upstream: ListeningServer;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let as: JwtAuthServer;
  let ana: Person;
  const stops: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    base = await makeTempDir('skills-mount-serve-http-');
    const served = path.join(base, 'served');
    await writeTree(served, { 'a/SKILL.md': skillMd('a') });
    upstream = await startHttpServe([served]);
    proxy = await recordingProxy(upstream.url);
    as = await startJwtAuthServer({ clients: { robot: 'robot-secret' } });
    ana = await person(base, 'ana');
    await writeConfig(ana, { up: { url: proxy.url } });
  }, 60_000);
  afterAll(async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
    await proxy?.close();
    await as?.close();
    await upstream?.stop();
    if (base) await removeReadOnlyTree(base);
  });

  async function serve(args: readonly string[], http?: string): Promise<RunningServe> {
    const running = await startServe(ana, ['--config', ana.configFile, '--all', ...args], http === undefined ? {} : { http });
    stops.push(() => running.stop());
    return running;
  }

  it('refuses a non-loopback address without sign-in: exit 2, one line naming the address and the two ways out', async () => {
    const started = Date.now();
    const refused = await cli(ana, ['serve', '--config', ana.configFile, '--http', '0.0.0.0:0'], { timeoutMs: 15_000 });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stdout).toBe('');
    // One line saying what is wrong, then (as for every command line refused) the usage.
    const [line, blank, usage] = refused.stderr.split('\n');
    expect(blank).toBe('');
    expect(usage).toMatch(/^usage: skills-mount /);
    expect(refused.stderr.match(/not a loopback address/g)).toHaveLength(1);
    expect(line).toMatch(/--http 0\.0\.0\.0: not a loopback address; .*--auth-issuer URL.*--unauthenticated-network/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('serves a non-loopback address with --unauthenticated-network, and the log says so', async () => {
    const open = await serve(['--unauthenticated-network'], '0.0.0.0:0');
    expect(open.log()).toMatch(/listening on http:\/\/0\.0\.0\.0:\d+\/mcp WITHOUT SIGN-IN \(--unauthenticated-network\)/);
    const client = await connectHttp(`http://127.0.0.1:${new URL(open.url).port}/mcp`, 'modern');
    try {
      expect(await servedUris(client)).toEqual(['skill://up/a/SKILL.md']);
    } finally {
      await client.close();
    }
  });

  it('refuses a rebinding Host and a foreign Origin; its own loopback Host is served', async () => {
    const gateway = await serve([]);
    const port = new URL(gateway.url).port;
    expect((await post(gateway.url, { host: `evil.example.com:${port}` })).status).toBe(403);
    expect((await post(gateway.url, { origin: 'http://evil.example.com' })).status).toBe(403);
    const ok = await post(gateway.url, { host: `localhost:${port}`, origin: `http://localhost:${port}` });
    expect(ok.status, ok.body).toBe(200);
  });

  it('with --auth-issuer: 401 without a token; with one, served, the activation and the audit line name its subject; the token never goes upstream', async () => {
    const audit = path.join(base, 'audit.jsonl');
    const gateway = await serve(['--auth-issuer', as.issuer, '--auth-scope', 'skills:read', '--audit', audit]);
    expect(gateway.log()).toContain(`(tokens from ${as.issuer})`);
    const refused = await post(gateway.url, {});
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer .*resource_metadata=/);

    const tokenAnswer = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('robot:robot-secret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: gateway.url, scope: 'skills:read' }),
    });
    const { access_token: token } = (await tokenAnswer.json()) as { access_token: string };
    expect(token).toMatch(/^ey/);
    const seenBefore = proxy.seen.length;
    const client = newClient('legacy');
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url), { authProvider: { token: async () => token } }));
    try {
      expect(await servedUris(client)).toEqual(['skill://up/a/SKILL.md']);
      expect(await servedBytes(client, 'skill://up/a/SKILL.md')).toBe(skillMd('a'));
    } finally {
      await client.close();
    }
    await expect.poll(() => gateway.log(), { timeout: 2_000 }).toMatch(/activation: sub:alice resources\/read \[up\] a sha256:[0-9a-f]{64}/);
    await expect.poll(async () => (await readFile(audit, 'utf8').catch(() => '')).trim(), { timeout: 2_000 }).not.toBe('');
    const lines = (await readFile(audit, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toEqual([expect.objectContaining({ client: 'sub:alice', method: 'resources/read', label: 'up', skill: 'a', uri: 'skill://up/a/SKILL.md', upstreamUri: 'skill://a/SKILL.md', digest: expect.stringMatching(/^sha256:/) })]);
    expect(new Date(lines[0]!.time as string).getTime()).toBeGreaterThan(Date.now() - 60_000);

    // The upstream saw the gateway's requests (its SKILL.md read among them), none with the client's token.
    expect(proxy.seen.length).toBeGreaterThan(seenBefore);
    for (const headers of proxy.seen) {
      expect(headers.authorization).toBeUndefined();
      expect(JSON.stringify(headers)).not.toContain(token.slice(-20));
    }
  });

  it('bounds sessions by --max-sessions: past the cap with every session streaming, a new one gets 503', async () => {
    const gateway = await serve(['--max-sessions', '2']);
    const clients: Client[] = [];
    try {
      // The SDK's 2025 client holds its GET stream open: a session never idle.
      for (let i = 0; i < 2; i++) clients.push(await connectHttp(gateway.url, 'legacy'));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const refused = await post(gateway.url, {});
      expect(refused.status, refused.body).toBe(503);
      expect(refused.body).toContain('Too many sessions');
      // The sessions there still work.
      for (const client of clients) expect(await servedUris(client)).toEqual(['skill://up/a/SKILL.md']);
    } finally {
      await Promise.allSettled(clients.map((client) => client.close()));
    }
  });
});
