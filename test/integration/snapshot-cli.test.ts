// `skills-mount snapshot` and `verify` as a user runs them (the built CLI, no kernel mount):
// the generated corpus over stdio and over Streamable HTTP equals the corpus and the view of an
// in-process filesystem core over the same server; exit codes 0/1/2; a refused destination; a
// SIGKILL in the middle of a snapshot leaves the published one verifying, and the next run
// succeeds and removes what the killed one left.
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { spawn } from 'node:child_process';
import { chmod, cp, mkdir, readFile, readdir, readlink, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { sha256Digest } from '../../src/format/digest.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { SkillsFilesystem } from '../../src/fs/skills-filesystem.js';
import { McpSkillSource } from '../../src/mcp/mcp-skill-source.js';
import { createSkillsServer } from '../../src/server/index.js';
import { nodeSnapshotFs } from '../../src/snapshot/snapshot-fs.js';
import { snapshotsDirOf } from '../../src/snapshot/snapshot-store.js';
import { exitOf } from '../support/children.js';
import { startHttpServe } from '../support/http-server.js';
import { CORPUS_DIR, SKILLS_MOUNT, SKILLS_SERVE } from '../support/mount-harness.js';
import { EXAMPLES } from '../support/server-harness.js';
import { run } from '../support/fuse-harness.js';
import { asOtherUser, canActAsOtherUser, OTHER_UID } from '../support/other-user.js';
import { waitFor } from '../support/poll.js';
import { makeTempDir } from '../support/temp-dir.js';

const made: string[] = [];
afterAll(async () => {
  for (const dir of made.splice(0)) await nodeSnapshotFs.removeTree(dir);
});

async function tempDir(): Promise<string> {
  const dir = await makeTempDir('skills-mount-snapshot-');
  made.push(dir);
  return dir;
}

/** The built CLI with its own cache and config homes; resolves exit code and output. */
function cli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 120_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function serverFlag(label: string, dir: string, ...flags: string[]): string {
  return `${label}=${process.execPath} ${SKILLS_SERVE} ${dir} ${flags.join(' ')}`.trim();
}

/** Every file below `dir` (relative), the snapshot's manifest aside. */
async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (relative === '.snapshot.json') continue;
    if (entry.isDirectory()) files.push(...(await filesUnder(dir, relative)));
    else files.push(relative);
  }
  return files.sort();
}

/** The in-process core over the same corpus (in-memory transport): what the mount would show. */
async function coreOverCorpus(): Promise<{ files: Map<string, Buffer>; skillsJson: { servers: Array<{ skills: unknown[] }> }; close(): Promise<void> }> {
  const served = await createSkillsServer({ root: CORPUS_DIR, debounceMs: 30, log: () => undefined });
  const source = new McpSkillSource('corpus', { kind: 'stdio', command: 'unused', args: [], env: {}, cwd: undefined }, {
    timeoutMs: 10_000,
    log: () => {},
    createTransport: () => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      void served.server.connect(serverSide);
      return clientSide;
    },
    minBackoffMs: 60_000,
  });
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => {}, cache: new ContentCache(256 * 1024 * 1024), hideDynamic: true });
  await source.start();
  await catalog.refresh();
  const core = new SkillsFilesystem([catalog]);
  const files = new Map<string, Buffer>();
  const walk = async (dir: string): Promise<void> => {
    for (const name of await core.readdir(`/${dir}`)) {
      const relative = dir === '' ? name : `${dir}/${name}`;
      if (relative === 'status.json') continue;
      if ((await core.getattr(`/${relative}`)).kind === 'directory') await walk(relative);
      else {
        const handle = await core.open(`/${relative}`);
        files.set(relative, Buffer.from(core.read(handle, 0, 64 * 1024 * 1024)));
        core.release(handle);
      }
    }
  };
  await walk('');
  const skillsJson = JSON.parse(files.get('skills.json')!.toString('utf8'));
  return { files, skillsJson, close: async () => (await source.close(), await served.close()) };
}

describe('a snapshot of the generated corpus', () => {
  let expected: Awaited<ReturnType<typeof coreOverCorpus>>;
  beforeAll(async () => {
    expected = await coreOverCorpus();
  });
  afterAll(async () => expected?.close());

  async function checkAgainstCore(dest: string): Promise<void> {
    const written = await filesUnder(dest);
    expect(written).toEqual([...expected.files.keys()].sort());
    for (const file of written) {
      if (file === 'skills.json') continue;
      expect((await readFile(path.join(dest, file))).equals(expected.files.get(file)!), file).toBe(true);
    }
    // skills.json: the same skills, states and digests as the core's (server fields are per connection).
    const snapshotJson = JSON.parse(await readFile(path.join(dest, 'skills.json'), 'utf8'));
    expect(snapshotJson.mount).toBeUndefined();
    expect(snapshotJson.servers[0].skills).toEqual(expected.skillsJson.servers[0]!.skills);
    expect(snapshotJson.servers[0]).toMatchObject({ label: 'corpus', state: 'connected', listingComplete: true });
    // And what diff -r says against the served folder itself.
    const diff = await run('diff', ['-r', CORPUS_DIR, path.join(dest, 'corpus')], 60_000);
    expect(diff.stdout + diff.stderr).toBe('');
    const verify = await cli(['verify', dest]);
    expect(verify.stdout).toMatch(/verified \(/);
    expect(verify.code).toBe(0);
  }

  it('over stdio: the corpus, byte for byte, as the in-process core shows it; one summary line; exit 0', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const result = await cli(['snapshot', dest, '--no-disk-cache', '--server', serverFlag('corpus', CORPUS_DIR)]);
    expect(result.stderr).toMatch(/snapshot \S+ published at .*: 1\/1 servers whole; \d+ skills, \d+ files, [\d.]+ MiB \(0 linked, \d+ fetched\)/);
    expect(result.code).toBe(0);
    await checkAgainstCore(dest);
  });

  it('verify --against-server (issue 27, item 5): the corpus as served now passes, every file compared by digest; in a copy whose file and manifest entry were changed together, that file is named with what the server lists', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const flag = serverFlag('corpus', CORPUS_DIR);
    expect((await cli(['snapshot', dest, '--no-disk-cache', '--server', flag])).code).toBe(0);
    const startedAtMs = Date.now();
    const clean = await cli(['verify', dest, '--against-server', '--server', flag]);
    const seconds = (Date.now() - startedAtMs) / 1000;
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    const [, files, digests] = /; against the servers \(corpus\): ([\d,]+) files compared \(([\d,]+) by digest\)$/m.exec(clean.stdout) ?? [];
    expect(Number(files?.replace(/,/g, '')), clean.stdout).toBe(expected.files.size - 1);
    expect(digests).toBe(files);
    expect(clean.stderr).toMatch(/verify: listed 1 server from the command line and compared [\d,]+ files in [\d.]+ s/);
    console.log(`verify --against-server of the generated corpus (${files} files) over stdio: ${seconds.toFixed(1)} s, the CLI's start included; ${/in ([\d.]+ s)/.exec(clean.stderr)?.[1]} listing and comparing`);

    const copy = path.join(await tempDir(), 'copy');
    expect((await run('cp', ['-r', await realpath(dest), copy])).code).toBe(0);
    const target = [...expected.files.keys()].find((file) => file.endsWith('/SKILL.md'))!;
    const attack = Buffer.from(`${(await readFile(path.join(copy, target), 'utf8'))}\nATTACKER BYTES\n`);
    await run('chmod', ['-R', 'u+w', copy]);
    await writeFile(path.join(copy, target), attack);
    const manifest = JSON.parse(await readFile(path.join(copy, '.snapshot.json'), 'utf8')) as { files: Array<{ path: string; sizeBytes: number; sha256: string }> };
    const entry = manifest.files.find((file) => file.path === target)!;
    const listed = entry.sha256;
    Object.assign(entry, { sizeBytes: attack.length, sha256: sha256Digest(attack) });
    await writeFile(path.join(copy, '.snapshot.json'), JSON.stringify(manifest));
    await run('chmod', ['-R', 'a-w', copy]);
    expect((await cli(['verify', copy])).code).toBe(0);
    const caught = await cli(['verify', copy, '--against-server', '--server', flag, '--json']);
    expect(caught.code).toBe(1);
    expect((JSON.parse(caught.stdout) as { problems: unknown[] }).problems).toEqual([
      { path: target, kind: 'differs', against: 'server', detail: `the server lists ${listed} (${expected.files.get(target)!.length} bytes) now; the manifest says ${sha256Digest(attack)} (${attack.length} bytes)` },
    ]);
  });

  it('verify --against-server with a server that cannot be reached: exit 1, naming it as not compared', async () => {
    const dest = path.join(await tempDir(), 'skills');
    expect((await cli(['snapshot', dest, '--no-disk-cache', '--server', serverFlag('demo', EXAMPLES)])).code).toBe(0);
    const result = await cli(['verify', dest, '--against-server', '--timeout', '3', '--server', 'demo=/nonexistent/command']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^unchecked demo: could not be listed whole now \(failed.*\): its files were not compared$/m);
  });

  it('over Streamable HTTP: the same; a second run changes nothing and fetches nothing', async () => {
    const server = await startHttpServe([CORPUS_DIR]);
    try {
      const dest = path.join(await tempDir(), 'skills');
      const first = await cli(['snapshot', dest, '--no-disk-cache', '--server', `corpus=${server.url}`]);
      expect(first.code, first.stderr).toBe(0);
      await checkAgainstCore(dest);
      const target = await readlink(dest);
      const second = await cli(['snapshot', dest, '--no-disk-cache', '--verbose', '--server', `corpus=${server.url}`]);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stderr).toMatch(/unchanged: 1\/1 servers whole; .*\(0 linked, 0 fetched\)/);
      expect(second.stderr).not.toMatch(/resources\/read/);
      expect(await readlink(dest)).toBe(target);
    } finally {
      await server.stop();
    }
  });
});

describe('exit codes and refusals', () => {
  it('2 on a usage error, with the usage', async () => {
    const result = await cli(['snapshot']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/snapshot takes a DEST/);
    expect((await cli(['verify'])).code).toBe(2);
  });

  it('2 for a destination inside a harness discovery folder, with the mount\'s message, and nothing written', async () => {
    const home = await tempDir();
    await mkdir(path.join(home, '.claude', 'skills'), { recursive: true });
    const dest = path.join(home, '.claude', 'skills', 'mcp');
    const result = await cli(['snapshot', dest, '--no-disk-cache', '--server', serverFlag('demo', EXAMPLES)], { HOME: home });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/is inside ~\/\.claude\/skills, a folder Claude Code, .* load skills from; MCP-served content must stay out of every discovery path/);
    expect(await readdir(path.join(home, '.claude', 'skills'))).toEqual([]);
  });

  it.runIf(canActAsOtherUser)("2 in the issue's shared folder (1777) where uid 65534 made .d3.snapshots (0777) first: nothing is built in it", async () => {
    const shared = path.join(await tempDir(), 'shared');
    await mkdir(shared);
    await chmod(path.dirname(shared), 0o711);
    await chmod(shared, 0o1777);
    const dest = path.join(shared, 'd3');
    await asOtherUser('mkdir', ['-m', '0777', snapshotsDirOf(dest)]);
    const result = await cli(['snapshot', dest, '--no-disk-cache', '--server', serverFlag('demo', EXAMPLES)]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`skills-mount: snapshot: refusing DEST ${dest}: the folder it is in, ${shared} (owner uid ${process.getuid!()}, mode 1777), can be written by other users;`);
    expect(await readdir(snapshotsDirOf(dest))).toEqual([]);
    expect(await readdir(shared)).toEqual([path.basename(snapshotsDirOf(dest))]);
  });

  it('1 when a server cannot be snapshotted, naming it; the reachable servers are published', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const result = await cli(['snapshot', dest, '--no-disk-cache', '--timeout', '3', '--server', serverFlag('good', EXAMPLES), '--server', 'gone=/nonexistent/command']);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toMatch(/\[gone\] not snapshotted whole: failed/);
    expect(result.stderr).toMatch(/1\/2 servers whole \(failed: gone\)/);
    expect((await filesUnder(dest)).filter((file) => file.startsWith('good/'))).toContain('good/hello-mount/SKILL.md');
  });

  it('verify exits 1 naming a byte changed in the published snapshot', async () => {
    const dest = path.join(await tempDir(), 'skills');
    expect((await cli(['snapshot', dest, '--no-disk-cache', '--server', serverFlag('demo', EXAMPLES)])).code).toBe(0);
    const file = path.join(dest, 'demo/hello-mount/SKILL.md');
    await run('chmod', ['u+w', path.dirname(file), file]);
    await writeFile(file, `${await readFile(file, 'utf8')}x`);
    const verify = await cli(['verify', dest]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(/^differs +demo\/hello-mount\/SKILL\.md: .*bytes, expected/m);
  });
});

describe('the manifest digest and verify --expect (issue 27, item 5)', () => {
  it('snapshot prints the sha256 of .snapshot.json alone on stdout, again when unchanged; verify --expect passes with it, and fails (exit 1) for a manifest rewritten to match changed bytes', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const first = await cli(['snapshot', dest, '--no-disk-cache', '--server', serverFlag('demo', EXAMPLES)]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^sha256:[0-9a-f]{64}\n$/);
    const digest = first.stdout.trim();
    expect(digest).toBe(sha256Digest(await readFile(path.join(dest, '.snapshot.json'))));
    const again = await cli(['snapshot', dest, '--no-disk-cache', '--server', serverFlag('demo', EXAMPLES)]);
    expect(again.stderr).toMatch(/unchanged/);
    expect(again.stdout).toBe(`${digest}\n`);
    const verified = await cli(['verify', dest, '--expect', digest]);
    expect(verified.stdout).toMatch(new RegExp(`: verified \\(.*\\); manifest ${digest}, as --expect says$`, 'm'));
    expect(verified.code).toBe(0);

    // The attack: the folder's file and its manifest entry changed together.
    const real = await realpath(dest);
    const file = path.join(real, 'demo/hello-mount/SKILL.md');
    const attack = Buffer.from(`${await readFile(file, 'utf8')}\nATTACKER BYTES\n`);
    await run('chmod', ['-R', 'u+w', real]);
    await writeFile(file, attack);
    const manifestPath = path.join(real, '.snapshot.json');
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { files: Array<{ path: string; sizeBytes: number; sha256: string }> };
    for (const entry of manifest.files) if (entry.path === 'demo/hello-mount/SKILL.md') Object.assign(entry, { sizeBytes: attack.length, sha256: sha256Digest(attack) });
    await writeFile(manifestPath, JSON.stringify(manifest));
    await run('chmod', ['-R', 'a-w', real]);
    const fooled = await cli(['verify', dest]);
    expect(fooled.code, fooled.stdout).toBe(0);
    const caught = await cli(['verify', dest, '--expect', digest]);
    expect(caught.code).toBe(1);
    expect(caught.stdout).toMatch(new RegExp(`^differs +\\.snapshot\\.json: hashes to sha256:[0-9a-f]{64}, not the ${digest} --expect says`, 'm'));
    expect((await cli(['verify', dest, '--expect', 'sha256:123'])).code).toBe(2);
  });
});

/**
 * The attack on a snapshot published before the refusals (its snapshots folder made 0777):
 * uid 65534 renames the published folder away and copies it back as its own; then one file gets
 * other bytes and the manifest its digest and size. Resolves the file changed and the attacker's bytes.
 */
async function swappedByOtherUser(dest: string): Promise<{ file: string; bytes: Buffer }> {
  const real = await realpath(dest);
  await chmod(path.dirname(path.dirname(real)), 0o711);
  await chmod(path.dirname(real), 0o777);
  const id = path.basename(real);
  await asOtherUser('sh', ['-c', `cd '${path.dirname(real)}' && mv '${id}' '${id}.old' && cp -r '${id}.old' '${id}' && chmod -R u+w '${id}'`]);
  const file = 'demo/hello-mount/SKILL.md';
  const bytes = Buffer.from(`${await readFile(path.join(real, file), 'utf8')}\nATTACKER BYTES\n`);
  await writeFile(path.join(real, file), bytes);
  const manifestPath = path.join(real, '.snapshot.json');
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { files: Array<{ path: string; sizeBytes: number; sha256: string }> };
  for (const entry of manifest.files) if (entry.path === file) Object.assign(entry, { sizeBytes: bytes.length, sha256: sha256Digest(bytes) });
  await writeFile(manifestPath, JSON.stringify(manifest));
  await run('chmod', ['-R', 'a-w', real]);
  return { file, bytes };
}

describe('verify of a snapshot another user swapped (issue 27, item 5)', () => {
  it.runIf(canActAsOtherUser)('the re-hash agrees (exit 0), and a warning names the open snapshots folder and the folder uid 65534 owns (text and --json)', async () => {
    const dest = path.join(await tempDir(), 'd3');
    expect((await cli(['snapshot', dest, '--no-disk-cache', '--server', serverFlag('demo', EXAMPLES)])).code).toBe(0);
    const { file, bytes } = await swappedByOtherUser(dest);
    expect((await readFile(path.join(dest, file))).equals(bytes)).toBe(true);
    const text = await cli(['verify', dest]);
    expect(text.code, text.stdout).toBe(0);
    const snapshots = snapshotsDirOf(dest);
    expect(text.stdout).toMatch(
      new RegExp(`^warning: others than you and root can change this snapshot: ${snapshots} \\(owner uid ${process.getuid!()}, mode 0777\\), ${snapshots}/\\S+ \\(owner uid ${OTHER_UID}, mode 0555\\), .* more; its own manifest proves nothing against them`, 'm'),
    );
    const json = JSON.parse((await cli(['verify', dest, '--json'])).stdout) as { controlledByOthers: Array<{ path: string; ownerUid: number; reason: string }> };
    expect(json.controlledByOthers).toContainEqual(expect.objectContaining({ path: snapshots, reason: 'writable' }));
    expect(json.controlledByOthers).toContainEqual(expect.objectContaining({ path: await realpath(dest), ownerUid: OTHER_UID, reason: 'owner' }));
    const against = await cli(['verify', dest, '--against-server', '--server', serverFlag('demo', EXAMPLES)]);
    expect(against.code, against.stdout).toBe(1);
    expect(against.stdout).toMatch(new RegExp(`^differs +${file.replace(/[.]/g, '\\.')}: the server lists sha256:[0-9a-f]{64} \\(\\d+ bytes\\) now; the manifest says ${sha256Digest(bytes)} \\(${bytes.length} bytes\\)$`, 'm'));
  });
});

describe('verify on a copy of a snapshot (issue 27, item 4)', () => {
  it('cp -r "$(realpath DEST)" DIR: exit 0, saying it was given a folder (text and --json); a byte changed in the copy: exit 1, naming it', async () => {
    const dest = path.join(await tempDir(), 'skills');
    expect((await cli(['snapshot', dest, '--no-disk-cache', '--server', serverFlag('demo', EXAMPLES)])).code).toBe(0);
    const copy = path.join(await tempDir(), 'copy');
    expect((await run('cp', ['-r', await realpath(dest), copy])).code).toBe(0);
    const text = await cli(['verify', copy]);
    expect(text.stdout).toMatch(/^snapshot \S+ in \S+\/copy \(a folder holding \.snapshot\.json, not a published link\): verified \(\d+ files/m);
    expect(text.code, text.stdout + text.stderr).toBe(0);
    const json = await cli(['verify', copy, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ dest: copy, given: 'folder', dir: copy, problems: [] });
    expect(JSON.parse((await cli(['verify', dest, '--json'])).stdout)).toMatchObject({ dest, given: 'link', dir: await realpath(dest) });
    const file = path.join(copy, 'demo/hello-mount/SKILL.md');
    await run('chmod', ['u+w', file]);
    await writeFile(file, `${await readFile(file, 'utf8')}x`);
    await run('chmod', ['a-w', file]);
    const changed = await cli(['verify', copy]);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/^differs +demo\/hello-mount\/SKILL\.md: .*bytes, expected/m);
  });
});

/** A served folder with one small snapshot published, then tens of MB more to fetch, and a run writing its snapshot. */
async function halfWritten(): Promise<{ dest: string; served: string; published: string; child: ReturnType<typeof spawn> }> {
  const dir = await tempDir();
  const served = path.join(dir, 'served');
  await cp(EXAMPLES, served, { recursive: true });
  const dest = path.join(dir, 'skills');
  expect((await cli(['snapshot', dest, '--no-disk-cache', '--server', serverFlag('s', served)])).code).toBe(0);
  const published = await readlink(dest);
  await cp(CORPUS_DIR, path.join(served, 'big'), { recursive: true });
  const child = spawn(process.execPath, [SKILLS_MOUNT, 'snapshot', dest, '--no-disk-cache', '--server', serverFlag('s', served)], { stdio: 'ignore' });
  const snapshots = snapshotsDirOf(dest);
  const buildHasFiles = async () => {
    const builds = (await readdir(snapshots)).filter((name) => name.startsWith('.build-'));
    if (builds.length === 0) return false;
    const files = await filesUnder(path.join(snapshots, builds[0]!)).catch(() => []);
    return files.length >= 10;
  };
  await waitFor(buildHasFiles, 60_000, 'the second snapshot to be half written');
  return { dest, served, published, child };
}

describe('SIGTERM in the middle of a snapshot', () => {
  it('stops it with exit 1, removes its build and leaves the published snapshot', async () => {
    const { dest, published, child } = await halfWritten();
    child.kill('SIGTERM');
    expect((await exitOf(child)).code).toBe(1);
    expect(await readlink(dest)).toBe(published);
    expect((await readdir(snapshotsDirOf(dest))).filter((name) => name.startsWith('.'))).toEqual([]);
    expect((await cli(['verify', dest])).code).toBe(0);
  });
});

describe('SIGKILL in the middle of a snapshot', () => {
  it('leaves the published snapshot as it was (verify passes); the next run succeeds and removes the leftover build', async () => {
    const { dest, served, published, child } = await halfWritten();
    const snapshots = snapshotsDirOf(dest);
    child.kill('SIGKILL');
    await exitOf(child);
    expect(await readlink(dest)).toBe(published);
    expect((await readdir(snapshots)).some((name) => name.startsWith('.build-'))).toBe(true);
    const verify = await cli(['verify', dest]);
    expect(verify.code, verify.stdout).toBe(0);
    const next = await cli(['snapshot', dest, '--no-disk-cache', '--server', serverFlag('s', served)]);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toMatch(/removing \.build-\S+, left by an interrupted run/);
    expect(await readlink(dest)).not.toBe(published);
    expect((await readdir(snapshots)).filter((name) => name.startsWith('.build-'))).toEqual([]);
    expect(await filesUnder(path.join(dest, 's', 'big'))).toEqual(await filesUnder(CORPUS_DIR));
    expect((await cli(['verify', dest])).code).toBe(0);
  });
});
