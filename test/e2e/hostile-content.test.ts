// A server that lies about content, through a real mount: every lie costs only the
// affected path its errno and one log line naming server, URI and what was wrong; the
// daemon, the server's other skills, a good server next to it and content already
// verified keep working.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../support/digest.mjs';
import { run } from '../support/fuse-harness.js';
import { hostileEntry, hostileSkill, requestCount, type HostileSkill } from '../support/hostile-scenario.js';
import { CORPUS_DIR, makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { requireFuse } from '../support/require-fuse.js';
import { skillMd } from '../support/skill-builder.js';

requireFuse();

const MIB = 1024 * 1024;
const BINARY = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x0a]);

describe('hostile content', () => {
  let mount: RunningMount;
  let root: string;
  let goodRef: string;

  beforeAll(async () => {
    const dir = await makeTestDir();
    const tooMany: Record<string, { text: string }> = {};
    for (let i = 0; i < 512; i++) tooMany[`f${i}.txt`] = { text: `${i}\n` };
    const fmMismatch = hostileSkill('fm-mismatch', 'Listed description');
    fmMismatch.files['skill://fm-mismatch/SKILL.md'] = { text: skillMd('fm-mismatch', 'Served description') };
    const skills: HostileSkill[] = [
      hostileSkill('good', 'Fine', { 'ref.md': { text: 'reference\n' } }),
      hostileSkill('wrong-digest', 'Digest differs', { 'ref.md': { text: 'x\n', listedDigest: sha256('y\n') } }),
      hostileSkill('tampered', 'Bytes differ', { 'ref.md': { text: 'honest\n', fault: 'tampered' } }),
      fmMismatch,
      hostileSkill('short', 'Fewer bytes than listed', { 'ref.md': { text: 'twelve bytes', fault: 'short' } }),
      hostileSkill('long', 'More bytes than listed', { 'ref.md': { text: 'twelve bytes', fault: 'long' } }),
      hostileSkill('bad-base64', 'Blob is not base64', { 'data.bin': { blob: BINARY.toString('base64'), fault: 'invalid-base64' } }),
      hostileSkill('text-binary', 'Text for a binary file', { 'data.bin': { blob: BINARY.toString('base64'), fault: 'text-for-binary' } }),
      hostileSkill('several', 'Two contents', { 'ref.md': { text: 'one\n', fault: 'several-contents' } }),
      hostileSkill('none', 'No content', { 'ref.md': { text: 'one\n', fault: 'no-contents' } }),
      hostileSkill('other-uri', 'Content for another file', { 'ref.md': { text: 'mine\n', fault: 'other-uri' } }),
      hostileSkill('too-many', 'Over the file limit', tooMany),
      hostileSkill('too-big', 'Over the size limit', { 'big.bin': { text: 'x', listedSize: 16 * MIB } }),
      hostileSkill('dyn-big', 'One file over 16 MiB', { 'big.txt': { text: 'x', repeat: 17 * MIB } }, { dynamic: true }),
      hostileSkill('dyn-total', 'Two files of 9 MiB', { 'a.txt': { text: 'a', repeat: 9 * MIB }, 'b.txt': { text: 'b', repeat: 9 * MIB } }, { dynamic: true }),
    ];
    const indexed = hostileSkill('indexed', 'Index generation', {
      'small.md': { text: 'small\n' },
      'a.txt': { text: 'a', repeat: 9 * MIB },
      'b.txt': { text: 'b', repeat: 9 * MIB },
    });
    mount = await startMount({
      dir,
      config: {
        content: await hostileEntry(dir, 'content', { listing: true, skills }),
        indexed: await hostileEntry(dir, 'indexed', { index: true, skills: [indexed] }),
        corpus: serveEntry(CORPUS_DIR),
      },
      readyTimeoutMs: 60_000,
    });
    root = path.join(mount.mountpoint, 'content');
    goodRef = path.join(root, 'good/ref.md');
    // Verified and cached before anything goes wrong.
    const first = await run('cat', [goodRef]);
    expect(first.stdout, `${first.stderr}\n${mount.log()}`).toBe('reference\n');
  }, 120_000);

  afterAll(async () => {
    await mount?.stop();
  });

  const eio = /Input\/output error/;
  const cases: Array<[string, string, RegExp]> = [
    ['wrong digest', 'wrong-digest/ref.md', /digest mismatch: expected sha256:\w+, got sha256:\w+/],
    ['tampered bytes', 'tampered/ref.md', /digest mismatch: expected sha256:\w+, got sha256:\w+/],
    ['frontmatter differing from the listing', 'fm-mismatch/SKILL.md', /frontmatter field "description" mismatch: expected "Listed description", got "Served description"/],
    ['bytes shorter than the manifest size', 'short/ref.md', /size mismatch: expected 12 bytes, got 11 bytes/],
    ['bytes longer than the manifest size', 'long/ref.md', /size mismatch: expected 12 bytes, got 13 bytes/],
    ['invalid base64', 'bad-base64/data.bin', /blob is not valid base64/],
    ['text for a binary file', 'text-binary/data.bin', /(size|digest) mismatch/],
    ['several contents', 'several/ref.md', /2 contents for the same uri/],
    ['no contents', 'none/ref.md', /no contents/],
    ['a content whose uri is another file', 'other-uri/ref.md', /1 contents, none for this uri/],
  ];

  for (const [what, file, reason] of cases) {
    it(`${what}: EIO for ${file} only, one log line naming server, URI and the fault`, async () => {
      const result = await run('cat', [path.join(root, file)]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(eio);
      const uri = `skill://${file}`;
      const lines = mount.log().split('\n').filter((line) => line.includes(`content: ${uri}`) || line.includes(`content: resources/read ${uri}`));
      expect(lines.some((line) => reason.test(line)), lines.join('\n')).toBe(true);
      // The same skill's SKILL.md (when it is not the faulty file) and other skills are unaffected.
      if (!file.endsWith('SKILL.md')) expect((await run('cat', [path.join(root, path.dirname(file), 'SKILL.md')])).code).toBe(0);
      expect((await run('cat', [goodRef])).stdout).toBe('reference\n');
    });
  }

  it('ls -l still lists a file with a bad content, with its listed size (no content read)', async () => {
    const stat = await run('stat', ['-c', '%s', path.join(root, 'short/ref.md')]);
    expect(stat.stdout.trim()).toBe('12');
  });

  it('skills over the per-skill limits (513 files; over 16 MiB listed) are declined with a reason', async () => {
    const ls = (await run('ls', [root])).stdout.split('\n');
    expect(ls).not.toContain('too-many');
    expect(ls).not.toContain('too-big');
    expect((await run('cat', [path.join(root, 'too-many/f1.txt')])).stderr).toMatch(/No such file/);
    const skillsJson = JSON.parse((await run('cat', [path.join(mount.mountpoint, 'skills.json')])).stdout);
    const content = skillsJson.servers.find((server: { label: string }) => server.label === 'content');
    const declined = (name: string) => content.skills.find((entry: { name: string }) => entry.name === name).declined;
    expect(declined('too-many')).toMatch(/513 files/);
    expect(declined('too-big')).toMatch(/over the per-skill limits/);
  });

  it('a dynamic skill is held to 16 MiB over what is actually retrieved', async () => {
    const first = await run('wc', ['-c', path.join(root, 'dyn-total/a.txt')], 30_000);
    expect(first.stdout.trim()).toMatch(new RegExp(`^${9 * MIB} `));
    const second = await run('cat', [path.join(root, 'dyn-total/b.txt')], 30_000);
    expect(second.stderr).toMatch(/File too large/);
    expect(mount.log()).toMatch(/\[content\] content: skill:\/\/dyn-total\/b.txt: skill skill:\/\/dyn-total\/SKILL.md would reach \d+ retrieved bytes, over the per-skill limit/);
    // What was retrieved within the budget is still served.
    expect((await run('wc', ['-c', path.join(root, 'dyn-total/a.txt')], 30_000)).stdout.trim()).toMatch(new RegExp(`^${9 * MIB} `));
  });

  it('an index-generation skill is held to 16 MiB over what is actually retrieved', async () => {
    const indexedRoot = path.join(mount.mountpoint, 'indexed', 'indexed');
    expect((await run('wc', ['-c', path.join(indexedRoot, 'a.txt')], 30_000)).stdout.trim()).toMatch(new RegExp(`^${9 * MIB} `));
    expect((await run('cat', [path.join(indexedRoot, 'b.txt')], 30_000)).stderr).toMatch(/File too large/);
    expect((await run('cat', [path.join(indexedRoot, 'small.md')])).stdout).toBe('small\n');
    expect((await run('cat', [path.join(indexedRoot, 'SKILL.md')])).code).toBe(0);
  });

  it('a single file over 16 MiB that no manifest describes is refused with EFBIG before it is decoded', async () => {
    const result = await run('cat', [path.join(root, 'dyn-big/big.txt')], 30_000);
    expect(result.stderr).toMatch(/File too large/);
    expect(mount.log()).toMatch(/\[content\] content: resources\/read skill:\/\/dyn-big\/big.txt: \d+ bytes, over the 16777216-byte limit for one file/);
    expect((await run('cat', [path.join(root, 'dyn-big/SKILL.md')])).code).toBe(0);
    expect((await run('cat', [goodRef])).stdout).toBe('reference\n');
  });

  it('afterwards: the daemon is alive, verified content is served from the cache, the good server diffs clean', async () => {
    expect(mount.child.exitCode).toBeNull();
    const readsBefore = requestCount(mount.log(), 'content', 'resources/read', 'skill://good/ref.md');
    expect((await run('cat', [goodRef])).stdout).toBe('reference\n');
    expect(requestCount(mount.log(), 'content', 'resources/read', 'skill://good/ref.md')).toBe(readsBefore);
    const diff = await run('diff', ['-r', CORPUS_DIR, path.join(mount.mountpoint, 'corpus')], 60_000);
    expect(diff.stdout + diff.stderr).toBe('');
    expect(diff.code).toBe(0);
  });
});
