// What a client sees when it asks for something the server must not or cannot serve:
// unknown and traversal URIs, withheld methods, bad cursors, and pagination.
import { rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectInMemory,
  errorOf,
  GetResult,
  ListResult,
  DirResult,
  listAllSkills,
  readBytes,
  readDirectoryAll,
  type Connected,
} from '../support/server-harness.js';
import { skillMd, writeSkill, writeTree } from '../support/skill-builder.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

let root: string;
let outside: string;

beforeAll(async () => {
  outside = await makeTempDir('skills-serve-outside-');
  await writeFile(join(outside, 'secret.txt'), 'TOP SECRET\n');
  root = await makeTempDir('skills-serve-errors-');
  await writeTree(root, {
    'x/SKILL.md': skillMd('x'),
    'x/notes.md': '# notes\n',
    'a/SKILL.md': skillMd('a'),
    'a/b': 'a file literally named b\n',
    'acme/billing/refunds/SKILL.md': skillMd('refunds'),
    'acme/billing/refunds/examples/email.md': 'Dear customer\n',
    'acme/README.md': 'not inside any skill\n',
    'loose.md': 'not inside any skill\n',
    secret: 'root-level secret\n',
  });
  await symlink(join(outside, 'secret.txt'), join(root, 'x', 'leak.txt'));
  await symlink(join(root, 'x', 'notes.md'), join(root, 'x', 'notes-link.md'));
  await symlink(outside, join(root, 'x', 'outside-dir'));
});
afterAll(async () => {
  await removeDir(root);
  await removeDir(outside);
});

function whatwg(uri: string): string {
  try {
    return new URL(uri).href;
  } catch {
    return uri;
  }
}

describe('resources/read refusals', () => {
  let connected: Connected;
  beforeAll(async () => {
    connected = await connectInMemory({ root, watch: false });
  });
  afterAll(() => connected.close());

  it.each([
    'skill://x/missing.md',
    'skill://../etc/passwd',
    'skill://x/../../secret',
    'skill://x/%2e%2e/%2e%2e/secret',
    'skill://x/%2E%2E/a/SKILL.md',
    'skill://a%2fb',
    'skill://a%2Fb',
    'skill://a\\b',
    'skill://x\\..\\secret',
    'skill://x/notes.md%00',
    'skill:///etc/passwd',
    'skill://x//notes.md',
    'file:///etc/passwd',
    '/etc/passwd',
    'skill://loose.md',
    'skill://acme/README.md',
    'skill://secret',
    'skill://x',
    'skill://x/leak.txt',
    'skill://x/outside-dir/secret.txt',
  ])('refuses %j with -32602 naming the URI', async (uri) => {
    const error = await errorOf(connected.client.readResource({ uri }));
    expect(error.code).toBe(-32602);
    // The SDK parses the URI as a WHATWG URL first, which resolves dot segments.
    expect([uri, whatwg(uri)]).toContain((error.data as { uri?: string }).uri);
  });

  it.each(['skill://x/./notes.md', 'skill://x/notes.md\u0000', 'skill://x/a/../notes.md'])(
    'refuses %j: a URI is looked up as written (dot segments, NUL) in the scanned tree, never normalized into another',
    async (uri) => {
      const error = await errorOf(connected.client.readResource({ uri }));
      expect(error.code).toBe(-32602);
      expect((error.data as { uri?: string }).uri).toBe(uri);
    },
  );

  it('serves a file named b when asked with a plain slash, not with an encoded one', async () => {
    expect((await readBytes(connected.client, 'skill://a/b')).bytes.toString()).toBe('a file literally named b\n');
  });

  it('follows a symlink that stays inside the directory', async () => {
    expect((await readBytes(connected.client, 'skill://x/notes-link.md')).bytes.toString()).toBe('# notes\n');
  });

  it('leaves links leading outside out of manifests and directory listings, with a warning', async () => {
    const { skill } = await connected.client.request({ method: 'skills/get', params: { uri: 'skill://x/SKILL.md' } }, GetResult);
    const uris = (skill as { resources: Array<{ uri: string }> }).resources.map((r) => r.uri);
    expect(uris).toContain('skill://x/notes-link.md');
    expect(uris).not.toContain('skill://x/leak.txt');
    const names = (await readDirectoryAll(connected.client, 'skill://x')).map((c) => c.name);
    expect(names).not.toContain('leak.txt');
    expect(names).not.toContain('outside-dir');
    expect(connected.logs.some((l) => l.includes('x/leak.txt') && l.includes('outside'))).toBe(true);
  });

  it('refuses skills/get for files, directories and unknown skills with -32602', async () => {
    for (const uri of ['skill://x/notes.md', 'skill://x', 'skill://nope/SKILL.md', 'skill://../x/SKILL.md']) {
      const error = await errorOf(connected.client.request({ method: 'skills/get', params: { uri } }, GetResult));
      expect(error.code, uri).toBe(-32602);
      expect(error.message, uri).toContain(uri);
    }
  });

  it('refuses resources/directory/read for a file or an unknown directory', async () => {
    for (const uri of ['skill://x/notes.md', 'skill://nope', 'skill://acme/support', 'skill://x/%2e%2e']) {
      const error = await errorOf(connected.client.request({ method: 'resources/directory/read', params: { uri } }, DirResult));
      expect(error.code, uri).toBe(-32602);
      expect(error.message, uri).toContain(uri);
    }
  });

  it('lists prefix directories down to the skill they lead to, and nothing else in them', async () => {
    expect(await readDirectoryAll(connected.client, 'skill://acme')).toEqual([
      { uri: 'skill://acme/billing', name: 'billing', mimeType: 'inode/directory' },
    ]);
    expect(await readDirectoryAll(connected.client, 'skill://acme/billing')).toEqual([
      { uri: 'skill://acme/billing/refunds', name: 'refunds', mimeType: 'inode/directory' },
    ]);
    const refunds = await readDirectoryAll(connected.client, 'skill://acme/billing/refunds');
    expect(refunds.map((c) => [c.name, c.mimeType])).toEqual([
      ['SKILL.md', 'text/markdown'],
      ['examples', 'inode/directory'],
    ]);
  });

  it('lists the top level at skill:// (beyond the spec): the directories leading to skills', async () => {
    expect((await readDirectoryAll(connected.client, 'skill://')).map((c) => [c.name, c.mimeType])).toEqual([
      ['a', 'inode/directory'],
      ['acme', 'inode/directory'],
      ['x', 'inode/directory'],
    ]);
  });

  it('refuses an invalid or foreign cursor with -32602', async () => {
    for (const cursor of ['garbage', Buffer.from('["skills/list",-1]').toString('base64url'), Buffer.from('["resources/list",1]').toString('base64url')]) {
      const error = await errorOf(connected.client.request({ method: 'skills/list', params: { cursor } }, ListResult));
      expect(error.code, cursor).toBe(-32602);
    }
  });
});

describe('files swapped after the scan', () => {
  it('refuses to read a served file that became a link to outside, before any rescan', async () => {
    const swapRoot = await makeTempDir('skills-serve-swap-');
    await writeSkill(swapRoot, 's', { files: { 'data.txt': 'inside\n', 'sub/f.txt': 'f\n' } });
    const connected = await connectInMemory({ root: swapRoot, watch: false });
    try {
      expect((await readBytes(connected.client, 'skill://s/data.txt')).bytes.toString()).toBe('inside\n');
      await rm(join(swapRoot, 's/data.txt'));
      await symlink(join(outside, 'secret.txt'), join(swapRoot, 's/data.txt'));
      await rm(join(swapRoot, 's/sub'), { recursive: true });
      await symlink(outside, join(swapRoot, 's/sub'));
      await writeFile(join(outside, 'f.txt'), 'outside f\n');
      for (const uri of ['skill://s/data.txt', 'skill://s/sub/f.txt']) {
        const error = await errorOf(connected.client.readResource({ uri }));
        expect(error.code, uri).toBe(-32602);
        expect(error.data, uri).toMatchObject({ uri });
      }
    } finally {
      await connected.close();
      await removeDir(swapRoot);
    }
  });
});

describe('pagination', () => {
  let pagingRoot: string;
  const names = Array.from({ length: 23 }, (_, i) => `skill-${String(i).padStart(2, '0')}`);

  beforeAll(async () => {
    pagingRoot = await makeTempDir('skills-serve-paging-');
    const files: Record<string, string> = {};
    for (const name of names) files[`${name}/SKILL.md`] = skillMd(name);
    for (let i = 0; i < 17; i++) files[`skill-00/templates/t${i}.md`] = `template ${i}\n`;
    await writeTree(pagingRoot, files);
  });
  afterAll(() => removeDir(pagingRoot));

  it.each([1, 7])('with page size %i, pages of every list cover everything exactly once', async (pageSize) => {
    const connected = await connectInMemory({ root: pagingRoot, watch: false, pageSize });
    try {
      const { skills, pages } = await listAllSkills(connected.client);
      expect(pages).toBe(Math.ceil(names.length / pageSize));
      expect(skills.map((s) => s.uri)).toEqual(names.map((n) => `skill://${n}/SKILL.md`));
      expect(skills[0]!.resources).toHaveLength(18); // an entry is never split across pages

      const children = await readDirectoryAll(connected.client, 'skill://skill-00/templates');
      expect(children.map((c) => c.name).sort()).toEqual(Array.from({ length: 17 }, (_, i) => `t${i}.md`).sort());
      expect(new Set(children.map((c) => c.uri)).size).toBe(17);

      // resources/list is the SDK's, unpaged: one SKILL.md per skill plus the index.
      const listed = await connected.client.listResources();
      expect(listed.nextCursor).toBeUndefined();
      expect(listed.resources.map((r) => r.uri).sort()).toEqual(['skill://index.json', ...names.map((n) => `skill://${n}/SKILL.md`)].sort());
    } finally {
      await connected.close();
    }
  });
});

describe('--protocol and --no-directory-read', () => {
  it('index, as the seed generation: skill://index.json, the extension declared with directoryRead, but no skills/* methods (-32601)', async () => {
    const connected = await connectInMemory({ root, watch: false, protocol: 'index' });
    try {
      const list = await errorOf(connected.client.request({ method: 'skills/list', params: {} }, ListResult));
      expect(list.code).toBe(-32601);
      const get = await errorOf(connected.client.request({ method: 'skills/get', params: { uri: 'skill://x/SKILL.md' } }, GetResult));
      expect(get.code).toBe(-32601);
      const index = JSON.parse((await readBytes(connected.client, 'skill://index.json')).bytes.toString()) as { skills: Array<{ url: string }> };
      expect(index.skills.map((s) => s.url)).toEqual(['skill://a/SKILL.md', 'skill://acme/billing/refunds/SKILL.md', 'skill://x/SKILL.md']);
      const capabilities = connected.client.getServerCapabilities() as { extensions?: Record<string, unknown>; resources?: unknown };
      expect(capabilities.extensions?.['io.modelcontextprotocol/skills']).toEqual({ directoryRead: true });
      expect(capabilities.resources).toEqual({ subscribe: true, listChanged: true });
      const dir = await readDirectoryAll(connected.client, 'skill://x');
      expect(dir.map((child) => child.name)).toContain('SKILL.md');
    } finally {
      await connected.close();
    }
  });

  it('listing: skills/list works, skill://index.json is not a resource (-32602)', async () => {
    const connected = await connectInMemory({ root, watch: false, protocol: 'listing' });
    try {
      expect((await listAllSkills(connected.client)).skills).toHaveLength(3);
      const error = await errorOf(connected.client.readResource({ uri: 'skill://index.json' }));
      expect(error.code).toBe(-32602);
      const { resources } = await connected.client.listResources();
      expect(resources.map((r) => r.uri)).not.toContain('skill://index.json');
    } finally {
      await connected.close();
    }
  });

  it('no directory read: the method answers -32601 and the extension object is empty', async () => {
    const connected = await connectInMemory({ root, watch: false, directoryRead: false });
    try {
      const error = await errorOf(connected.client.request({ method: 'resources/directory/read', params: { uri: 'skill://x' } }, DirResult));
      expect(error.code).toBe(-32601);
      const capabilities = connected.client.getServerCapabilities() as { extensions?: Record<string, unknown> };
      expect(capabilities.extensions?.['io.modelcontextprotocol/skills']).toEqual({});
    } finally {
      await connected.close();
    }
  });
});
