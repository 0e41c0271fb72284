// Change events on revision 2026-07-28: one `subscriptions/listen` stream per connection,
// asking for list changes and for updates of the resources we care about. The filter is
// fixed per stream, so a grown set of URIs replaces the stream (new one first, then the old
// one closed); a stream the server drops is reopened with backoff.
import type { Client } from '@modelcontextprotocol/client';
import { escapeForLog } from '../format/escape.js';

type Subscription = Awaited<ReturnType<Client['listen']>>;

export interface ChangeListenerOptions {
  /** The server declared `resources.listChanged`. */
  listChanged: boolean;
  /** The server declared `resources.subscribe`. */
  subscribe: boolean;
  /** Deadline for the server's acknowledgement of a listen request. */
  timeoutMs: number;
  log: (line: string) => void;
  /** A stream opened again after a gap: events may have been missed. */
  onReopened: () => void;
  /** Debounce before a grown URI set replaces the stream. */
  regroupMs?: number;
  /** Most URIs in one filter. */
  maxUris?: number;
}

const MIN_REOPEN_MS = 1_000;
const MAX_REOPEN_MS = 30_000;

export class ChangeListener {
  private readonly uris = new Set<string>();
  private current: Subscription | undefined;
  private opening: Promise<void> | undefined;
  private regroupTimer: NodeJS.Timeout | undefined;
  private reopenTimer: NodeJS.Timeout | undefined;
  private reopenDelayMs = MIN_REOPEN_MS;
  private hadStream = false;
  private closed = false;

  constructor(
    private readonly client: Client,
    private readonly options: ChangeListenerOptions,
  ) {}

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
    this.reopenDelayMs = MIN_REOPEN_MS;
    if (this.hadStream && !previous) this.options.onReopened();
    this.hadStream = true;
    void next.closed.then((cause) => {
      if (this.current !== next) return;
      this.current = undefined;
      if (cause !== 'local' && !this.closed) this.scheduleReopen();
    });
    await previous?.close().catch(() => undefined);
  }

  private scheduleReopen(): void {
    if (this.closed || this.reopenTimer) return;
    const delayMs = this.reopenDelayMs;
    this.reopenDelayMs = Math.min(MAX_REOPEN_MS, delayMs * 2);
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = undefined;
      void this.open();
    }, delayMs);
    this.reopenTimer.unref();
  }
}
