// The --metrics endpoint over real HTTP: /metrics in the registry's content type (HEAD too),
// /healthz 200 "ok" or 503 with a one-line reason, 404 and 405 for the rest, bind errors a
// person can act on; and the whole chain over the real MCP stack (reference server, SDK
// client, in-memory transport): the reads a catalog makes show up at /metrics, and promtool
// accepts what is served.
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { ConfigError } from '../../src/errors.js';
import { McpSkillSource } from '../../src/mcp/mcp-skill-source.js';
import { MountHealth, MountMetrics, exposureWarning, startMetricsServer, type HealthReport, type MetricsServer } from '../../src/metrics/index.js';
import { createSkillsServer } from '../../src/server/index.js';
import { failIfMissing, promtoolCheck, skipWithoutTools } from '../support/prometheus-tools.js';
import { EXAMPLES } from '../support/server-harness.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with node:http (fetch cannot send every method, nor show a HEAD's empty body as sent). */
function ask(url: string, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, { method }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

async function serve(options: { metrics?: () => Promise<string>; health?: () => Promise<HealthReport>; host?: string; port?: number } = {}): Promise<MetricsServer> {
  const server = await startMetricsServer({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    metrics: options.metrics ?? (async () => '# HELP x_total X.\n# TYPE x_total counter\nx_total 1\n'),
    contentType: 'text/plain; version=0.0.4; charset=utf-8',
    health: options.health ?? (async () => ({ healthy: true })),
  });
  cleanups.push(() => server.close());
  return server;
}

describe('the metrics endpoint', () => {
  it('serves /metrics in the Prometheus content type, GET and HEAD, a query string ignored', async () => {
    const server = await serve();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const got = await ask(`${server.url}/metrics`);
    expect(got).toMatchObject({ status: 200, body: '# HELP x_total X.\n# TYPE x_total counter\nx_total 1\n' });
    expect(got.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const head = await ask(`${server.url}/metrics`, 'HEAD');
    expect(head).toMatchObject({ status: 200, body: '' });
    expect(head.headers['content-length']).toBe(String(got.body.length));
    expect((await ask(`${server.url}/metrics?name[]=x`)).status).toBe(200);
  });

  it('serves /healthz: 200 ok, or 503 with the reason on one line', async () => {
    let report: HealthReport = { healthy: true };
    const server = await serve({ health: async () => report });
    expect(await ask(`${server.url}/healthz`)).toMatchObject({ status: 200, body: 'ok\n' });
    report = { healthy: false, reason: 'mount /m is gone (detached)' };
    const down = await ask(`${server.url}/healthz`);
    expect(down).toMatchObject({ status: 503, body: 'mount /m is gone (detached)\n' });
    expect(down.headers['content-type']).toBe('text/plain; charset=utf-8');
    report = { healthy: false, reason: 'probe through the mount failed: a\nforged line' };
    expect((await ask(`${server.url}/healthz`)).body).toBe('probe through the mount failed: a forged line\n');
    // A server waiting for a sign-in: still healthy (a restart would not sign in), and said so, one line each.
    report = { healthy: true, notes: ['team: needs login; run: skills-mount login team', 'x: a\nforged'] };
    expect(await ask(`${server.url}/healthz`)).toMatchObject({ status: 200, body: 'ok\nteam: needs login; run: skills-mount login team\nx: a forged\n' });
  });

  it('answers 404 for any other path and 405 (with Allow) for other methods', async () => {
    const server = await serve();
    for (const path of ['/', '/metrics/', '/healthz/x', '/favicon.ico', '/constructor', '/__proto__']) {
      expect((await ask(`${server.url}${path}`)).status, path).toBe(404);
    }
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
      const refused = await ask(`${server.url}/metrics`, method);
      expect(refused.status, method).toBe(405);
      expect(refused.headers['allow']).toBe('GET, HEAD');
    }
    expect((await ask(`${server.url}/healthz`, 'POST')).status).toBe(405);
  });

  it('answers 500 naming the failure when the registry fails', async () => {
    const server = await serve({
      metrics: async () => {
        throw new Error('collect failed');
      },
    });
    expect(await ask(`${server.url}/metrics`)).toMatchObject({ status: 500, body: 'collect failed\n' });
  });

  it('refuses a port in use and an address not of this host with a ConfigError naming the address', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => taken.close(resolve)));
    const port = (taken.address() as AddressInfo).port;
    const inUse = serve({ port });
    await expect(inUse).rejects.toThrow(ConfigError);
    await expect(inUse).rejects.toThrow(`--metrics 127.0.0.1:${port}: the address is in use (another process listens on port ${port} there); choose another port`);
    await expect(serve({ host: '192.0.2.1', port: 9464 })).rejects.toThrow('--metrics 192.0.2.1:9464: 192.0.2.1 is not an address of this host');
  });

  it('tells the address it listens on: a warning for 0.0.0.0, none for 127.0.0.1 or localhost', async () => {
    const facts = { servers: ['demo'], mountpoint: '/m' };
    const everywhere = await serve({ host: '0.0.0.0' });
    expect(everywhere.address).toBe('0.0.0.0');
    expect(exposureWarning(everywhere, facts)).toMatch(/^warning: --metrics listens on every address of this host \(http:\/\/0\.0\.0\.0:\d+\)/);
    for (const host of ['127.0.0.1', 'localhost']) {
      const local = await serve({ host });
      expect(exposureWarning(local, facts), `${host} bound as ${local.address}`).toBeUndefined();
    }
  });

  it('puts an IPv6 host in brackets', async (context) => {
    const server = await serve({ host: '::1' }).catch((error: unknown) => {
      if (error instanceof ConfigError && /not an address of this host/.test(error.message)) context.skip();
      throw error;
    });
    expect(server.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
    expect((await ask(`${server.url}/healthz`)).status).toBe(200);
  });
});

describe('metrics over the real MCP stack', () => {
  async function mounted() {
    const served = await createSkillsServer({ root: EXAMPLES, protocol: 'both', directoryRead: true, debounceMs: 30, log: () => undefined });
    const metrics = new MountMetrics({ servers: ['demo'] });
    const cache = new ContentCache(1 << 24, { onLookup: (hit) => metrics.cacheLookup('memory', hit) });
    const source = new McpSkillSource(
      'demo',
      { kind: 'stdio', command: 'unused', args: [], env: {}, cwd: undefined },
      {
        timeoutMs: 5_000,
        log: () => undefined,
        observer: metrics.requestObserver,
        createTransport: () => {
          const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
          void served.server.connect(serverSide);
          return clientSide;
        },
        minBackoffMs: 60_000,
      },
    );
    const catalog = new ServerCatalog(source, {
      ...DEFAULT_CATALOG_TIMINGS,
      log: () => undefined,
      cache,
      hideDynamic: false,
      onVerificationFailure: (reason) => metrics.verificationFailed('demo', reason),
    });
    cleanups.push(() => served.close(), () => source.close());
    metrics.cacheEnabled('memory');
    metrics.watch({ catalogs: () => [catalog], caches: () => ({ memory: { usedBytes: cache.sizeBytes, limitBytes: 1 << 24 } }) });
    const health = new MountHealth({ mountpoint: '/m', findMount: async () => ({ fsType: 'fuse.skills-mount', connection: '9' }), probe: async () => ({ kind: 'ok' }), probeTimeoutMs: 2_000 });
    const server = await serve({ metrics: () => metrics.text(), health: () => health.check() });
    await source.start();
    await catalog.refresh();
    return { catalog, server, health };
  }

  const value = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}"[\]().+]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

  it('counts the reads a catalog makes, the listing, cache hits, the server and its skills', async () => {
    const { catalog, server, health } = await mounted();
    expect((await ask(`${server.url}/healthz`)).status).toBe(503);
    health.mounted({ connection: '9' });
    expect(await ask(`${server.url}/healthz`)).toMatchObject({ status: 200, body: 'ok\n' });
    for (const path of ['hello-mount/SKILL.md', 'hello-mount/references/checklist.md', 'pdf-tools/SKILL.md']) await catalog.read(path);
    await catalog.read('hello-mount/SKILL.md');
    const text = (await ask(`${server.url}/metrics`)).body;
    expect(value(text, 'skills_mount_mcp_requests_total{server="demo",method="resources/read",outcome="ok"}')).toBe(3);
    expect(value(text, 'skills_mount_mcp_requests_total{server="demo",method="skills/list",outcome="ok"}')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'skills_mount_mcp_request_duration_seconds_count{server="demo",method="resources/read"}')).toBe(3);
    expect(value(text, 'skills_mount_mcp_requests_in_flight{server="demo"}')).toBe(0);
    expect(value(text, 'skills_mount_cache_hits_total{cache="memory"}')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'skills_mount_cache_misses_total{cache="memory"}')).toBe(3);
    expect(value(text, 'skills_mount_cache_bytes{cache="memory"}')).toBeGreaterThan(0);
    expect(value(text, 'skills_mount_server_up{server="demo"}')).toBe(1);
    expect(value(text, 'skills_mount_server_state{server="demo",state="connected"}')).toBe(1);
    expect(value(text, 'skills_mount_server_skills{server="demo"}')).toBe(5);
    expect(value(text, 'skills_mount_verification_failures_total{server="demo",reason="digest"}')).toBe(0);
  });

  const skip = skipWithoutTools(['promtool']);
  it.skipIf(skip)('promtool check metrics accepts what /metrics serves', async () => {
    failIfMissing(['promtool']);
    const { catalog, server } = await mounted();
    await catalog.read('hello-mount/SKILL.md');
    const checked = await promtoolCheck((await ask(`${server.url}/metrics`)).body);
    expect(checked).toEqual({ code: 0, output: '' });
  });
});
