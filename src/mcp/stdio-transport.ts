// The SDK's stdio client transport with two repairs: a read buffer that is linear in the
// message size (the SDK's, v2 included, concatenates the whole buffer on every chunk, which
// is quadratic: seconds for a 16 MiB file), and a closed stdout treated as a lost
// connection (the SDK notices only the process exiting). Being a subclass also makes
// version negotiation probe in place instead of spawning a throwaway sibling server.
import { deserializeMessage, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/client/stdio';
import type { ChildProcess } from 'node:child_process';

const NEWLINE = 0x0a;

/** Splits a byte stream into newline-delimited JSON-RPC messages, each byte looked at once. */
export class LineReadBuffer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private readonly lines: Buffer[] = [];

  constructor(private readonly maxMessageBytes: number) {}

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
      throw new Error(`message exceeds the ${this.maxMessageBytes}-byte limit`);
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

/** StdioClientTransport with a linear read buffer and stdout-end detection. */
export class RobustStdioClientTransport extends StdioClientTransport {
  constructor(server: StdioServerParameters & { maxBufferSize: number }) {
    super(server);
    // `_readBuffer` and `_process` are private in the SDK's typings; the lockfile pins the
    // version they exist in, and test/unit/stdio-transport.test.ts fails if they move.
    (this as unknown as { _readBuffer: LineReadBuffer })._readBuffer = new LineReadBuffer(server.maxBufferSize);
  }

  override async start(): Promise<void> {
    await super.start();
    // A server that closes stdout but keeps running can never answer again: close (which
    // also stops the process) so the connection reconnects instead of timing out request by request.
    const child = (this as unknown as { _process?: ChildProcess })._process;
    child?.stdout?.once('end', () => void this.close().catch(() => undefined));
  }
}
