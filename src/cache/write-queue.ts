// The writes of the disk cache, off the serving path (issue 22, item 6): put() queues a verified
// file, and queued writes start once the cache has seen no read or put for IDLE_BEFORE_WRITE_MS
// (or when WRITE_ANYWAY_BYTES are waiting), at most MAX_WRITES_IN_FLIGHT at once; past
// MAX_QUEUED_BYTES a file is simply not cached. A write is a temp file renamed into place with no
// fsync: a crash can leave a cache file torn or empty under its final name, and that is safe
// because every read hashes the file again and discards one that does not match its digest.
// Failed writes are logged once per error code until one succeeds. Knows nothing of reads.
import path from 'node:path';
import { sha256Digest } from '../format/digest.js';
import type { Log } from '../log.js';
import { errorCode, errorMessage, writeAtomically } from '../private-files.js';
import { indexKey, type CacheIndex } from './cache-index.js';
import { withShownPaths, type AnchoredDirectory } from './anchored-directory.js';
import type { ClaimedSubtree } from './claimed-subtree.js';
import { DIGEST_PATTERN, LISTING_NAME, TEMP_PREFIX, cacheFileNameIn, formatBytes } from './layout.js';
import { listingBytes } from './saved-listing.js';

/** Cache writes running at once: libuv has 4 threads by default, and reads of the serving path need the rest. */
const MAX_WRITES_IN_FLIGHT = 2;
/** Queued writes wait until the cache saw no read or put for this long: a burst of reads is served first. */
const IDLE_BEFORE_WRITE_MS = 50;
/** ...unless this much is waiting: then they go on beside the reads, so a long burst is still cached. */
const WRITE_ANYWAY_BYTES = 48 * 1024 * 1024;
/** Bytes waiting to be written; past this a verified file is simply not cached. */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;

/** What the queue asks of the cache that owns it. */
export interface WriteQueueHooks {
  /** Runs a write so the cache's close() waits for it. */
  track<T>(job: Promise<T>): Promise<T>;
  /** A file was stored: the subtree's record of its last use may be due. */
  stored(): void;
}

/** The queued and running writes of one claimed subtree, each added to its index once stored. */
export class WriteQueue {
  /** Writes under way or queued by index key, so two puts of one key write once. */
  private readonly pending = new Map<string, Promise<boolean>>();
  /** Writes waiting for a slot, in order. */
  private readonly queue: Array<() => void> = [];
  private writesRunning = 0;
  private queuedBytes = 0;
  private pumpTimer: NodeJS.Timeout | undefined;
  /** performance.now() of the last read or put: queued writes wait for a pause after it. */
  private lastActivityMs = 0;
  /** Error codes of failed writes already logged; cleared by a write that succeeds. */
  private readonly silencedWriteErrors = new Set<string>();
  /** Set by drain(): what is queued is written without waiting for a pause. */
  private draining = false;

  constructor(
    private readonly held: ClaimedSubtree,
    private readonly index: CacheIndex,
    private readonly log: Log,
    private readonly hooks: WriteQueueHooks,
  ) {}

  /** A read is being served: queued writes wait for a pause after it. */
  noteActivity(): void {
    this.lastActivityMs = performance.now();
  }

  /** Starts every queued write as slots free up, with no wait for a pause (the cache is closing). */
  drain(): void {
    this.draining = true;
    this.pump();
  }

  /** Cancels a pending wake-up; call once nothing is queued. */
  stop(): void {
    clearTimeout(this.pumpTimer);
  }

  /** Queues bytes that just verified against `digest` (and `binding`: layout.ts) for `uri` of `label`; true once they are in the cache. Never throws. */
  put(label: string, uri: string, digest: string, bytes: Uint8Array, binding?: string): Promise<boolean> {
    if (this.held.writesStopped) return Promise.resolve(false);
    this.noteActivity();
    if (!DIGEST_PATTERN.test(digest)) {
      this.log(`[${label}] disk cache: ${uri}: ${digest} is not a sha256 digest; not stored`);
      return Promise.resolve(false);
    }
    if (bytes.length > this.index.limitBytes) return Promise.resolve(false);
    const file = indexKey(label, cacheFileNameIn(uri, digest, binding));
    const entry = this.index.get(file);
    if (entry !== undefined) {
      // Never rewritten: a file that went bad is caught (and removed) by the next get.
      this.index.touch(entry);
      return Promise.resolve(true);
    }
    const running = this.pending.get(file);
    if (running !== undefined) return running;
    if (this.queuedBytes + bytes.length > MAX_QUEUED_BYTES) {
      if (!this.silencedWriteErrors.has('QUEUE_FULL')) {
        this.silencedWriteErrors.add('QUEUE_FULL');
        this.log(`[${label}] disk cache: ${uri}: ${formatBytes(this.queuedBytes)} of writes are already waiting; not cached (logged once until a write succeeds)`);
      }
      return Promise.resolve(false);
    }
    const job = this.hooks.track(this.enqueue(bytes.length, () => this.writeFile(label, uri, digest, file, bytes))).finally(() => this.pending.delete(file));
    this.pending.set(file, job);
    return job;
  }

  /** Runs `job` once a write slot is free and the reads have paused (see IDLE_BEFORE_WRITE_MS), never in the caller's turn of the event loop. */
  private enqueue(sizeBytes: number, job: () => Promise<boolean>): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      this.queuedBytes += sizeBytes;
      this.queue.push(() => {
        this.queuedBytes -= sizeBytes;
        this.writesRunning += 1;
        void job()
          .catch(() => false)
          .then((stored) => {
            this.writesRunning -= 1;
            resolve(stored);
            this.pump();
          });
      });
      this.schedulePump(IDLE_BEFORE_WRITE_MS);
    });
  }

  private schedulePump(delayMs: number): void {
    if (this.pumpTimer !== undefined) return;
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = undefined;
      this.pump();
    }, Math.max(0, delayMs));
  }

  /** Starts queued writes while slots are free: at once when draining or past WRITE_ANYWAY_BYTES, else after a pause in reads. */
  private pump(): void {
    while (this.writesRunning < MAX_WRITES_IN_FLIGHT && this.queue.length > 0) {
      const quietMs = performance.now() - this.lastActivityMs;
      if (!this.draining && this.queuedBytes < WRITE_ANYWAY_BYTES && quietMs < IDLE_BEFORE_WRITE_MS) {
        this.schedulePump(IDLE_BEFORE_WRITE_MS - quietMs);
        return;
      }
      this.queue.shift()!();
    }
  }

  private async writeFile(label: string, uri: string, digest: string, file: string, bytes: Uint8Array): Promise<boolean> {
    // Callers put only bytes that just verified; checking again here costs the read path nothing.
    if (sha256Digest(bytes) !== digest) {
      this.log(`[${label}] disk cache: ${uri}: bytes do not match ${digest}; not stored`);
      return false;
    }
    if (!(await this.held.rootStillHeld())) return false;
    const generation = this.index.generation(label);
    const hex = path.basename(file);
    let bucket: AnchoredDirectory | undefined;
    try {
      const dirs = await this.held.labelDirectories(label);
      bucket = await dirs.files.child(hex.slice(0, 2), { create: true });
      await writeAtomically(bucket.at(''), hex, bytes, TEMP_PREFIX, { durable: false });
    } catch (error) {
      // A clear() that removed the directory mid-write is not a disk problem.
      if (generation === this.index.generation(label)) this.failed(label, uri, error);
      return false;
    } finally {
      await bucket?.close();
    }
    if (generation !== this.index.generation(label)) return false;
    this.silencedWriteErrors.clear();
    this.index.touch({ label, file, sizeBytes: bytes.length });
    this.hooks.stored();
    await this.index.evict(file);
    return true;
  }

  /** Writes the server's listing now (it does not wait in the queue); true when written. Never throws. */
  async saveListing(label: string, document: unknown): Promise<boolean> {
    if (this.held.writesStopped) return false;
    const generation = this.index.generation(label);
    const job = (async () => {
      try {
        const bytes = listingBytes(document);
        if (!(await this.held.rootStillHeld())) return false;
        const dirs = await this.held.labelDirectories(label);
        // Not fsynced either: a torn listing fails to parse and is discarded with one line.
        await writeAtomically(dirs.label.at(''), LISTING_NAME, bytes, TEMP_PREFIX, { durable: false });
      } catch (error) {
        if (generation === this.index.generation(label)) this.failed(label, LISTING_NAME, error);
        return false;
      }
      this.silencedWriteErrors.clear();
      return true;
    })();
    return this.hooks.track(job);
  }

  /** Logs a failed write once per error code until a write succeeds. */
  failed(label: string | undefined, what: string, error: unknown): void {
    const code = errorCode(error) ?? 'error';
    if (this.silencedWriteErrors.has(code)) return;
    this.silencedWriteErrors.add(code);
    this.log(
      `${label === undefined ? '' : `[${label}] `}disk cache: ${what}: cannot write (${withShownPaths(errorMessage(error))}); not cached, and further ${code} write errors are not logged until a write succeeds`,
    );
  }
}
