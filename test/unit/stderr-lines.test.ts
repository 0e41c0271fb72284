// A server's stderr as log lines: bounded per line and per second, escaped.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LineLimitedReader } from '../../src/mcp/stderr-lines.js';

function reader(limits = { maxLineBytes: 16, maxLinesPerWindow: 3, windowMs: 1_000 }) {
  const stream = new PassThrough();
  const lines: string[] = [];
  const clock = { nowMs: 0 };
  const lineReader = new LineLimitedReader(stream, (line) => lines.push(line), limits, () => clock.nowMs);
  return { lineReader, lines, clock };
}

describe('server stderr lines', () => {
  it('a line without a newline costs a bounded buffer: the first bytes are kept, the rest counted', () => {
    const { lineReader, lines } = reader();
    for (let i = 0; i < 1_000; i++) lineReader.push(Buffer.alloc(64 * 1024, 0x61));
    lineReader.push(Buffer.from('\n'));
    expect(lines).toEqual([`${'a'.repeat(16)} ... (${64 * 1024 * 1000 - 16} more bytes of this line not shown)`]);
  });

  it('more lines than the rate allows are dropped and counted, once per window', () => {
    const { lineReader, lines, clock } = reader();
    for (let i = 0; i < 10; i++) lineReader.push(Buffer.from(`line ${i}\n`));
    expect(lines).toEqual(['line 0', 'line 1', 'line 2']);
    clock.nowMs = 1_500;
    lineReader.push(Buffer.from('later\n'));
    expect(lines.slice(3)).toEqual(['(7 more lines not shown: over 3 lines per 1000 ms)', 'later']);
  });

  it('escapes what could forge a line for another label', () => {
    const { lineReader, lines } = reader({ maxLineBytes: 200, maxLinesPerWindow: 10, windowMs: 1_000 });
    lineReader.push(Buffer.from('ok\rskills-mount: [other] connected\u2028x\n'));
    expect(lines).toEqual(['ok\\u000dskills-mount: [other] connected\\u2028x']);
  });
});
