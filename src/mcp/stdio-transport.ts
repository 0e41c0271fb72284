// The SDK's stdio client transport with three repairs: a read buffer that is linear in the
// message size (the SDK's, v2 included, concatenates the whole buffer on every chunk, which
// is quadratic: seconds for a 16 MiB file), a closed stdout treated as a lost connection (the
// SDK notices only the process exiting), and a close that stops the server for certain (stdin
// closed, then SIGTERM, then SIGKILL, a short grace each) and resolves only once it is gone.
// Being a subclass also makes version negotiation probe in place instead of spawning a
// throwaway sibling server.
import { deserializeMessage, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/client/stdio';
import type { ChildProcess } from 'node:child_process';
import { LimitExceededError } from '../errors.js';
import { oversizeMessage } from './error-mapping.js';

const NEWLINE = 0x0a;

/** Splits a byte stream into newline-delimited JSON-RPC messages, each byte looked at once. */
export class LineReadBuffer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private readonly lines: Buffer[] = [];

  /** `onOversize` hears of a message refused for being over the limit (the append also throws). */
  constructor(
    private readonly maxMessageBytes: number,
    private readonly onOversize?: (reason: string) => void,
  ) {}

  append(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const tail = chunk.subarray(start, end);
      this.lines.push(this.pending.length === 0 ? tail : Buffer.concat([...this.pending, tail], this.pendingBytes + tail.length));
      this.pending = [];
      this.pendingBytes = 0;
      start = end + 1;
    }
    if (start === chunk.length) return;
    this.pendingBytes += chunk.length - start;
    if (this.pendingBytes > this.maxMessageBytes) {
      this.clear();
      const error = new LimitExceededError(oversizeMessage(this.maxMessageBytes));
      this.onOversize?.(error.message);
      throw error;
    }
    this.pending.push(chunk.subarray(start));
  }

  readMessage(): JSONRPCMessage | null {
    const line = this.lines.shift();
    if (line === undefined) return null;
    const end = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length;
    // A line that is not a JSON-RPC message throws: the transport reports it (onerror, logged
    // with the label and rate-limited) and goes on with the next line.
    return deserializeMessage(line.toString('utf8', 0, end));
  }

  clear(): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.lines.length = 0;
  }
}

/** How long each step of stopping a server may take before the next, harder one (default). */
export const DEFAULT_STOP_GRACE_MS = 1_000;

/** StdioClientTransport with a linear read buffer, stdout-end detection and a certain stop. */
export class RobustStdioClientTransport extends StdioClientTransport {
  private readonly stopGraceMs: number;
  private stopping: Promise<void> | undefined;

  constructor(server: StdioServerParameters & { maxBufferSize: number; stopGraceMs?: number; onOversize?: (reason: string) => void }) {
    super(server);
    this.stopGraceMs = server.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    // `_readBuffer` and `_process` are private in the SDK's typings; the lockfile pins the
    // version they exist in, and test/unit/stdio-transport.test.ts fails if they move.
    (this as unknown as { _readBuffer: LineReadBuffer })._readBuffer = new LineReadBuffer(server.maxBufferSize, server.onOversize);
  }

  override async start(): Promise<void> {
    await super.start();
    // A server that closes stdout but keeps running can never answer again: close (which
    // also stops the process) so the connection reconnects instead of timing out request by request.
    const child = (this as unknown as { _process?: ChildProcess })._process;
    child?.stdout?.once('end', () => void this.close().catch(() => undefined));
  }

  /** Stops the server for certain (see stopChild); every call waits for the same stop. */
  override close(): Promise<void> {
    this.stopping ??= this.stop();
    return this.stopping;
  }

  private async stop(): Promise<void> {
    const self = this as unknown as { _process?: ChildProcess; _readBuffer: LineReadBuffer };
    const child = self._process;
    // Taken from the SDK's own close, which waits 2 s twice and never waits after SIGKILL.
    self._process = undefined;
    if (child) await stopChild(child, this.stopGraceMs);
    self._readBuffer.clear();
  }
}

/**
 * Stops a server: stdin closed (a well-behaved server exits on its own), then SIGTERM, then
 * SIGKILL, each after `graceMs` without an exit; resolves once it has exited (or, should
 * even SIGKILL not be reaped, after one more grace). Waits for `exit`, never `close`: a
 * grandchild holding the pipes must not keep the daemon waiting.
 */
export async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const exited = hasExited() ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const within = async (ms: number) => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
    return hasExited();
  };
  try {
    child.stdin?.end();
  } catch {
    // Already closed: the signals below still apply.
  }
  if (await within(graceMs)) return;
  child.kill('SIGTERM');
  if (await within(graceMs)) return;
  child.kill('SIGKILL');
  await within(graceMs);
}
