// A change on the server reaching `cat`, per FUSE backend: one mount (--verbose, default kernel
// timeouts unless the profile gives a backend --metadata-ttl) of several skills-serve processes,
// each over its own small writable copy of a generated catalog. Each change: `cat` the file once
// through the mount, replace it in the served directory with new bytes (same size and another
// size in turn), then run `cat` every ~10 ms until it shows them. Times are taken in this process:
// the write, the arrival of the mount's log line saying its catalog learned of the change, and
// the end of the first `cat` that showed the new bytes.
import { execFile } from 'node:child_process';
import { cp, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { NOTIFIED_RELIST_INTERVAL_MS } from '../../dist/catalog/discovery.js';
import { generateCatalog, listedFiles } from '../lib/catalogs.mjs';
import { serveEntry, startMount } from '../lib/mount-child.mjs';
import { delay } from '../lib/stats.mjs';

const POLL_MS = 10;
/** How long after `cat` showed the new bytes the log line may still be on its way (pipes are read in any order). */
const LOG_LINE_GRACE_MS = 1_000;
/**
 * A catalog re-lists for change notifications at most once per NOTIFIED_RELIST_INTERVAL_MS: a
 * server changed again sooner would measure that window, so changes go round the servers and
 * each waits this long after its server's last change was seen.
 */
const SERVER_REST_MS = NOTIFIED_RELIST_INTERVAL_MS + 500;
const GROWTH_BYTES = 100;

/**
 * `plan` is {servers, BACKEND: {count, metadataTtlSeconds?, deadlineSeconds}}. Resolves per
 * backend: its settings and one sample per change ({sameSize, writtenToLearnedMs,
 * learnedToSeenMs, writtenToSeenMs}); a change `cat` did not show within the deadline ends that
 * backend's changes (`timedOut` says which).
 */
export async function measureChangeLatency({ workDir, plan, backends, log }) {
  const templateDir = path.join(workDir, 'changes-template');
  await generateCatalog(templateDir, { skills: 2, files: 3, group: 0 });
  const file = (await listedFiles(templateDir)).find((listed) => listed.path.endsWith('.md') && !listed.path.endsWith('SKILL.md'));
  const results = {};
  for (const backend of backends) {
    results[backend] = await measureOn(backend, plan[backend]);
    log(`change latency: ${backend}: ${results[backend].samples.length} changes${results[backend].timedOut ? `; ${results[backend].timedOut}` : ''}`);
  }
  return results;

  async function measureOn(backend, { count, metadataTtlSeconds, deadlineSeconds }) {
    const labels = Array.from({ length: plan.servers }, (_, index) => `changes-${index}`);
    const served = {};
    for (const label of labels) {
      served[label] = path.join(workDir, `changes-${backend}`, label);
      await cp(templateDir, served[label], { recursive: true });
    }
    const ttlArgs = metadataTtlSeconds === undefined ? [] : ['--metadata-ttl', String(metadataTtlSeconds)];
    const mount = await startMount({ workDir, name: 'changes', backend, servers: Object.fromEntries(labels.map((label) => [label, serveEntry(served[label])])), args: ['--verbose', ...ttlArgs] });
    const result = { count, metadataTtlSeconds, deadlineSeconds, samples: [] };
    try {
      const seenAtMs = {};
      for (let index = 0; index < count; index++) {
        const label = labels[index % labels.length];
        const onServer = path.join(served[label], file.path);
        const onMount = path.join(mount.mountpoint, label, file.path);
        await delay((seenAtMs[label] ?? -Infinity) + SERVER_REST_MS - performance.now());
        const current = await readFile(onServer);
        const before = await cat(onMount);
        if (!current.equals(before ?? Buffer.alloc(0))) throw new Error(`${onMount} (${backend}) does not show what the server serves before change ${index + 1}`);
        const sameSize = index % 2 === 0;
        const next = newBytes(index, sameSize ? current.length : current.length === file.sizeBytes ? file.sizeBytes + GROWTH_BYTES : file.sizeBytes);
        // Written beside the served tree and renamed into it: one change, never a half-written file.
        const staged = path.join(workDir, `changes-${backend}`, 'staged');
        await writeFile(staged, next);
        const linesBefore = mount.lines().length;
        await rename(staged, onServer);
        const writtenAtMs = performance.now();
        while (!(await cat(onMount))?.equals(next)) {
          if (performance.now() - writtenAtMs > deadlineSeconds * 1000) {
            result.timedOut = `change ${index + 1} (${sameSize ? 'same size' : 'new size'}) not shown by cat within ${deadlineSeconds} s`;
            return result;
          }
          await delay(POLL_MS);
        }
        seenAtMs[label] = performance.now();
        const learnedAtMs = await learnedAt(mount, linesBefore, label, seenAtMs[label] + LOG_LINE_GRACE_MS);
        result.samples.push({
          sameSize,
          writtenToLearnedMs: learnedAtMs - writtenAtMs,
          // The log line and cat's exit can reach this process in either order: the same moment.
          learnedToSeenMs: Math.max(0, seenAtMs[label] - learnedAtMs),
          writtenToSeenMs: seenAtMs[label] - writtenAtMs,
        });
      }
      return result;
    } finally {
      await mount.stop();
    }
  }
}

/** When the first line after `fromLine` saying the catalog of `label` found a skill changed arrived; NaN if none by `untilMs`. */
async function learnedAt(mount, fromLine, label, untilMs) {
  const learned = (line) => line.text.includes(`[${label}] skill `) && line.text.includes(' changed: ');
  for (;;) {
    const line = mount.lines().slice(fromLine).find(learned);
    if (line) return line.atMs;
    if (performance.now() > untilMs) return Number.NaN;
    await delay(POLL_MS);
  }
}

/** Bytes of `sizeBytes` that no earlier change wrote. */
function newBytes(index, sizeBytes) {
  return Buffer.from(`change ${index + 1}\n`.padEnd(sizeBytes - 1, '.') + '\n');
}

/** `cat FILE`'s output, or undefined when it failed. */
function cat(file) {
  return new Promise((resolve) => execFile('cat', [file], { encoding: 'buffer', maxBuffer: 1 << 24 }, (error, stdout) => resolve(error ? undefined : stdout)));
}
