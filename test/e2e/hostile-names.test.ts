// URIs and names built to escape or confuse, through a real mount: none of them ever
// becomes a path; each is logged with the server and the URI; the server's good skills
// and a good server next to it are unaffected.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../support/digest.mjs';
import { run } from '../support/fuse-harness.js';
import { hostileEntry, hostileSkill } from '../support/hostile-scenario.js';
import { CORPUS_DIR, makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

const LONG = 'n'.repeat(256);

/** A listing entry for `uri` whose manifest names `files` (its own SKILL.md first). */
function entry(uri: string, name = 'evil', files: string[] = [uri]) {
  return { uri, frontmatter: { name, description: 'hostile' }, resources: files.map((file) => ({ uri: file, digest: sha256('x'), size: 1 })) };
}

const BAD_SKILL_URIS: Array<[string, string, RegExp]> = [
  ['..', 'skill://../evil/SKILL.md', /is a relative reference/],
  ['%2e%2e', 'skill://a/%2e%2e/evil/SKILL.md', /is a relative reference/],
  ['%2f', 'skill://a%2fevil/SKILL.md', /contains "\/"/],
  ['a backslash', 'skill://a\\evil/SKILL.md', /contains a backslash/],
  ['an absolute path', '/etc/evil/SKILL.md', /not an absolute scheme:\/\/path URI/],
  ['a file:/// URI', 'file:///etc/evil/SKILL.md', /empty/],
  ['NUL', 'skill://a%00/evil/SKILL.md', /contains NUL/],
  ['an empty segment', 'skill://a//evil/SKILL.md', /empty/],
  ['a name over 255 bytes', `skill://${LONG}/evil/SKILL.md`, /longer than 255 bytes/],
];

describe('hostile names and paths', () => {
  let mount: RunningMount;
  let root: string;
  const logLines = (pattern: RegExp) => mount.log().split('\n').filter((line) => pattern.test(line));

  beforeAll(async () => {
    const dir = await makeTestDir();
    const listingEntries = [
      ...BAD_SKILL_URIS.map(([, uri]) => entry(uri)),
      entry('skill://slashed/SKILL.md', 'a/slashed'),
      entry('skill://leaky/SKILL.md', 'leaky', ['skill://leaky/SKILL.md', 'skill://alpha/ref.md']),
      entry('skill://dotty/SKILL.md', 'dotty', ['skill://dotty/SKILL.md', 'skill://dotty/%2e%2e/alpha/ref.md']),
    ];
    const directories = {
      'skill://docs': [
        { uri: 'skill://docs/guide', name: 'guide', mimeType: 'inode/directory' },
        { uri: 'skill://docs/notes.md', name: 'notes.md', size: 6 },
        { uri: 'skill://docs/real.md', name: '../../etc/passwd', size: 5 },
        { uri: 'skill://alpha/ref.md', name: 'outside.md', size: 4 },
        { uri: 'skill://docs/notes.md', name: 'notes.md', size: 6 },
        { uri: 'skill://docs/guide', name: 'guide', mimeType: 'text/plain', size: 3 },
        { uri: 'skill://docs/%2e%2e', name: '..', mimeType: 'inode/directory' },
        { uri: 'skill://docs/a%2fb', name: 'a/b', size: 1 },
        { uri: 'skill://docs/nul%00', name: 'nul', size: 1 },
        { uri: `skill://docs/${LONG}`, name: LONG, size: 1 },
        { uri: 'skill://docs/back\\slash', name: 'back\\slash', size: 1 },
      ],
    };
    mount = await startMount({
      dir,
      config: {
        names: await hostileEntry(dir, 'names', {
          listing: true,
          directoryRead: true,
          directories,
          listingEntries,
          skills: [hostileSkill('alpha', 'Good', { 'ref.md': { text: 'alpha\n' } }), hostileSkill('docs/guide', 'Good, nested')],
          extraFiles: { 'skill://docs/notes.md': { text: 'notes\n' }, 'skill://docs/real.md': { text: 'real\n' } },
        }),
        corpus: serveEntry(CORPUS_DIR),
      },
    });
    root = path.join(mount.mountpoint, 'names');
  }, 120_000);

  afterAll(async () => {
    await mount?.stop();
  });

  for (const [what, uri, reason] of BAD_SKILL_URIS) {
    it(`a skill URI with ${what} is never shown, and logged with server and URI`, () => {
      const lines = logLines(/^skills-mount: \[names\] skill uri /).filter((line) => line.includes(uri.replaceAll('\0', '')));
      expect(lines.length, `${uri}\n${mount.log()}`).toBeGreaterThan(0);
      expect(lines[0]).toMatch(reason);
    });
  }

  it('a frontmatter name with "/", and manifest files outside the skill, refuse the skill, logged', () => {
    expect(logLines(/\[names\] skill skill:\/\/slashed\/SKILL.md: frontmatter /).length).toBeGreaterThan(0);
    expect(logLines(/\[names\] manifest file skill:\/\/alpha\/ref.md is outside the skill directory/).length).toBeGreaterThan(0);
    expect(logLines(/\[names\] manifest file skill:\/\/dotty\/%2e%2e\/alpha\/ref.md: segment "%2e%2e": is a relative reference/).length).toBeGreaterThan(0);
  });

  it('the label directory shows only the good skills; every path stays under it', async () => {
    expect((await run('ls', [root])).stdout.split('\n').filter(Boolean).sort()).toEqual(['alpha', 'docs']);
    const found = (await run('find', [root])).stdout.split('\n').filter(Boolean);
    for (const entry of found) {
      expect(path.resolve(entry).startsWith(`${root}`)).toBe(true);
      expect(entry.split('/').some((segment) => segment === '..' || segment.length > 255)).toBe(false);
    }
    expect((await run('cat', [path.join(root, 'alpha/ref.md')])).stdout).toBe('alpha\n');
    expect((await run('cat', [path.join(root, 'leaky/SKILL.md')])).stderr).toMatch(/No such file/);
  });

  it('directory children outside the directory, repeated, both file and directory, or badly named are dropped and logged', async () => {
    const ls = await run('ls', ['-F', path.join(root, 'docs')]);
    expect(ls.stdout.split('\n').filter(Boolean).sort()).toEqual(['guide/', 'notes.md', 'real.md']);
    const about = (pattern: RegExp) => logLines(new RegExp(`\\[names\\] resources/directory/read skill://docs: ${pattern.source}`)).length;
    expect(about(/child skill:\/\/alpha\/ref.md is not inside the directory/)).toBeGreaterThan(0);
    expect(about(/child "notes.md" listed twice; the first is used/)).toBeGreaterThan(0);
    expect(about(/child "guide" listed twice; the first is used/)).toBeGreaterThan(0);
    expect(about(/child skill:\/\/docs\/%2e%2e: segment "%2e%2e": is a relative reference/)).toBeGreaterThan(0);
    expect(about(/child skill:\/\/docs\/a%2fb: segment "a%2fb": contains "\/"/)).toBeGreaterThan(0);
    expect(about(/child skill:\/\/docs\/nul%00: segment "nul%00": contains NUL/)).toBeGreaterThan(0);
    expect(about(/child skill:\/\/docs\/n+: segment "n+": longer than 255 bytes/)).toBeGreaterThan(0);
    expect(about(/child skill:\/\/docs\/back\\slash: segment "back\\slash": contains a backslash/)).toBeGreaterThan(0);
    // The name a child claims is ignored: its URI names it.
    expect((await run('cat', [path.join(root, 'docs/real.md')])).stdout).toBe('real\n');
    expect((await run('cat', [path.join(root, 'docs/notes.md')])).stdout).toBe('notes\n');
    expect((await run('cat', [path.join(root, 'docs/guide/SKILL.md')])).code).toBe(0);
  });

  it('afterwards: the daemon is alive and the good server diffs clean', async () => {
    expect(mount.child.exitCode).toBeNull();
    const diff = await run('diff', ['-r', CORPUS_DIR, path.join(mount.mountpoint, 'corpus')], 60_000);
    expect(diff.stdout + diff.stderr).toBe('');
    expect(diff.code).toBe(0);
  });
});
