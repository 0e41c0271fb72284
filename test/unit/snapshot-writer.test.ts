// A snapshot of the real filesystem core (SkillsFilesystem over ServerCatalog) over an in-memory
// skill source, no kernel mount: it holds exactly the core's view, costs no request when nothing
// changed and one when one file did, never reuses bytes that no longer hash right, leaves out
// a skill that fails verification whole (nested skills stay), dynamic skills unless asked, and a
// disk that fills up mid-way leaves the published snapshot as it was.
import { chmod, readFile, readdir, readlink, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { approvalInputFor } from '../../src/approvals/approval-check.js';
import { ApprovalLedger } from '../../src/approvals/approval-ledger.js';
import { ApprovalStore } from '../../src/approvals/approval-store.js';
import { DiskCache } from '../../src/cache/disk-cache.js';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { UnavailableError } from '../../src/errors.js';
import { sha256Digest } from '../../src/format/digest.js';
import { ApprovedView } from '../../src/fs/approved-view.js';
import { SkillsFilesystem } from '../../src/fs/skills-filesystem.js';
import { nodeSnapshotFs, snapshotFsWith, type SnapshotFs } from '../../src/snapshot/snapshot-fs.js';
import { MANIFEST_NAME, parseManifest } from '../../src/snapshot/snapshot-manifest.js';
import { SnapshotStore, snapshotsDirOf } from '../../src/snapshot/snapshot-store.js';
import { verifySnapshot } from '../../src/snapshot/snapshot-verify.js';
import { watchSnapshots } from '../../src/snapshot/snapshot-watch.js';
import { writeSnapshot, type SnapshotViewName } from '../../src/snapshot/snapshot-writer.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';
import { waitFor } from '../support/poll.js';
import { makeTempDir } from '../support/temp-dir.js';

const made: string[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  for (const dir of made.splice(0)) await nodeSnapshotFs.removeTree(dir);
});

async function tempDir(): Promise<string> {
  const dir = await makeTempDir('snapshot-writer-');
  made.push(dir);
  return dir;
}

function serverWithSkills(): MemorySkillSource {
  const source = new MemorySkillSource('docs');
  source.addSkill('guide', { 'SKILL.md': skillMarkdown('guide'), 'refs/tone.md': 'Be brief.\n' });
  source.addSkill('guide/inner', { 'SKILL.md': skillMarkdown('inner'), 'ref.md': 'inner\n' });
  source.addSkill('tools', { 'SKILL.md': skillMarkdown('tools'), 'scripts/run.sh': '#!/bin/sh\necho hi\n', 'data.bin': Buffer.from([0, 1, 2, 255]) });
  return source;
}

interface Process {
  core: SkillsFilesystem;
  catalog: ServerCatalog;
  store: SnapshotStore;
  diskCache: DiskCache | undefined;
  logs: string[];
  snapshot(options?: { view?: SnapshotViewName; includeDynamic?: boolean; fs?: SnapshotFs }): ReturnType<typeof writeSnapshot>;
  close(): Promise<void>;
}

/** What one `skills-mount snapshot` process holds: a catalog of `source`, the core over it, DEST's store. */
async function start(source: MemorySkillSource, dest: string, options: { cacheRoot?: string; includeDynamic?: boolean; approvals?: ApprovalLedger; storeFs?: SnapshotFs } = {}): Promise<Process> {
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);
  const diskCache = options.cacheRoot === undefined ? undefined : await DiskCache.open({ root: options.cacheRoot, mountpoint: dest, limitBytes: 1 << 30, log });
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log, cache: new ContentCache(1 << 24), durable: diskCache?.server(source.label), hideDynamic: !options.includeDynamic });
  await catalog.refresh();
  const core = new SkillsFilesystem([catalog], { approvals: options.approvals, log });
  let changes = 0;
  core.onChange(() => {
    changes += 1;
  });
  const store = await SnapshotStore.open({ dest, log, fs: options.storeFs });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await store.close();
    await diskCache?.close();
  };
  cleanups.push(close);
  return {
    core,
    catalog,
    store,
    diskCache,
    logs,
    snapshot: (snapshotOptions = {}) =>
      writeSnapshot({ core, store, view: snapshotOptions.view ?? 'mount', includeDynamic: snapshotOptions.includeDynamic ?? options.includeDynamic ?? false, log, changes: () => changes, fs: snapshotOptions.fs }),
    close,
  };
}

/** Every file under `root` (relative paths) with its bytes; the manifest aside. */
async function filesUnder(root: string, prefix = ''): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const entry of await readdir(path.join(root, prefix), { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (relative === MANIFEST_NAME) continue;
    if (entry.isDirectory()) for (const [file, bytes] of await filesUnder(root, relative)) files.set(file, bytes);
    else files.set(relative, await readFile(path.join(root, relative)));
  }
  return files;
}

/** What a reader of the mount sees below `dir` of the core: every file's bytes (status.json and _approved aside at the root). */
async function coreView(core: SkillsFilesystem, dir = ''): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const name of await core.readdir(`/${dir}`)) {
    if (dir === '' && (name === 'status.json' || name === '_approved')) continue;
    const relative = dir === '' ? name : `${dir}/${name}`;
    if ((await core.getattr(`/${relative}`)).kind === 'directory') for (const [file, bytes] of await coreView(core, relative)) files.set(file, bytes);
    else {
      const handle = await core.open(`/${relative}`);
      files.set(relative, Buffer.from(core.read(handle, 0, 1 << 30)));
      core.release(handle);
    }
  }
  return files;
}

async function manifestAt(dest: string) {
  return parseManifest(await readFile(path.join(dest, MANIFEST_NAME), 'utf8'), dest);
}

describe('a snapshot of the filesystem core', () => {
  it('holds exactly the files the core shows, byte for byte, skills.json included, status.json not; the manifest hashes every file', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const run = await start(serverWithSkills(), dest);
    const result = await run.snapshot();
    expect(result).toMatchObject({ outcome: 'published', failures: [], skills: 3 });
    const written = await filesUnder(dest);
    const shown = await coreView(run.core);
    expect([...written.keys()].sort()).toEqual([...shown.keys()].sort());
    for (const [file, bytes] of shown) expect(written.get(file)?.equals(bytes), file).toBe(true);
    expect(written.has('status.json')).toBe(false);
    expect(JSON.parse(written.get('skills.json')!.toString()).servers[0].skills.map((skill: { path: string }) => skill.path)).toEqual(['docs/guide', 'docs/guide/inner', 'docs/tools']);
    const manifest = await manifestAt(dest);
    expect(manifest.files.map((file) => file.path)).toEqual([...written.keys()].sort());
    for (const file of manifest.files) expect(file.sha256, file.path).toBe(sha256Digest(written.get(file.path)!));
    // Inert: the script a server sent is not executable.
    expect((await stat(path.join(dest, 'docs/tools/scripts/run.sh'))).mode & 0o7777).toBe(0o444);
  });

  it('a second run with nothing changed makes no resources/read and keeps the published snapshot; one changed file costs one', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const source = serverWithSkills();
    const run = await start(source, dest);
    const first = await run.snapshot();
    const readsAfterFirst = source.count('resources/read');
    expect(readsAfterFirst).toBe(7);
    const again = await run.snapshot();
    expect(again).toMatchObject({ outcome: 'unchanged', id: first.id, fetched: 0 });
    expect(source.count('resources/read')).toBe(readsAfterFirst);

    source.changeFile('skill://tools/data.bin', Buffer.from([9, 9, 9]));
    await run.catalog.refresh();
    const changed = await run.snapshot();
    expect(changed).toMatchObject({ outcome: 'published', fetched: 1, linked: 6 });
    expect(source.count('resources/read')).toBe(readsAfterFirst + 1);
    expect(source.count('resources/read', 'skill://tools/data.bin')).toBe(2);
    expect([...(await readFile(path.join(dest, 'docs/tools/data.bin')))]).toEqual([9, 9, 9]);
    // Unchanged files are the previous snapshot's inodes.
    const previous = path.join(snapshotsDirOf(dest), first.id);
    expect((await stat(path.join(dest, 'docs/guide/SKILL.md'))).ino).toBe((await stat(path.join(previous, 'docs/guide/SKILL.md'))).ino);
  });

  it('a new process with nothing changed fetches nothing; with one file changed, one request (the rest from the previous snapshot and the verified disk cache)', async () => {
    const dir = await tempDir();
    const dest = path.join(dir, 'skills');
    const cacheRoot = path.join(dir, 'cache');
    const source = serverWithSkills();
    const first = await start(source, dest, { cacheRoot });
    await first.snapshot();
    await first.close();
    const reads = source.count('resources/read');
    const second = await start(source, dest, { cacheRoot });
    expect(await second.snapshot()).toMatchObject({ outcome: 'unchanged', fetched: 0 });
    expect(source.count('resources/read')).toBe(reads);
    await second.close();
    // A supporting file: its skill's SKILL.md must verify first, and comes from the disk cache.
    source.changeFile('skill://guide/refs/tone.md', 'Be very brief.\n');
    const third = await start(source, dest, { cacheRoot });
    expect(await third.snapshot()).toMatchObject({ outcome: 'published', fetched: 1 });
    expect(source.count('resources/read')).toBe(reads + 1);
    expect(await readFile(path.join(dest, 'docs/guide/refs/tone.md'), 'utf8')).toBe('Be very brief.\n');
  });

  it('an earlier snapshot file that no longer hashes to its digest is fetched again, never linked', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const source = serverWithSkills();
    const run = await start(source, dest);
    const first = await run.snapshot();
    const root = path.join(snapshotsDirOf(dest), first.id);
    await chmod(path.join(root, 'docs/guide'), 0o755);
    await chmod(path.join(root, 'docs/guide/SKILL.md'), 0o644);
    await writeFile(path.join(root, 'docs/guide/SKILL.md'), 'tampered');
    source.changeFile('skill://tools/data.bin', 'new');
    await run.catalog.refresh();
    const reads = source.count('resources/read');
    await run.snapshot();
    expect(await readFile(path.join(dest, 'docs/guide/SKILL.md'), 'utf8')).toBe(skillMarkdown('guide'));
    expect(source.count('resources/read', 'skill://guide/SKILL.md')).toBe(1);
    // From the core's verified cache, not the tampered file.
    expect(source.count('resources/read') - reads).toBe(1);
    expect((await verifySnapshot(dest)).problems).toEqual([]);
  });

  it('a SKILL.md that fails verification leaves its skill out whole, with the reason in skills.json, the manifest and the log; a nested skill stays', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const source = serverWithSkills();
    // The server serves other bytes than its entry says.
    source.changeFile('skill://guide/SKILL.md', skillMarkdown('guide', 'Something else'), false);
    const run = await start(source, dest);
    const result = await run.snapshot();
    expect(result.failures).toEqual([]);
    const written = await filesUnder(dest);
    expect([...written.keys()].filter((file) => file.startsWith('docs/guide')).sort()).toEqual(['docs/guide/inner/SKILL.md', 'docs/guide/inner/ref.md']);
    const manifest = await manifestAt(dest);
    expect(manifest.omitted).toEqual([{ path: 'docs/guide', reason: expect.stringMatching(/^rejected: .*skill:\/\/guide\/SKILL\.md: size mismatch/) }]);
    const guide = JSON.parse(written.get('skills.json')!.toString()).servers[0].skills.find((skill: { path: string }) => skill.path === 'docs/guide');
    expect(guide).toMatchObject({ state: 'rejected', rejected: expect.any(String) });
    expect(run.logs.join('\n')).toMatch(/left out docs\/guide: /);
    expect((await verifySnapshot(dest)).problems).toEqual([]);
    // The next run finds the same (the catalog keeps the rejection and its reason): nothing new is published.
    expect(await run.snapshot()).toMatchObject({ outcome: 'unchanged', id: result.id });
  });

  it('a supporting file that fails verification takes its whole skill out: what was already written of it is removed', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const source = serverWithSkills();
    source.changeFile('skill://tools/data.bin', Buffer.from([6, 6, 6, 6]), false);
    const run = await start(source, dest);
    const result = await run.snapshot();
    expect(result.failures).toEqual([]);
    const written = [...(await filesUnder(dest)).keys()];
    expect(written.filter((file) => file.startsWith('docs/tools'))).toEqual([]);
    expect(await readdir(path.join(dest, 'docs'))).toEqual(['guide']);
    expect((await manifestAt(dest)).omitted).toEqual([{ path: 'docs/tools', reason: expect.stringMatching(/^failed verification: .*data\.bin/) }]);
    expect((await verifySnapshot(dest)).problems).toEqual([]);
  });

  it('a server that cannot serve its files is named as failed; its skills are left out, the rest published', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const source = serverWithSkills();
    const run = await start(source, dest);
    source.failures.set('resources/read', new UnavailableError('docs: resources/read: connection lost'));
    const result = await run.snapshot();
    expect(result.outcome).toBe('published');
    expect(result.failures).toEqual([{ label: 'docs', reason: expect.stringMatching(/connection lost/) }]);
    expect((await manifestAt(dest)).servers).toEqual([{ label: 'docs', state: 'connected', failed: expect.stringMatching(/connection lost/) }]);
    expect([...(await filesUnder(dest)).keys()]).toEqual(['skills.json']);
  });

  it('a server that cannot be reached on a later run keeps its part of the previous snapshot, marked; it is named as failed', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const source = serverWithSkills();
    const first = await start(source, dest);
    await first.snapshot();
    await first.close();
    const before = await filesUnder(dest);
    source.status = { status: 'failed', reason: 'cannot connect: connection refused' };
    const second = await start(source, dest);
    const result = await second.snapshot();
    expect(result.failures).toEqual([{ label: 'docs', reason: expect.stringMatching(/connection refused/) }]);
    const after = await filesUnder(dest);
    for (const [file, bytes] of before) if (file !== 'skills.json') expect(after.get(file)?.equals(bytes), file).toBe(true);
    expect((await manifestAt(dest)).servers).toEqual([{ label: 'docs', state: 'failed', failed: expect.stringMatching(/connection refused/), keptFromPrevious: true }]);
    expect(JSON.parse(after.get('skills.json')!.toString()).servers[0]).toMatchObject({ label: 'docs', state: 'failed' });
    expect((await verifySnapshot(dest)).problems).toEqual([]);
    // Still unreachable: nothing new to publish.
    expect(await second.snapshot()).toMatchObject({ outcome: 'unchanged', id: result.id });
  });

  it('"dynamic" skills are left out unless asked for, and then marked unverified', async () => {
    const source = serverWithSkills();
    const entry = source.addSkill('live', { 'SKILL.md': skillMarkdown('live'), 'now.txt': 'changes\n' });
    entry.resources = 'dynamic';
    const hidden = await start(source, path.join(await tempDir(), 'skills'));
    await hidden.snapshot();
    expect([...(await filesUnder(hidden.store.dest)).keys()].some((file) => file.startsWith('docs/live'))).toBe(false);
    const shown = await start(source, path.join(await tempDir(), 'skills'), { includeDynamic: true });
    await shown.snapshot();
    const manifest = await manifestAt(shown.store.dest);
    expect(manifest.includeDynamic).toBe(true);
    expect(manifest.files.find((file) => file.path === 'docs/live/SKILL.md')).toMatchObject({ verified: false });
    const live = JSON.parse(await readFile(path.join(shown.store.dest, 'skills.json'), 'utf8')).servers[0].skills.find((skill: { name: string }) => skill.name === 'live');
    expect(live).toMatchObject({ integrity: 'dynamic' });
  });

  it('a disk that fills up mid-way fails the run; the published snapshot is unchanged and verifies, the build is gone, the next run succeeds', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const source = serverWithSkills();
    const first = await start(source, dest);
    const published = await first.snapshot();
    await first.close();
    source.changeFile('skill://tools/data.bin', Buffer.alloc(4096, 7));
    source.changeFile('skill://guide/refs/tone.md', 'Changed.\n');
    let written = 0;
    const full = snapshotFsWith({
      writeFile: async (file, bytes, mode) => {
        if (written + bytes.length > 1024) throw Object.assign(new Error(`ENOSPC: no space left on device, open '${file}'`), { code: 'ENOSPC' });
        written += bytes.length;
        await nodeSnapshotFs.writeFile(file, bytes, mode);
      },
    });
    const second = await start(source, dest, { storeFs: full });
    await expect(second.snapshot()).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await readlink(dest)).toBe(`.skills.snapshots/${published.id}`);
    expect((await verifySnapshot(dest)).problems).toEqual([]);
    expect((await readdir(snapshotsDirOf(dest))).filter((name) => name.startsWith('.build-'))).toEqual([]);
    await second.close();
    const third = await start(source, dest);
    expect(await third.snapshot()).toMatchObject({ outcome: 'published', failures: [] });
    expect((await readFile(path.join(dest, 'docs/tools/data.bin'))).length).toBe(4096);
  });

  it('--approved writes only _approved/: the approved skills and their own skills.json', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'config', 'approvals.json');
    const ledger = await ApprovalLedger.open(file, () => {});
    cleanups.push(() => ledger.idle());
    const run = await start(serverWithSkills(), path.join(dir, 'skills'), { approvals: ledger });
    const view = new ApprovedView(new Map([[run.catalog.label, run.catalog]]), ledger);
    const record = view.inspect('docs', 'tools')!;
    const approvals = await ApprovalStore.load(file);
    await approvals.approve(approvalInputFor('docs', { ...record, files: record.files as Exclude<typeof record.files, string> }, { allowedToolsApproved: false }));
    await ledger.refresh(true);
    await run.snapshot({ view: 'approved' });
    const written = [...(await filesUnder(run.store.dest)).keys()].sort();
    expect(written).toEqual(['_approved/docs/tools/SKILL.md', '_approved/docs/tools/data.bin', '_approved/docs/tools/scripts/run.sh', '_approved/skills.json']);
    const approvedJson = JSON.parse(await readFile(path.join(run.store.dest, '_approved/skills.json'), 'utf8'));
    expect(approvedJson.servers[0].skills.map((skill: { path: string }) => skill.path)).toEqual(['_approved/docs/tools']);
  });
});

describe('--watch', () => {
  it('publishes a new snapshot when the core reports a change, nothing while nothing changes, and stops on abort', async () => {
    const dest = path.join(await tempDir(), 'skills');
    const source = serverWithSkills();
    const run = await start(source, dest);
    const controller = new AbortController();
    const published: string[] = [];
    let ticks = 0;
    const watching = watchSnapshots({
      subscribe: (listener) => run.core.onChange(listener),
      run: async () => {
        const result = await run.snapshot();
        if (result.outcome === 'published') published.push(result.id);
        return { failed: result.failures.length > 0 };
      },
      tick: () => (ticks += 1),
      tickMs: 20,
      settleMs: 10,
      signal: controller.signal,
      log: () => {},
    });
    await waitFor(() => published.length === 1, 5_000, 'the first snapshot');
    await waitFor(() => ticks >= 5, 5_000, 'ticks while nothing changes');
    expect(published).toHaveLength(1);
    source.changeFile('skill://guide/refs/tone.md', 'Watched.\n');
    source.emit({ type: 'list-changed' });
    await waitFor(() => published.length === 2, 10_000, 'a snapshot after the change');
    expect(await readFile(path.join(dest, 'docs/guide/refs/tone.md'), 'utf8')).toBe('Watched.\n');
    controller.abort();
    await watching;
    expect(await readlink(dest)).toBe(`.skills.snapshots/${published[1]}`);
  });
});
