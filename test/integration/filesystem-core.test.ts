// The filesystem core over the real MCP stack (reference server, SDK client, in-memory
// transport): no kernel in the loop, so request counts and versions are exact.
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { cp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { NoAttributeError, NotFoundError, StaleVersionError, UnavailableError } from '../../src/errors.js';
import { SkillsFilesystem } from '../../src/fs/skills-filesystem.js';
import { McpSkillSource } from '../../src/mcp/mcp-skill-source.js';
import { createSkillsServer, type DiscoveryProtocol } from '../../src/server/index.js';
import { CORPUS_DIR } from '../support/mount-harness.js';
import { makeTempDir } from '../support/temp-dir.js';
import type { ProtocolVersionChoice } from '../../src/protocol/revisions.js';

interface Harness {
  filesystem: SkillsFilesystem;
  catalog: ServerCatalog;
  requests: string[];
  logs: string[];
  root: string;
  stopServer(): Promise<void>;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(options: { root?: string; protocol?: DiscoveryProtocol; directoryRead?: boolean; protocolVersion?: ProtocolVersionChoice } = {}): Promise<Harness> {
  const root = options.root ?? CORPUS_DIR;
  // The external corpus has a skill whose description breaks a length limit: serve it anyway.
  const served = await createSkillsServer({ root, lenient: true, protocol: options.protocol ?? 'both', directoryRead: options.directoryRead ?? true, debounceMs: 30, log: () => undefined });
  const logs: string[] = [];
  const requests: string[] = [];
  const source = new McpSkillSource(
    'lab',
    { kind: 'stdio', command: 'unused', args: [], env: {}, cwd: undefined },
    {
      timeoutMs: 5_000,
      protocolVersion: options.protocolVersion ?? 'negotiate',
      verbose: true,
      log: (line) => {
        logs.push(line);
        const request = /^\[lab\] (\S+)(?: (\S+))? [\d.]+ms/.exec(line);
        if (request) requests.push(`${request[1]} ${request[2] ?? ''}`.trim());
      },
      createTransport: () => {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        void served.server.connect(serverSide);
        return clientSide;
      },
      minBackoffMs: 60_000,
    },
  );
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: (line) => logs.push(line), cache: new ContentCache(64 * 1024 * 1024), hideDynamic: false });
  await source.start();
  await catalog.refresh();
  cleanups.push(() => source.close(), () => served.close());
  return { filesystem: new SkillsFilesystem([catalog]), catalog, requests, logs, root, stopServer: () => served.server.close() };
}

async function readWhole(filesystem: SkillsFilesystem, filePath: string): Promise<Buffer> {
  const handle = await filesystem.open(filePath);
  try {
    const { sizeBytes } = await filesystem.getattr(filePath);
    return Buffer.from(filesystem.read(handle, 0, sizeBytes + 1));
  } finally {
    filesystem.release(handle);
  }
}

async function walk(filesystem: SkillsFilesystem, dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const name of (await filesystem.readdir(dir)).sort()) {
    const child = `${dir}/${name}`;
    if ((await filesystem.getattr(child)).kind === 'directory') files.push(...(await walk(filesystem, child)));
    else files.push(child);
  }
  return files;
}

async function localFiles(dir: string, prefix = ''): Promise<string[]> {
  const files: string[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory()) files.push(...(await localFiles(path.join(dir, entry.name), `${prefix}/${entry.name}`)));
    else files.push(`${prefix}/${entry.name}`);
  }
  return files;
}

describe('filesystem core over MCP', () => {
  it.each(['2025-11-25', '2026-07-28'] as const)('at %s: walks the corpus with exact sizes and zero content reads, then reads each file once', async (protocolVersion) => {
    const { filesystem, requests } = await harness({ protocolVersion });
    const expected = await localFiles(CORPUS_DIR);
    const seen = await walk(filesystem, '/lab');
    expect(seen.sort()).toEqual(expected.map((file) => `/lab${file}`).sort());
    for (const file of expected) {
      expect((await filesystem.getattr(`/lab${file}`)).sizeBytes).toBe((await readFile(path.join(CORPUS_DIR, file))).length);
    }
    expect(requests.filter((request) => request.startsWith('resources/read'))).toEqual([]);
    for (const file of expected) expect((await readWhole(filesystem, `/lab${file}`)).equals(await readFile(path.join(CORPUS_DIR, file)))).toBe(true);
    expect(requests.filter((request) => request.startsWith('resources/read'))).toHaveLength(expected.length);
    // Update notifications are subscribed once per skill (its SKILL.md), not per file; on
    // 2026-07-28 through the subscriptions/listen filter, so never with resources/subscribe.
    const subscriptions = requests.filter((request) => request.startsWith('resources/subscribe'));
    const perSkill = expected.filter((file) => file.endsWith('/SKILL.md')).map((file) => `resources/subscribe skill:/${file}`).sort();
    expect(subscriptions.sort()).toEqual(protocolVersion === '2025-11-25' ? perSkill : []);
    for (const file of expected.slice(0, 10)) await readWhole(filesystem, `/lab${file}`);
    expect(requests.filter((request) => request.startsWith('resources/read'))).toHaveLength(expected.length);
  });

  it('concurrent cold opens of one file cost one resources/read', async () => {
    const { filesystem, requests } = await harness();
    await Promise.all(Array.from({ length: 8 }, () => readWhole(filesystem, '/lab/pdf-forms/assets/w9-template.pdf')));
    expect(requests.filter((request) => request === 'resources/read skill://pdf-forms/assets/w9-template.pdf')).toHaveLength(1);
  });

  it('index generation: sizes of SKILL.md come from one verified fetch that later reads reuse', async () => {
    const { filesystem, requests } = await harness({ protocol: 'index', directoryRead: false });
    const skillMd = '/lab/commit-message/SKILL.md';
    const { sizeBytes } = await filesystem.getattr(skillMd);
    expect(sizeBytes).toBe((await readFile(path.join(CORPUS_DIR, 'commit-message/SKILL.md'))).length);
    await readWhole(filesystem, skillMd);
    expect(requests.filter((request) => request === 'resources/read skill://commit-message/SKILL.md')).toHaveLength(1);
    expect((await filesystem.getxattr(skillMd, 'user.mcp.verified')).toString()).toBe('true');
  });

  it('unknown paths are ENOENT and remembered for a while', async () => {
    const { filesystem, requests } = await harness({ directoryRead: false });
    await expect(filesystem.getattr('/lab/no-such-skill')).rejects.toBeInstanceOf(NotFoundError);
    const asked = requests.length;
    await expect(filesystem.getattr('/lab/no-such-skill')).rejects.toBeInstanceOf(NotFoundError);
    expect(requests.length).toBe(asked);
    await expect(filesystem.getattr('/nolabel')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('a file changed on the server: new bytes after the notification, the open handle keeps its version', async () => {
    const root = await makeTempDir('skills-mount-core-');
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await cp(path.join(CORPUS_DIR, 'brand-fonts'), path.join(root, 'brand-fonts'), { recursive: true });
    const { filesystem, logs } = await harness({ root });
    const file = '/lab/brand-fonts/OFL.txt';
    const before = await readWhole(filesystem, file);
    const inodeBefore = (await filesystem.getattr(file)).inode;
    const handle = await filesystem.open(file);
    await writeFile(path.join(root, 'brand-fonts/OFL.txt'), 'a new license\n');
    await expect.poll(async () => (await readWhole(filesystem, file)).toString(), { timeout: 5_000 }).toBe('a new license\n');
    expect((await filesystem.getattr(file)).inode).not.toBe(inodeBefore);
    expect(Buffer.from(filesystem.read(handle, 0, before.length + 10)).equals(before)).toBe(true);
    filesystem.release(handle);
    expect(logs.join('\n')).toMatch(/listing generation: 1 skills/);
  });

  it('open serves the version whose size getattr last reported, so the kernel never clamps a newer one', async () => {
    const root = await makeTempDir('skills-mount-core-');
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await cp(path.join(CORPUS_DIR, 'brand-fonts'), path.join(root, 'brand-fonts'), { recursive: true });
    const { filesystem, catalog } = await harness({ root });
    const file = '/lab/brand-fonts/OFL.txt';
    const before = await readWhole(filesystem, file);
    const reported = (await filesystem.getattr(file)).sizeBytes;
    await writeFile(path.join(root, 'brand-fonts/OFL.txt'), 'a much shorter license\n');
    await expect.poll(async () => (await catalog.lookup('brand-fonts/OFL.txt')).sizeBytes, { timeout: 5_000 }).not.toBe(reported);
    // No getattr since: the kernel still believes the old size, and gets the old bytes.
    const handle = await filesystem.open(file);
    expect(Buffer.from(filesystem.read(handle, 0, reported + 100)).equals(before)).toBe(true);
    filesystem.release(handle);
    // Once getattr reports the new version, open serves it.
    expect((await filesystem.getattr(file)).sizeBytes).toBe('a much shorter license\n'.length);
    expect((await readWhole(filesystem, file)).toString()).toBe('a much shorter license\n');
  });

  it('a never-read file that grew since getattr is never served clipped: ESTALE until the kernel may ask again, then all of it', async () => {
    const root = await makeTempDir('skills-mount-core-');
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await cp(path.join(CORPUS_DIR, 'brand-fonts'), path.join(root, 'brand-fonts'), { recursive: true });
    const { catalog } = await harness({ root });
    let nowMs = 1_000_000;
    const logs: string[] = [];
    const filesystem = new SkillsFilesystem([catalog], { now: () => nowMs, metadataTtlMs: 30_000, log: (line) => logs.push(line) });
    const file = '/lab/brand-fonts/OFL.txt';
    const reported = (await filesystem.getattr(file)).sizeBytes;
    const grown = `${(await readFile(path.join(root, 'brand-fonts/OFL.txt'), 'utf8'))}\nAn added clause.\n`;
    await writeFile(path.join(root, 'brand-fonts/OFL.txt'), grown);
    await expect.poll(async () => (await catalog.lookup('brand-fonts/OFL.txt')).sizeBytes, { timeout: 5_000 }).toBe(Buffer.byteLength(grown));
    // The kernel still holds the old, smaller size: the new bytes would be cut at it.
    nowMs += 10_000;
    await expect(filesystem.open(file)).rejects.toThrow(StaleVersionError);
    expect(logs.join('\n')).toMatch(new RegExp(`changed on the server \\(now ${Buffer.byteLength(grown)} bytes\\) after the kernel was told ${reported}; served whole after the kernel's attribute cache expires \\(within 20 s\\)`));
    // Past the attribute timeout the kernel asks again before reading: the new version, whole.
    nowMs += 21_000;
    expect((await readWhole(filesystem, file)).toString()).toBe(grown);
  });

  it('skills.json is at most a second old at any open yet always exactly the size getattr reported', async () => {
    const { catalog, stopServer } = await harness();
    let nowMs = 1_000_000;
    const errors: string[] = [];
    const status = () => ({ pid: 1, startedAt: 'now', cache: { usedBytes: 0, limitBytes: 1 }, recentErrors: [...errors] });
    const filesystem = new SkillsFilesystem([catalog], { now: () => nowMs, mountStatus: status, metadataTtlMs: 30_000 });
    const openWhole = async (sizeBytes: number) => {
      const handle = await filesystem.open('/skills.json');
      try {
        return Buffer.from(filesystem.read(handle, 0, sizeBytes + 100_000));
      } finally {
        filesystem.release(handle);
      }
    };
    const { sizeBytes } = await filesystem.getattr('/skills.json');
    expect(sizeBytes % (16 * 1024)).toBe(0);
    // The server's state changes while the kernel still holds the old size: fresh bytes, same size.
    await stopServer();
    nowMs += 10_000;
    const fresh = await openWhole(sizeBytes);
    expect(fresh.length).toBe(sizeBytes);
    expect(JSON.parse(fresh.toString()).servers[0].state).toBe('failed');
    // Within the rendering's second, the same rendering is served: nothing is rendered per open.
    errors.push(...Array.from({ length: 20 }, (_, i) => `error ${i} ${'x'.repeat(1_000)}`));
    expect(JSON.parse((await openWhole(sizeBytes)).toString()).mount.recentErrors).toEqual([]);
    // A rendering that outgrew the size the kernel holds waits for the next getattr.
    nowMs += 1_001;
    const pinned = await openWhole(sizeBytes);
    expect(pinned.length).toBe(sizeBytes);
    expect(JSON.parse(pinned.toString()).mount.recentErrors).toEqual([]);
    const grown = await filesystem.getattr('/skills.json');
    expect(grown.sizeBytes).toBeGreaterThan(sizeBytes);
    const whole = await openWhole(grown.sizeBytes);
    expect(whole.length).toBe(grown.sizeBytes);
    expect(JSON.parse(whole.toString()).mount.recentErrors).toHaveLength(20);
  });

  it('a server that goes away: uncached reads fail fast, verified cached content is still served', async () => {
    const { filesystem, stopServer } = await harness();
    const cached = await readWhole(filesystem, '/lab/commit-message/SKILL.md');
    await stopServer();
    await expect(readWhole(filesystem, '/lab/brand-fonts/SKILL.md')).rejects.toBeInstanceOf(UnavailableError);
    expect((await readWhole(filesystem, '/lab/commit-message/SKILL.md')).equals(cached)).toBe(true);
    const status = JSON.parse((await readWhole(filesystem, '/skills.json')).toString());
    expect(status.servers[0].state).toBe('failed');
  });

  it('directories carry user.mcp.server and user.mcp.uri (their URI, not their path); the root and skills.json carry none', async () => {
    const { filesystem } = await harness();
    const xattrsOf = async (path: string) => {
      const values: Record<string, string> = {};
      for (const name of await filesystem.listxattr(path)) values[name] = (await filesystem.getxattr(path, name)).toString();
      return values;
    };
    // A skill directory, a directory inside a skill, a nested skill's directory, and one whose name is percent-encoded in its URI.
    expect(await xattrsOf('/lab/pdf-forms')).toEqual({ 'user.mcp.server': 'lab', 'user.mcp.uri': 'skill://pdf-forms' });
    expect(await xattrsOf('/lab/pdf-forms/references')).toEqual({ 'user.mcp.server': 'lab', 'user.mcp.uri': 'skill://pdf-forms/references' });
    expect(await xattrsOf('/lab/data-pipeline/stages/ingest')).toEqual({ 'user.mcp.server': 'lab', 'user.mcp.uri': 'skill://data-pipeline/stages/ingest' });
    expect(await xattrsOf('/lab/localization/r\u00e9f\u00e9rences')).toEqual({ 'user.mcp.server': 'lab', 'user.mcp.uri': 'skill://localization/r%C3%A9f%C3%A9rences' });
    // Only files say whether they were verified.
    await expect(filesystem.getxattr('/lab/pdf-forms', 'user.mcp.verified')).rejects.toBeInstanceOf(NoAttributeError);
    await expect(filesystem.getxattr('/lab/pdf-forms', 'user.mcp.digest')).rejects.toBeInstanceOf(NoAttributeError);
    for (const path of ['/', '/skills.json', '/status.json']) {
      expect(await filesystem.listxattr(path), path).toEqual([]);
      await expect(filesystem.getxattr(path, 'user.mcp.server'), path).rejects.toBeInstanceOf(NoAttributeError);
    }
    // The label directory names its server. (docs/layout.md promises every directory a user.mcp.uri too; the label directory has none.)
    expect((await filesystem.getxattr('/lab', 'user.mcp.server')).toString()).toBe('lab');
  });
});
