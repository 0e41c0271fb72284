// skills-serve as users run it: the built CLI over stdio and over Streamable HTTP.
// Needs `npm run build` first (dist/cli/skills-serve.js).
import { spawn } from 'node:child_process';
import { appendFile, cp, readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitOf, stopChild } from '../support/children.js';
import { sha256 } from '../support/digest.mjs';
import { startHttpServe, type ListeningServer } from '../support/http-server.js';
import {
  CLI,
  connectHttp,
  connectStdio,
  errorOf,
  EXAMPLES,
  listAllSkills,
  ListResult,
  readBytes,
  readDirectoryAll,
  type ClientEra,
  type Connected,
} from '../support/server-harness.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const EXAMPLE_URIS = [
  'skill://acme/billing/refunds/SKILL.md',
  'skill://brand-kit/SKILL.md',
  'skill://hello-mount/SKILL.md',
  'skill://pdf-tools/SKILL.md',
  'skill://pdf-tools/forms/SKILL.md',
];

/** Exit code and stderr of a CLI run that is expected to end by itself. */
function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('command line', () => {
  it.each([
    [[], /DIR is required/],
    [['a', 'b'], /exactly one DIR/],
    [[EXAMPLES, '--protocol', 'nope'], /--protocol must be/],
    [[EXAMPLES, '--page-size', '0'], /--page-size must be a positive integer/],
    [[EXAMPLES, '--http', 'localhost'], /--http must be/],
    [[EXAMPLES, '--bogus'], /Unknown option/],
    [[EXAMPLES, '--strict'], /Unknown option/],
    [[EXAMPLES, '--ttl', '1.5'], /--ttl must be/],
    [[EXAMPLES, '--cache-scope', 'shared'], /--cache-scope must be/],
    [[EXAMPLES, '--max-sessions', '0'], /--max-sessions must be a positive integer/],
    [[EXAMPLES, '--session-idle', '1.5'], /--session-idle must be a positive integer/],
    [['/does/not/exist'], /does not exist/],
    [[join(EXAMPLES, 'hello-mount/SKILL.md')], /is not a directory/],
  ])('exits 2 with a clear error for %j', async (args, message) => {
    const { code, stderr } = await runCli(args as string[]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});

describe.each(['legacy', 'modern'] as ClientEra[])('over stdio (%s)', (era) => {
  let connected: Connected;
  beforeAll(async () => {
    connected = await connectStdio([EXAMPLES, '--page-size', '2'], era);
  });
  afterAll(() => connected?.close());

  it('speaks the era asked for', () => {
    expect(connected.client.getNegotiatedProtocolVersion()).toBe(era === 'modern' ? '2026-07-28' : '2025-11-25');
  });

  it('serves the examples: five skills over three pages, nested and prefixed ones included', async () => {
    const { skills, pages } = await listAllSkills(connected.client);
    expect(pages).toBe(3);
    expect(skills.map((s) => s.uri)).toEqual(EXAMPLE_URIS);
    for (const skill of skills) {
      for (const resource of skill.resources) {
        const bytes = await readFile(join(EXAMPLES, resource.uri.slice('skill://'.length)));
        expect(resource.digest).toBe(sha256(bytes));
      }
    }
  });

  it('carries the cache hints on 2026-07-28 only (default --ttl 30, --cache-scope private)', async () => {
    const page = await connected.client.request({ method: 'skills/list', params: {} }, ListResult);
    if (era === 'modern') expect(page).toMatchObject({ ttlMs: 30_000, cacheScope: 'private' });
    else expect(page).not.toHaveProperty('ttlMs');
  });

  it('returns the PNG logo as a blob with its exact bytes, and lists templates/', async () => {
    const png = await readBytes(connected.client, 'skill://brand-kit/assets/logo.png');
    expect(png.kind).toBe('blob');
    expect(png.mimeType).toBe('image/png');
    expect(png.bytes.equals(await readFile(join(EXAMPLES, 'brand-kit/assets/logo.png')))).toBe(true);
    expect((await readDirectoryAll(connected.client, 'skill://brand-kit/templates')).map((c) => c.name)).toEqual([
      'announcement.md',
      'slide-title.md',
    ]);
  });

  it('logs only to stderr: the startup line names the skill and file counts', async () => {
    await expect.poll(() => connected.logs.join('\n')).toMatch(/^skills-serve: serving \d+ skills \(\d+ files\) from /m);
    expect(connected.logs.some((l) => l.includes('warning'))).toBe(false);
  });

  it('answers errors with the right codes', async () => {
    expect((await errorOf(connected.client.readResource({ uri: 'skill://../etc/passwd' }))).code).toBe(-32602);
  });
});

describe('over Streamable HTTP', () => {
  let root: string;
  let served: ListeningServer;
  const clients: Client[] = [];
  const connect = async (era: ClientEra): Promise<Client> => {
    const client = await connectHttp(served.url, era);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    root = await makeTempDir('skills-serve-http-');
    await cp(EXAMPLES, root, { recursive: true });
    served = await startHttpServe([root, '--ttl', '5', '--cache-scope', 'public']);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await served?.stop();
    await removeDir(root);
  });

  it('prints a loopback URL and serves both eras at once: 2025 sessions and stateless 2026-07-28', async () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const [a, b, m] = await Promise.all([connect('legacy'), connect('legacy'), connect('modern')]);
    expect(m.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const [listA, listB, listM] = await Promise.all([listAllSkills(a), listAllSkills(b), listAllSkills(m)]);
    expect(listA.skills.map((s) => s.uri)).toEqual(EXAMPLE_URIS);
    expect(listB.skills).toEqual(listA.skills);
    expect(listM.skills).toEqual(listA.skills);
    const logo = 'skill://brand-kit/assets/logo.png';
    for (const client of [b, m]) {
      const read = await readBytes(client, logo);
      expect(read.kind).toBe('blob');
      expect(read.bytes.equals(await readFile(join(root, logo.slice('skill://'.length))))).toBe(true);
    }
    expect(JSON.parse((await readBytes(m, 'skill://index.json')).bytes.toString()).skills).toHaveLength(5);
  });

  it('puts --ttl and --cache-scope on every cacheable 2026-07-28 result, none on 2025 ones', async () => {
    const m = await connect('modern');
    const hint = { ttlMs: 5000, cacheScope: 'public' };
    expect(await m.request({ method: 'skills/list', params: {} }, ListResult)).toMatchObject(hint);
    const raw = async (method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const response = await fetch(served.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': method,
          ...(method === 'resources/read' && { 'mcp-name': String(params.uri) }),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method,
          params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } },
        }),
      });
      return ((await response.json()) as { result: Record<string, unknown> }).result;
    };
    for (const [method, params] of [
      ['skills/list', {}],
      ['skills/get', { uri: 'skill://hello-mount/SKILL.md' }],
      ['resources/directory/read', { uri: 'skill://hello-mount' }],
      ['resources/read', { uri: 'skill://hello-mount/SKILL.md' }],
      ['resources/read', { uri: 'skill://index.json' }],
      ['resources/list', {}],
    ] as const) {
      expect(await raw(method, params), method).toMatchObject({ ...hint, resultType: 'complete' });
    }
    const legacy = await connect('legacy');
    expect(await legacy.request({ method: 'skills/list', params: {} }, ListResult)).not.toHaveProperty('ttlMs');
  });

  it('reads every file back byte-identical over HTTP', async () => {
    const client = await connect('modern');
    const { skills } = await listAllSkills(client);
    let checked = 0;
    for (const resource of skills.flatMap((s) => s.resources)) {
      const read = await readBytes(client, resource.uri);
      expect(sha256(read.bytes), resource.uri).toBe(resource.digest);
      expect(read.bytes.equals(await readFile(join(root, resource.uri.slice('skill://'.length))))).toBe(true);
      checked++;
    }
    expect(checked).toBe(new Set(skills.flatMap((s) => s.resources.map((r) => r.uri))).size + 2); // pdf-tools lists forms' files too
  });

  it('tells every client when a file changes, and only subscribers that it was updated, in both eras', async () => {
    const [a, b, m, n] = await Promise.all([connect('legacy'), connect('legacy'), connect('modern'), connect('modern')]);
    const events: string[] = [];
    for (const [label, client] of [['a', a], ['b', b], ['m', m], ['n', n]] as const) {
      client.setNotificationHandler('notifications/resources/list_changed', () => void events.push(`${label}:list_changed`));
      client.setNotificationHandler('notifications/resources/updated', (note) => void events.push(`${label}:updated ${note.params.uri}`));
    }
    const uri = 'skill://hello-mount/SKILL.md';
    await a.subscribeResource({ uri });
    const listens = [
      await m.listen({ resourcesListChanged: true, resourceSubscriptions: [uri] }),
      await n.listen({ resourcesListChanged: true, resourceSubscriptions: ['skill://brand-kit/SKILL.md'] }),
    ];
    await appendFile(join(root, 'hello-mount/SKILL.md'), '\nOne more line.\n');
    await expect.poll(() => [...new Set(events)].sort(), { timeout: 5000 }).toEqual(
      ['a:list_changed', `a:updated ${uri}`, 'b:list_changed', 'm:list_changed', `m:updated ${uri}`, 'n:list_changed'].sort(),
    );
    await Promise.all(listens.map((listen) => listen.close()));
  });

  it('answers 404 off /mcp, 403 to a non-loopback Host or a foreign Origin, 404 to an unknown session', async () => {
    const base = new URL(served.url);
    expect((await fetch(new URL('/', base))).status).toBe(404);
    expect((await fetch(new URL('/mcp/x', base))).status).toBe(404);
    // fetch may not set Host, so a raw request plays the DNS-rebinding page.
    const statusWith = (headers: Record<string, string>): Promise<number | undefined> =>
      new Promise((resolve, reject) => {
        const req = request(served.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
          res.resume();
          resolve(res.statusCode);
        });
        req.on('error', reject);
        req.end('{}');
      });
    expect(await statusWith({ host: `evil.example:${base.port}` })).toBe(403);
    expect(await statusWith({ origin: 'http://evil.example' })).toBe(403);
    const unknownSession = await fetch(served.url, {
      method: 'POST',
      headers: { 'mcp-session-id': 'nope', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(unknownSession.status).toBe(404);
  });
});

describe('shutdown', () => {
  it('exits 0 within 1 s of SIGTERM with clients of both eras connected over HTTP', async () => {
    const other = await startHttpServe([EXAMPLES]);
    const legacy = await connectHttp(other.url, 'legacy');
    await legacy.subscribeResource({ uri: 'skill://hello-mount/SKILL.md' });
    const modern = await connectHttp(other.url, 'modern');
    await modern.listen({ resourcesListChanged: true });
    try {
      const started = Date.now();
      expect((await other.stop()).code).toBe(0);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(other.log()).toMatch(/SIGTERM; shutting down/);
    } finally {
      await Promise.allSettled([legacy.close(), modern.close()]);
      await other.stop();
    }
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('exits 0 within 1 s of %s over stdio with a client connected', async (signal) => {
    const child = spawn(process.execPath, [CLI, EXAMPLES], { stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const hello = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } };
      child.stdin.write(`${JSON.stringify(hello)}\n`);
      await expect.poll(() => stdout, { timeout: 5000 }).toContain('"id":1');
      const started = Date.now();
      const exited = exitOf(child);
      child.kill(signal);
      expect((await exited).code).toBe(0);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await stopChild(child);
    }
  });
});
