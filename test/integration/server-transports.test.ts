// skills-serve as users run it: the built CLI over stdio and over Streamable HTTP.
// Needs `npm run build` first (dist/cli/skills-serve.js).
import { spawn } from 'node:child_process';
import { appendFile, readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI,
  connectHttp,
  connectStdio,
  copyCorpus,
  errorOf,
  listAllSkills,
  readBytes,
  readDirectoryAll,
  REPO_ROOT,
  removeDir,
  sha256,
  spawnHttp,
  stopChild,
  type Connected,
  type SpawnedHttp,
} from '../support/server-harness.js';

const EXAMPLES = join(REPO_ROOT, 'examples/skills');

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
    [['/does/not/exist'], /does not exist/],
    [[join(EXAMPLES, 'hello-mount/SKILL.md')], /is not a directory/],
  ])('exits 2 with a clear error for %j', async (args, message) => {
    const { code, stderr } = await runCli(args as string[]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});

describe('over stdio', () => {
  let connected: Connected;
  beforeAll(async () => {
    connected = await connectStdio([EXAMPLES, '--page-size', '2']);
  });
  afterAll(() => connected?.close());

  it('serves the examples: five skills over three pages, nested and prefixed ones included', async () => {
    const { skills, pages } = await listAllSkills(connected.client);
    expect(pages).toBe(3);
    expect(skills.map((s) => s.uri)).toEqual([
      'skill://acme/billing/refunds/SKILL.md',
      'skill://brand-kit/SKILL.md',
      'skill://hello-mount/SKILL.md',
      'skill://pdf-tools/SKILL.md',
      'skill://pdf-tools/forms/SKILL.md',
    ]);
    for (const skill of skills) {
      for (const resource of skill.resources) {
        const bytes = await readFile(join(EXAMPLES, resource.uri.slice('skill://'.length)));
        expect(resource.digest).toBe(sha256(bytes));
      }
    }
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
    await expect.poll(() => connected.logs.join('\n')).toMatch(/^skills-serve: serving 5 skills \(12 files\) from /m);
    expect(connected.logs.some((l) => l.includes('warning'))).toBe(false);
  });

  it('answers errors with the right codes', async () => {
    expect((await errorOf(connected.client.readResource({ uri: 'skill://../etc/passwd' }))).code).toBe(-32602);
  });
});

describe('over Streamable HTTP', () => {
  let root: string;
  let served: SpawnedHttp;
  const clients: Client[] = [];

  beforeAll(async () => {
    root = await copyCorpus();
    served = await spawnHttp([root, '--protocol', 'listing']);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    if (served) await stopChild(served.child);
    await removeDir(root);
  });

  it('prints a loopback URL and serves the corpus to several sessions at once', async () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const [a, b] = await Promise.all([connectHttp(served.url), connectHttp(served.url)]);
    clients.push(a!, b!);
    const [listA, listB] = await Promise.all([listAllSkills(a!), listAllSkills(b!)]);
    expect(listA.skills).toHaveLength(12);
    expect(listB.skills).toEqual(listA.skills);
    const font = 'skill://canvas-design/canvas-fonts/ArsenalSC-Regular.ttf';
    const read = await readBytes(b!, font);
    expect(read.kind).toBe('blob');
    expect(read.bytes.equals(await readFile(join(root, font.slice('skill://'.length))))).toBe(true);
    expect((await errorOf(a!.readResource({ uri: 'skill://index.json' }))).code).toBe(-32602);
  });

  it('reads every corpus file back byte-identical over HTTP', async () => {
    const client = await connectHttp(served.url);
    clients.push(client);
    const { skills } = await listAllSkills(client);
    let checked = 0;
    for (const resource of skills.flatMap((s) => s.resources)) {
      const read = await readBytes(client, resource.uri);
      expect(sha256(read.bytes), resource.uri).toBe(resource.digest);
      expect(read.bytes.equals(await readFile(join(root, resource.uri.slice('skill://'.length))))).toBe(true);
      checked++;
    }
    expect(checked).toBe(195);
  });

  it('tells every open session when a file changes, and only subscribers that it was updated', async () => {
    const [a, b] = await Promise.all([connectHttp(served.url), connectHttp(served.url)]);
    clients.push(a!, b!);
    const events: string[] = [];
    a!.setNotificationHandler(ResourceListChangedNotificationSchema, () => void events.push('a:list_changed'));
    b!.setNotificationHandler(ResourceListChangedNotificationSchema, () => void events.push('b:list_changed'));
    a!.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void events.push(`a:updated ${n.params.uri}`));
    b!.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void events.push(`b:updated ${n.params.uri}`));
    await a!.subscribeResource({ uri: 'skill://internal-comms/SKILL.md' });
    await appendFile(join(root, 'internal-comms/SKILL.md'), '\nOne more line.\n');
    await expect.poll(() => events.sort(), { timeout: 5000 }).toEqual(
      ['a:list_changed', 'a:updated skill://internal-comms/SKILL.md', 'b:list_changed'].sort(),
    );
  });

  it('answers 404 off /mcp and 403 to a non-loopback Host header', async () => {
    const base = new URL(served.url);
    expect((await fetch(new URL('/', base))).status).toBe(404);
    expect((await fetch(new URL('/mcp/x', base))).status).toBe(404);
    // fetch may not set Host, so a raw request plays the DNS-rebinding page.
    const rebindingStatus = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(served.url, { method: 'POST', headers: { host: `evil.example:${base.port}`, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(rebindingStatus).toBe(403);
    const unknownSession = await fetch(served.url, {
      method: 'POST',
      headers: { 'mcp-session-id': 'nope', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(unknownSession.status).toBe(404);
  });

  it('exits 0 on SIGTERM', async () => {
    const other = await spawnHttp([EXAMPLES]);
    expect(await stopChild(other.child)).toBe(0);
    expect(other.stderr()).toMatch(/SIGTERM; shutting down/);
  });
});
