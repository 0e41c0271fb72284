// A server's stderr as log lines it cannot abuse: each line capped in length (a server that
// never writes a newline costs a bounded buffer, not the daemon), lines rate-limited per
// server with the drop counted, every line escaped.
import type { Readable } from 'node:stream';
import { escapeForLog } from '../format/escape.js';

export interface LineLimits {
  /** Longest line kept; the rest, up to the next newline, is counted and dropped. */
  maxLineBytes: number;
  /** Lines logged per window; more are dropped and counted. */
  maxLinesPerWindow: number;
  windowMs: number;
}

export const DEFAULT_LINE_LIMITS: LineLimits = { maxLineBytes: 4096, maxLinesPerWindow: 100, windowMs: 1000 };

const NEWLINE = 0x0a;

/** Reads `stream` to its end, handing `emit` one escaped, bounded line at a time. */
export class LineLimitedReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private cutBytes = 0;
  private windowStartMs = 0;
  private linesInWindow = 0;
  private dropped = 0;

  constructor(
    stream: Readable,
    private readonly emit: (line: string) => void,
    private readonly limits: LineLimits = DEFAULT_LINE_LIMITS,
    private readonly now: () => number = () => performance.now(),
  ) {
    stream.on('data', (chunk: Buffer) => this.push(chunk));
    stream.on('end', () => this.flush());
    stream.on('error', () => this.flush());
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      this.keep(chunk.subarray(start, end));
      this.finishLine();
      start = end + 1;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  /** Emits what is buffered as a last line. */
  flush(): void {
    if (this.pendingBytes > 0 || this.cutBytes > 0) this.finishLine();
    this.reportDropped();
  }

  private keep(part: Buffer): void {
    const room = this.limits.maxLineBytes - this.pendingBytes;
    if (part.length <= room) {
      if (part.length > 0) this.pending.push(part);
      this.pendingBytes += part.length;
      return;
    }
    if (room > 0) this.pending.push(part.subarray(0, room));
    this.pendingBytes += Math.max(room, 0);
    this.cutBytes += part.length - Math.max(room, 0);
  }

  private finishLine(): void {
    const text = Buffer.concat(this.pending, this.pendingBytes).toString('utf8').replace(/\r$/, '');
    const cut = this.cutBytes;
    this.pending = [];
    this.pendingBytes = 0;
    this.cutBytes = 0;
    const nowMs = this.now();
    if (nowMs - this.windowStartMs >= this.limits.windowMs) {
      this.reportDropped();
      this.windowStartMs = nowMs;
      this.linesInWindow = 0;
    }
    if (this.linesInWindow >= this.limits.maxLinesPerWindow) {
      this.dropped += 1;
      return;
    }
    this.linesInWindow += 1;
    this.emit(`${escapeForLog(text)}${cut > 0 ? ` ... (${cut} more bytes of this line not shown)` : ''}`);
  }

  private reportDropped(): void {
    if (this.dropped === 0) return;
    const dropped = this.dropped;
    this.dropped = 0;
    this.emit(`(${dropped} more lines not shown: over ${this.limits.maxLinesPerWindow} lines per ${this.limits.windowMs} ms)`);
  }
}
