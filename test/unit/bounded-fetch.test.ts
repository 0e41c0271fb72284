// The transports' fetch: what one response can cost is bounded (per JSON body, per event of
// an event stream), and an open GET event stream is reported while it lasts.
import { describe, expect, it } from 'vitest';
import { boundedFetch } from '../../src/mcp/bounded-fetch.js';

const respond = (body: ConstructorParameters<typeof Response>[0], contentType: string) => async () => new Response(body, { headers: { 'content-type': contentType } });

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

describe('bounded fetch', () => {
  it('a JSON body over the limit fails while being read; one within it passes whole', async () => {
    const small = boundedFetch({ maxMessageBytes: 1_000, fetch: respond('x'.repeat(1_000), 'application/json') });
    expect((await (await small('http://h/mcp')).text()).length).toBe(1_000);
    const large = boundedFetch({ maxMessageBytes: 1_000, fetch: respond('x'.repeat(1_001), 'application/json') });
    await expect((await large('http://h/mcp')).text()).rejects.toThrow(/exceeds the 1000-byte limit/);
  });

  it('an event stream is bounded per event, not in total', async () => {
    const events = Array.from({ length: 50 }, (_, i) => `data: ${'e'.repeat(80)}${i}\n\n`);
    const fetch = boundedFetch({ maxMessageBytes: 200, fetch: async () => new Response(streamOf(events), { headers: { 'content-type': 'text/event-stream' } }) });
    expect((await (await fetch('http://h/mcp', { method: 'POST' })).text()).length).toBeGreaterThan(4_000);
    const oneHuge = boundedFetch({ maxMessageBytes: 200, fetch: async () => new Response(streamOf(['data: ', 'x'.repeat(300), '\n\n']), { headers: { 'content-type': 'text/event-stream' } }) });
    await expect((await oneHuge('http://h/mcp', { method: 'POST' })).text()).rejects.toThrow(/exceeds the 200-byte limit/);
  });

  it('reports a GET event stream open while it lasts, and closed when it ends', async () => {
    const states: boolean[] = [];
    const fetch = boundedFetch({ maxMessageBytes: 1_000, onEventStream: (open) => states.push(open), fetch: async () => new Response(streamOf(['data: x\n\n']), { headers: { 'content-type': 'text/event-stream' } }) });
    const response = await fetch('http://h/mcp', { method: 'GET' });
    expect(states).toEqual([true]);
    await response.text();
    expect(states).toEqual([true, false]);
    // A POST's event stream is one request's answer, not a channel for change events.
    await (await fetch('http://h/mcp', { method: 'POST' })).text();
    expect(states).toEqual([true, false]);
  });
});
