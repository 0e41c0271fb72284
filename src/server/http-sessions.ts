// The open 2025 Streamable HTTP sessions, bounded: one idle for too long is closed, and at
// the cap the longest-idle one makes room. "Idle" means no request in flight and no open
// stream (a client holding its notification stream is never idle). Knows no MCP.
import type { Log } from '../log.js';

/** A 2025 session with nothing in flight for this long is closed (10 min). */
export const DEFAULT_SESSION_IDLE_MS = 10 * 60_000;
/** Most 2025 sessions open at once. */
export const DEFAULT_MAX_SESSIONS = 1000;

export interface SessionLimits {
  /** Close a session idle this long (default DEFAULT_SESSION_IDLE_MS). */
  idleMs?: number;
  /** Most sessions open at once (default DEFAULT_MAX_SESSIONS). */
  maxSessions?: number;
  /** Milliseconds on a monotonic clock; injected in tests. */
  now?: () => number;
}

interface Entry<T> {
  value: T;
  lastActiveMs: number;
  /** Requests in flight plus response streams still open. */
  busy: number;
}

/** Sessions by id, each closed by `close(value)` when it expires or makes room. */
export class SessionTable<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly idleMs: number;
  private readonly maxSessions: number;
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout;
  private reserved = 0;

  constructor(
    limits: SessionLimits,
    private readonly close: (value: T) => Promise<void>,
    private readonly log: Log,
  ) {
    this.idleMs = limits.idleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.maxSessions = limits.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.now = limits.now ?? (() => performance.now());
    // Expiry is checked a few times per idle period, at most every 30 s.
    this.timer = setInterval(() => this.sweep(), Math.min(Math.max(this.idleMs / 4, 10), 30_000));
    this.timer.unref();
  }

  get size(): number {
    return this.entries.size;
  }

  get(id: string): T | undefined {
    return this.entries.get(id)?.value;
  }

  values(): T[] {
    return [...this.entries.values()].map((entry) => entry.value);
  }

  /**
   * Holds a place for a session about to open: closes expired ones, and at the cap the one
   * idle the longest. False when every open session is busy: the caller refuses the new one.
   * A reservation is used by `add`, or given back by `unreserve`.
   */
  reserve(): boolean {
    this.sweep();
    if (this.entries.size + this.reserved >= this.maxSessions) {
      let oldest: [string, Entry<T>] | undefined;
      for (const pair of this.entries) if (pair[1].busy === 0 && (oldest === undefined || pair[1].lastActiveMs < oldest[1].lastActiveMs)) oldest = pair;
      if (oldest === undefined) return false;
      const idleS = Math.round((this.now() - oldest[1].lastActiveMs) / 1000);
      this.drop(oldest[0], `closed to make room: ${this.maxSessions} sessions open, the most allowed; it was idle the longest (${idleS} s)`);
    }
    this.reserved++;
    return true;
  }

  unreserve(): void {
    this.reserved = Math.max(0, this.reserved - 1);
  }

  /** Adds a session opened on a reservation, busy with the request that opened it until the returned function is called. */
  add(id: string, value: T): () => void {
    this.unreserve();
    this.entries.set(id, { value, lastActiveMs: this.now(), busy: 0 });
    return this.enter(id);
  }

  /** Forgets a session that closed by itself; true when it was open. */
  delete(id: string): boolean {
    return this.entries.delete(id);
  }

  /** Marks the session busy until the returned function is called (once). */
  enter(id: string): () => void {
    const entry = this.entries.get(id);
    if (entry === undefined) return () => {};
    entry.busy++;
    entry.lastActiveMs = this.now();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      entry.busy--;
      entry.lastActiveMs = this.now();
    };
  }

  /** Stops the expiry timer; the caller closes the sessions. */
  stop(): void {
    clearInterval(this.timer);
    this.entries.clear();
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, entry] of this.entries) {
      if (entry.busy === 0 && now - entry.lastActiveMs >= this.idleMs) this.drop(id, `expired after ${Math.round((now - entry.lastActiveMs) / 1000)} s idle`);
    }
  }

  private drop(id: string, why: string): void {
    const entry = this.entries.get(id)!;
    this.entries.delete(id);
    this.log(`session ${id} ${why} (${this.entries.size} open)`);
    void this.close(entry.value).catch((error: unknown) => this.log(`session ${id}: closing failed: ${(error as Error).message}`));
  }
}

/** `response` with a body that calls `done` once it ends, fails or is cancelled. */
export function untilBodyEnds(response: Response, done: () => void): Response {
  if (response.body === null) {
    done();
    return response;
  }
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          done();
          controller.close();
        } else {
          controller.enqueue(chunk.value);
        }
      } catch (error) {
        done();
        controller.error(error);
      }
    },
    cancel(reason) {
      done();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
