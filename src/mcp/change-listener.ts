// Change events on revision 2026-07-28: one `subscriptions/listen` stream per connection,
// asking for list changes and for updates of the resources we care about. The filter is
// fixed per stream, so a grown set of URIs replaces the stream (new one first, then the old
// one closed); a stream the server drops is reopened with backoff. The backoff starts over
// only after a stream stayed open a while, and reopening re-lists at most once a window, so a
// server that acknowledges each listen and drops it at once costs a few requests, not a loop.
import type { Client } from '@modelcontextprotocol/client';
import { escapeForLog } from '../format/escape.js';

type Subscription = Awaited<ReturnType<Client['listen']>>;

/** How a dropped stream is reopened (each has a default below). */
export interface ListenTimings {
  /** First delay before reopening a dropped stream; doubles with every drop (default 1 s). */
  minReopenMs?: number;
  /** Cap on that delay (default 30 s). */
  maxReopenMs?: number;
  /** A stream that stayed open this long starts the backoff over (default 30 s). */
  stableAfterMs?: number;
  /** Reopened streams re-list at most once in this long (default 30 s); later reopens within it share one trailing re-listing. */
  relistIntervalMs?: number;
}

export interface ChangeListenerOptions extends ListenTimings {
  /** The server declared `resources.listChanged`. */
  listChanged: boolean;
  /** The server declared `resources.subscribe`. */
  subscribe: boolean;
  /** Deadline for the server's acknowledgement of a listen request. */
  timeoutMs: number;
  log: (line: string) => void;
  /** A stream opened again after a gap: events may have been missed (called at most once a relistIntervalMs). */
  onReopened: () => void;
  /** Debounce before a grown URI set replaces the stream. */
  regroupMs?: number;
  /** Most URIs in one filter. */
  maxUris?: number;
}

const DEFAULT_TIMINGS = { minReopenMs: 1_000, maxReopenMs: 30_000, stableAfterMs: 30_000, relistIntervalMs: 30_000 } as const;

export class ChangeListener {
  private readonly uris = new Set<string>();
  private current: Subscription | undefined;
  private opening: Promise<void> | undefined;
  private regroupTimer: NodeJS.Timeout | undefined;
  private reopenTimer: NodeJS.Timeout | undefined;
  private reopenDelayMs: number;
  private hadStream = false;
  private closed = false;
  private readonly timings: Required<ListenTimings>;
  private relistedAtMs = Number.NEGATIVE_INFINITY;
  private relistTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: Client,
    private readonly options: ChangeListenerOptions,
  ) {
    this.timings = {
      minReopenMs: options.minReopenMs ?? DEFAULT_TIMINGS.minReopenMs,
      maxReopenMs: options.maxReopenMs ?? DEFAULT_TIMINGS.maxReopenMs,
      stableAfterMs: options.stableAfterMs ?? DEFAULT_TIMINGS.stableAfterMs,
      relistIntervalMs: options.relistIntervalMs ?? DEFAULT_TIMINGS.relistIntervalMs,
    };
    this.reopenDelayMs = this.timings.minReopenMs;
  }

  start(): void {
    void this.open();
  }

  /** True while a stream is open that the server acknowledged. */
  isListening(): boolean {
    return this.current !== undefined;
  }

  /** Adds `uri` to the update filter (the stream is replaced shortly, once per burst). */
  want(uri: string): void {
    if (!this.options.subscribe || this.uris.has(uri) || this.uris.size >= (this.options.maxUris ?? 10_000)) return;
    this.uris.add(uri);
    if (this.closed || this.regroupTimer) return;
    this.regroupTimer = setTimeout(() => {
      this.regroupTimer = undefined;
      void this.open();
    }, this.options.regroupMs ?? 250);
    this.regroupTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.regroupTimer);
    clearTimeout(this.reopenTimer);
    clearTimeout(this.relistTimer);
    const current = this.current;
    this.current = undefined;
    await current?.close().catch(() => undefined);
  }

  private open(): Promise<void> {
    // One open at a time; a want() during it schedules the next.
    this.opening ??= this.openOnce().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private async openOnce(): Promise<void> {
    if (this.closed) return;
    const filter = {
      ...(this.options.listChanged ? { resourcesListChanged: true } : {}),
      ...(this.options.subscribe && this.uris.size > 0 ? { resourceSubscriptions: [...this.uris] } : {}),
    };
    let next: Subscription;
    try {
      next = await this.client.listen(filter, { timeout: this.options.timeoutMs });
    } catch (error) {
      this.options.log(`subscriptions/listen failed: ${escapeForLog((error as Error).message)}; change events rely on re-listing`);
      this.scheduleReopen();
      return;
    }
    if (this.closed) {
      await next.close().catch(() => undefined);
      return;
    }
    const previous = this.current;
    this.current = next;
    const openedAtMs = performance.now();
    if (this.hadStream && !previous) this.reopened();
    this.hadStream = true;
    void next.closed.then((cause) => {
      if (this.current !== next) return;
      this.current = undefined;
      // An acknowledgement proves little: only a stream that lasted starts the backoff over.
      if (performance.now() - openedAtMs >= this.timings.stableAfterMs) this.reopenDelayMs = this.timings.minReopenMs;
      if (cause !== 'local' && !this.closed) this.scheduleReopen();
    });
    await previous?.close().catch(() => undefined);
  }

  /**
   * Events may have been missed while no stream was open: re-list, at once when none was asked
   * for within relistIntervalMs, else once at the end of that window for every reopen inside it.
   */
  private reopened(): void {
    if (this.relistTimer) return;
    const waitMs = this.relistedAtMs + this.timings.relistIntervalMs - performance.now();
    const relist = () => {
      this.relistTimer = undefined;
      if (this.closed) return;
      this.relistedAtMs = performance.now();
      this.options.onReopened();
    };
    if (waitMs <= 0) return relist();
    this.relistTimer = setTimeout(relist, waitMs);
    this.relistTimer.unref();
  }

  private scheduleReopen(): void {
    if (this.closed || this.reopenTimer) return;
    const delayMs = this.reopenDelayMs;
    this.reopenDelayMs = Math.min(this.timings.maxReopenMs, delayMs * 2);
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = undefined;
      void this.open();
    }, delayMs);
    this.reopenTimer.unref();
  }
}
