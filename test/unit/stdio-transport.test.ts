import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineReadBuffer, RobustStdioClientTransport } from '../../src/mcp/stdio-transport.js';

const messages = fc.array(
  fc.record({ jsonrpc: fc.constant('2.0' as const), id: fc.nat(), result: fc.record({ text: fc.string({ maxLength: 200, unit: 'grapheme' }) }) }),
  { minLength: 1, maxLength: 8 },
);

describe('LineReadBuffer', () => {
  it('yields the same messages however the stream is cut into chunks', () => {
    fc.assert(
      fc.property(messages, fc.array(fc.nat(), { maxLength: 20 }), (sent, cuts) => {
        const stream = Buffer.from(sent.map((message) => `${JSON.stringify(message)}\n`).join(''), 'utf8');
        const points = [...new Set(cuts.map((cut) => cut % (stream.length + 1)))].sort((a, b) => a - b);
        const buffer = new LineReadBuffer(1 << 20);
        let previous = 0;
        for (const point of [...points, stream.length]) {
          buffer.append(stream.subarray(previous, point));
          previous = point;
        }
        const received = [];
        for (let message = buffer.readMessage(); message; message = buffer.readMessage()) received.push(message);
        expect(received).toEqual(sent);
      }),
    );
  });

  it('accepts CRLF line ends and refuses a message over the limit', () => {
    const buffer = new LineReadBuffer(64);
    buffer.append(Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}\r\n'));
    expect(buffer.readMessage()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(() => buffer.append(Buffer.alloc(65, 0x20))).toThrow(/64-byte limit/);
  });

  it('reads a 22 MB message arriving in 64 KiB chunks (a 16 MiB file as base64)', () => {
    const message = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { contents: [{ uri: 'skill://a/b', blob: 'A'.repeat(22_000_000) }] } });
    const stream = Buffer.from(`${message}\n`);
    const buffer = new LineReadBuffer(32 * 1024 * 1024);
    for (let offset = 0; offset < stream.length; offset += 65_536) buffer.append(stream.subarray(offset, offset + 65_536));
    expect((buffer.readMessage() as { id: number }).id).toBe(7);
    expect(buffer.readMessage()).toBeNull();
  });
});

describe('RobustStdioClientTransport', () => {
  it('installs its buffer in the SDK transport and round-trips through a real child', async () => {
    // `cat` echoes what we send: our request comes back as a message.
    const transport = new RobustStdioClientTransport({ command: 'cat', maxBufferSize: 1 << 20 });
    expect((transport as unknown as { _readBuffer: unknown })._readBuffer).toBeInstanceOf(LineReadBuffer);
    const received = new Promise((resolve) => {
      transport.onmessage = resolve;
    });
    await transport.start();
    expect((transport as unknown as { _process?: unknown })._process).toBeDefined();
    await transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(await received).toEqual({ jsonrpc: '2.0', id: 1, method: 'ping' });
    await transport.close();
  });

  it('closes when the child closes its stdout but keeps running', async () => {
    const transport = new RobustStdioClientTransport({ command: 'sh', args: ['-c', 'exec 1>&-; sleep 30'], maxBufferSize: 1 << 20 });
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    await transport.start();
    expect(transport.pid).toBeGreaterThan(0);
    const startedMs = performance.now();
    await closed;
    // Noticed at once (the child would sleep 30 s), and the child is gone with the transport.
    expect(performance.now() - startedMs).toBeLessThan(10_000);
    expect(transport.pid).toBeNull();
  });
});
