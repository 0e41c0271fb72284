// `skills-mount snapshot DEST`: starts every configured server, builds the same filesystem core
// the mount serves, and writes its view to DEST as verified read-only files, published
// atomically (src/snapshot/); with --watch, again whenever anything changes, until SIGTERM;
// with --oci, as an OCI image layout (src/snapshot/oci-snapshot.ts).
// No kernel mount anywhere: the core is walked in this process. Wires; decides little.
import { mkdtemp } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { ApprovalLedger } from '../approvals/approval-ledger.js';
import { defaultApprovalsPath } from '../approvals/approval-store.js';
import type { ApprovalsSource } from '../approvals/approval-ledger.js';
import { harnessNamed } from '../link/harness-roots.js';
import { removeReadOnlyTree } from '../read-only-tree.js';
import { checkLayoutDestination } from '../snapshot/oci-layout.js';
import type { OciImage } from '../snapshot/oci-image.js';
import { writeOciSnapshot } from '../snapshot/oci-snapshot.js';
import { lockfilePath } from '../team/lockfile.js';
import { loadPolicy } from '../team/policy.js';
import { approvedSource } from '../team/view-approvals.js';
import { DiskCache, defaultCacheRoot } from '../cache/disk-cache.js';
import { discoveryFolderProblem } from '../cache/discovery-folders.js';
import { ConfigError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import { APPROVED_DIR } from '../fs/mount-layout.js';
import { SnapshotStore, snapshotsDirOf } from '../snapshot/snapshot-store.js';
import { watchSnapshots } from '../snapshot/snapshot-watch.js';
import { writeSnapshot, type SnapshotResult } from '../snapshot/snapshot-writer.js';
import type { SnapshotOptions } from './command-line.js';
import { loadMountConfig } from '../config/config.js';
import { SnapshotProgress, StartupProgress } from './progress.js';
import { exitAfterDrain } from './process-exit.js';
import { startServerCore, type ServerCore } from '../in-process/server-core.js';

const MIB = 1024 * 1024;

/** Runs the snapshot (or the watch until a signal); resolves the exit code: 0 all servers whole, 1 some failed. */
export async function runSnapshot(options: SnapshotOptions): Promise<number> {
  let sink: { log(line: string): void } | undefined;
  const log = (line: string): void => {
    // Whatever a server put into a line, no control character survives (as in the mount's log).
    const text = `skills-mount: ${escapeForLog(line)}`;
    if (sink) sink.log(text);
    else process.stderr.write(`${text}\n`);
  };

  const config = await loadMountConfig({ configPath: options.configPath, serverFlags: options.serverFlags, only: options.only });
  const dest = path.resolve(options.dest);
  for (const note of config.notes) log(note);
  // The mount's list and message: a snapshot in a harness's skill folder would install what it should only show.
  for (const candidate of [dest, snapshotsDirOf(dest)]) {
    const problem = await discoveryFolderProblem(candidate, { home: homedir(), env: process.env });
    if (problem !== undefined) throw new ConfigError(`destination ${dest}: ${problem}`);
  }
  const harness = options.oci?.harness === undefined ? undefined : harnessNamed(options.oci.harness);
  if (options.oci) await checkLayoutDestination(dest, { allowSharedParent: options.allowSharedParent, log });
  const lockfile = options.projectDir === undefined ? undefined : lockfilePath(options.projectDir);
  // An image's snapshot is written the existing way, in a private folder, then packed (src/snapshot/oci-snapshot.ts).
  const scratch = options.oci ? await mkdtemp(path.join(tmpdir(), 'skills-mount-oci-')) : undefined;
  const store = await SnapshotStore.open({ dest: scratch === undefined ? dest : path.join(scratch, 'view'), log, allowSharedParent: options.allowSharedParent }).catch(async (error: unknown) => {
    if (scratch !== undefined) await removeReadOnlyTree(scratch);
    throw error;
  });
  const controller = new AbortController();
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      log(`${signal} again: exiting now`);
      void exitAfterDrain(1, { hurried: true });
      return;
    }
    stopping = true;
    log(`${signal}: stopping; the published snapshot stays as it is`);
    controller.abort();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));

  let diskCache: DiskCache | undefined;
  let core: ServerCore | undefined;
  let approvals: ApprovalLedger | undefined;
  let viewed: ApprovalsSource | undefined;
  try {
    // Kept per DEST, as the mount keeps it per mountpoint (an image's scratch folder is new each run).
    diskCache = options.diskCache && (await openDiskCache(options.diskCache, dest, store.snapshotsDir, log));
    approvals = await ApprovalLedger.open(defaultApprovalsPath(process.env, homedir()), log);
    const policy = await loadPolicy({ env: process.env, home: homedir() });
    // The approved view as the policy in force lets it be shown, from the person's approvals or exactly the project's lock.
    viewed = await approvedSource(lockfile, approvals, config.servers, policy, log, '--project');
    const servers = config.servers.length;
    const what = options.oci ? ` (an OCI image${harness ? `, laid out as ${harness.title}'s skills root` : ''})` : '';
    log(`snapshot of ${servers} server${servers === 1 ? '' : 's'} from ${config.origin} to ${dest}${options.approved ? ` (the approved view, ${APPROVED_DIR}/${lockfile ? `: the versions locked in ${lockfile}` : ''})` : ''}${what}`);
    const startup = new StartupProgress(process.stderr, servers);
    sink = startup;
    core = await startServerCore({
      servers: config.servers,
      timeoutMs: options.timeoutMs,
      protocolVersion: options.protocolVersion,
      verbose: options.verbose,
      hideDynamic: !options.includeDynamic,
      log,
      approvals: viewed,
      diskCache,
      progress: startup,
    });
    startup.finish();
    const progress = new SnapshotProgress(process.stderr, servers);
    sink = progress;

    const { filesystem, catalogs } = core;
    let changes = 0;
    filesystem.onChange(() => {
      changes += 1;
    });
    const once = async (): Promise<SnapshotResult> => {
      progress.start();
      try {
        return await writeSnapshot({
          core: filesystem,
          store,
          view: options.approved ? 'approved' : 'mount',
          includeDynamic: options.includeDynamic,
          log,
          changes: () => changes,
          progress,
          signal: controller.signal,
        });
      } finally {
        progress.stop();
      }
    };
    const report = (result: SnapshotResult, startedAtMs: number): void => {
      for (const failure of result.failures) log(`[${failure.label}] not snapshotted whole: ${failure.reason}`);
      log(summary(result, dest, config.servers.length, (Date.now() - startedAtMs) / 1000));
      // The anchor `verify --expect` takes, alone on stdout for scripts: the digest of the manifest DEST now names.
      if (result.outcome === 'published' || !options.watch) process.stdout.write(`${result.manifestDigest}\n`);
    };

    if (options.oci) {
      const startedAtMs = Date.now();
      const result = await once();
      for (const failure of result.failures) log(`[${failure.label}] not snapshotted whole: ${failure.reason}`);
      const source = viewed;
      const image = await writeOciSnapshot({ published: await store.published(), dest, harness, approvals: () => source.all(), lockfile, log });
      log(imageSummary(image, dest, config.servers.length - result.failures.length, config.servers.length, (Date.now() - startedAtMs) / 1000));
      // The anchor `verify DEST --expect` takes, and what a pod pins: the image index's digest.
      process.stdout.write(`${image.index.digest}\n`);
      return result.failures.length > 0 ? 1 : 0;
    }
    if (!options.watch) {
      const startedAtMs = Date.now();
      const result = await once();
      report(result, startedAtMs);
      return result.failures.length > 0 ? 1 : 0;
    }
    await watchSnapshots({
      subscribe: (listener) => filesystem.onChange(listener),
      run: async () => {
        const startedAtMs = Date.now();
        const result = await once();
        if (result.outcome === 'published' || result.failures.length > 0) report(result, startedAtMs);
        return { failed: result.failures.length > 0 };
      },
      // What a reader of the mount does: an operation on each label refreshes a listing past its ttlMs.
      tick: () => {
        for (const catalog of catalogs) void catalog.lookup('').catch(() => {});
        // And re-reads the approvals file if it changed (skills.json shows approvals too).
        void filesystem.getattr(`/${APPROVED_DIR}`).catch(() => {});
      },
      signal: controller.signal,
      log,
    });
    return 0;
  } catch (error) {
    if (controller.signal.aborted) {
      log('stopped before the snapshot was finished; the published snapshot is unchanged');
      return options.watch ? 0 : 1;
    }
    throw error;
  } finally {
    sink = undefined;
    // A stdio server is stopped in at most three 1 s steps (stdin, SIGTERM, SIGKILL).
    await Promise.race([Promise.all([core?.close(), diskCache?.close(), approvals?.idle()]), delay(4_000)]);
    if (viewed !== approvals && viewed !== undefined && 'close' in viewed && typeof viewed.close === 'function') (viewed as { close(): void }).close();
    await store.close();
    if (scratch !== undefined) await removeReadOnlyTree(scratch);
  }
}

/** "OCI image sha256:... written at /dest: 2/2 servers whole; 12 skills, 40 files; layer 1.2 MiB (gzip; 4.0 MiB as tar); 1.3 s" */
function imageSummary(image: OciImage, dest: string, whole: number, servers: number, seconds: number): string {
  const skills = `${image.skills.toLocaleString('en-US')} skill${image.skills === 1 ? '' : 's'}, ${image.files.toLocaleString('en-US')} files`;
  const layer = `layer ${image.layer.digest}, ${(image.layer.size / MIB).toFixed(2)} MiB (gzip; ${(image.layer.tarBytes / MIB).toFixed(2)} MiB as tar)`;
  return `OCI image ${image.index.digest} written at ${dest} (linux/amd64, linux/arm64): ${whole}/${servers} servers whole; ${skills}; ${layer}; ${seconds.toFixed(1)} s`;
}

/** The disk cache for DEST, as the mount keeps one per mountpoint; never inside DEST's snapshots. */
async function openDiskCache(settings: { root: string | undefined; limitBytes: number }, dest: string, snapshotsDir: string, log: (line: string) => void): Promise<DiskCache> {
  const root = path.resolve(settings.root ?? defaultCacheRoot(process.env, homedir()));
  for (const inside of [dest, snapshotsDir]) {
    if (root === inside || root.startsWith(`${inside}/`)) throw new ConfigError(`--cache-dir ${root} is inside ${inside}`);
  }
  const cache = await DiskCache.open({ root, mountpoint: dest, limitBytes: settings.limitBytes, log });
  log(`disk cache ${cache.subtree} (${Math.round(cache.totalBytes / MIB)} of ${Math.round(settings.limitBytes / MIB)} MiB used)`);
  return cache;
}

/** "snapshot 2026...-a1b2c3 published at /dest: 2/2 servers; 1,234 skills, 3,456 files, 12.3 MiB (3,400 linked, 56 fetched); 2.1 s" */
function summary(result: SnapshotResult, dest: string, servers: number, seconds: number): string {
  const what = result.outcome === 'published' ? `snapshot ${result.id} published at ${dest}` : `snapshot ${result.id} at ${dest} unchanged`;
  const whole = servers - result.failures.length;
  const failed = result.failures.length > 0 ? ` (failed: ${result.failures.map((failure) => failure.label).join(', ')})` : '';
  const omitted = result.manifest.omitted.length > 0 ? `, ${result.manifest.omitted.length} left out` : '';
  const counts = `${result.skills.toLocaleString('en-US')} skill${result.skills === 1 ? '' : 's'}${omitted}, ${result.files.toLocaleString('en-US')} files, ${(result.bytes / MIB).toFixed(1)} MiB`;
  const work = `${result.linked.toLocaleString('en-US')} linked, ${result.fetched.toLocaleString('en-US')} fetched`;
  return `${what}: ${whole}/${servers} servers whole${failed}; ${counts} (${work}); ${seconds.toFixed(1)} s`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
