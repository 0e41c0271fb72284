// The --metrics endpoint under a flood, over real sockets on 127.0.0.1: hundreds of keep-alive
// clients asking /healthz at once all get their answer; a probe that comes while idle and
// slowloris connections hold every slot still gets its 200 at once; connections beyond what is
// served are answered or closed at once, never left hanging; /metrics work stays capped, and a
// client that does not read its answer loses its place at the deadline; and the mount's health
// check never runs twice at a time, whatever the flood.
import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MountHealth, startMetricsServer, type MetricsServer, type MetricsServerOptions, type ProbeOutcome } from '../../src/metrics/index.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Outcome = { kind: 'answered'; status: number; body: string; ms: number } | { kind: 'closed'; ms: number } | { kind: 'hung'; ms: number };

/** One GET; "hung" if nothing (neither an answer nor a close) came within `giveUpMs`, as a client with a deadline sees it. */
function get(url: string, options: { agent?: Agent | false; giveUpMs?: number } = {}): Promise<Outcome> {
  const startedAt = performance.now();
  const ms = () => Math.round(performance.now() - startedAt);
  return new Promise((resolve) => {
    const sent = httpRequest(url, { agent: options.agent ?? false }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ kind: 'answered', status: response.statusCode ?? 0, body, ms: ms() }));
      response.on('error', () => resolve({ kind: 'closed', ms: ms() }));
    });
    sent.setTimeout(options.giveUpMs ?? 20_000, () => {
      resolve({ kind: 'hung', ms: ms() });
      sent.destroy();
    });
    sent.on('error', () => resolve({ kind: 'closed', ms: ms() }));
    sent.end();
  });
}

function tally(outcomes: readonly Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) {
    const key = outcome.kind === 'answered' ? String(outcome.status) : outcome.kind;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

async function serve(options: Partial<MetricsServerOptions> = {}): Promise<MetricsServer> {
  const server = await startMetricsServer({
    host: '127.0.0.1',
    port: 0,
    metrics: async () => 'x_total 1\n',
    contentType: 'text/plain; version=0.0.4; charset=utf-8',
    health: async () => ({ healthy: true }),
    ...options,
  });
  cleanups.push(() => server.close());
  return server;
}

/** A mount's health with a probe that takes `probeMs` and counts how many run at once. */
function countedHealth(probeMs: number) {
  const counts = { probes: 0, running: 0, mostAtOnce: 0 };
  const health = new MountHealth({
    mountpoint: '/m',
    findMount: async () => ({ fsType: 'fuse.skills-mount', connection: '9' }),
    probe: async (): Promise<ProbeOutcome> => {
      counts.probes += 1;
      counts.running += 1;
      counts.mostAtOnce = Math.max(counts.mostAtOnce, counts.running);
      await new Promise((resolve) => setTimeout(resolve, probeMs));
      counts.running -= 1;
      return { kind: 'ok' };
    },
    probeTimeoutMs: 2_000,
  });
  health.mounted({ connection: '9' });
  return { health, counts };
}

/** `count` raw connections; each sends `send` (maybe nothing) once connected; resolves once every one is connected or closed. */
async function openConnections(url: string, count: number, send: string): Promise<{ sockets: Socket[]; closedCount: () => number }> {
  const { hostname, port } = new URL(url);
  let closed = 0;
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve) => {
          const socket = connect(Number(port), hostname);
          socket.on('error', () => undefined);
          socket.once('close', () => {
            closed += 1;
            resolve(socket);
          });
          socket.once('connect', () => {
            if (send !== '') socket.write(send);
            resolve(socket);
          });
        }),
    ),
  );
  cleanups.push(() => sockets.forEach((socket) => socket.destroy()));
  return { sockets, closedCount: () => closed };
}

describe('the metrics endpoint under a flood', () => {
  it('answers 400 concurrent keep-alive /healthz requests, every one 200, with one health check at a time', async () => {
    const { health, counts } = countedHealth(50);
    const server = await serve({ health: () => health.check() });
    const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
    cleanups.push(() => agent.destroy());
    const startedAt = performance.now();
    const outcomes = await Promise.all(Array.from({ length: 400 }, () => get(`${server.url}/healthz`, { agent })));
    expect(tally(outcomes)).toEqual({ 200: 400 });
    expect(performance.now() - startedAt).toBeLessThan(5_000);
    expect(counts.mostAtOnce).toBe(1);
    // And again on the same keep-alive connections.
    const again = await Promise.all(Array.from({ length: 400 }, () => get(`${server.url}/healthz`, { agent })));
    expect(tally(again)).toEqual({ 200: 400 });
    expect(counts.mostAtOnce).toBe(1);
  });

  it('keeps answering /healthz at once from its last check while a slow check runs, one check at a time', async () => {
    // A probe child that takes 1.5 s (a loaded machine): past the first, no request waits for one.
    const { health, counts } = countedHealth(1_500);
    const server = await serve({ health: () => health.check() });
    expect(await get(`${server.url}/healthz`)).toMatchObject({ kind: 'answered', status: 200 });
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    cleanups.push(() => agent.destroy());
    const startedAt = performance.now();
    let slowestMs = 0;
    while (performance.now() - startedAt < 4_000) {
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => get(`${server.url}/healthz`, { agent, giveUpMs: 5_000 })));
      expect(tally(outcomes)).toEqual({ 200: 50 });
      slowestMs = Math.max(slowestMs, ...outcomes.map((outcome) => outcome.ms));
    }
    expect(slowestMs).toBeLessThan(500);
    expect(counts.mostAtOnce).toBe(1);
    expect(counts.probes).toBeGreaterThanOrEqual(2);
    expect(counts.probes).toBeLessThanOrEqual(4);
  });

  it('answers a /healthz probe within a second while idle, silent and slowloris connections hold more than every slot', async () => {
    const server = await serve();
    // 200 kept alive after their answer, 200 that send nothing, 200 that send half a request head and stop there.
    const kept = await openConnections(server.url, 200, 'GET /healthz HTTP/1.1\r\nHost: flood\r\n\r\n');
    await Promise.all(kept.sockets.map((socket) => new Promise((resolve) => (socket.destroyed ? resolve(undefined) : socket.once('data', resolve).once('close', resolve)))));
    await openConnections(server.url, 200, '');
    await openConnections(server.url, 200, 'GET /metrics HTTP/1.1\r\nHost: flood\r\n');
    for (let i = 0; i < 3; i++) {
      const probe = await get(`${server.url}/healthz`, { giveUpMs: 5_000 });
      expect(probe).toMatchObject({ kind: 'answered', status: 200, body: 'ok\n' });
      expect(probe.ms).toBeLessThan(1_000);
    }
  });

  it('closes connections beyond what it can hold at once, never leaving one hanging', async () => {
    // No health answer yet and a check that takes 500 ms: every held connection waits for it.
    const { health, counts } = countedHealth(500);
    const server = await serve({ health: () => health.check() });
    const outcomes = await Promise.all(Array.from({ length: 700 }, () => get(`${server.url}/healthz`, { giveUpMs: 10_000 })));
    const counted = tally(outcomes);
    expect(counted['hung']).toBeUndefined();
    expect((counted['200'] ?? 0) + (counted['closed'] ?? 0)).toBe(700);
    expect(counted['200']).toBeGreaterThanOrEqual(400);
    for (const outcome of outcomes) expect(outcome.kind === 'closed' ? outcome.ms : 0).toBeLessThan(1_000);
    expect(counts.mostAtOnce).toBe(1);
  });

  it('cuts off a connection that does not send its request head in time, with a 408', async () => {
    const server = await serve({ limits: { headersTimeoutMs: 2_000 } });
    const startedAt = performance.now();
    const ends = ['', 'GET /healthz HTTP/1.1\r\nHost: slow\r\n'].map(async (send) => {
      const { sockets } = await openConnections(server.url, 1, send);
      let received = '';
      sockets[0]!.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
      await new Promise((resolve) => sockets[0]!.once('close', resolve));
      return { ms: performance.now() - startedAt, firstLine: received.split('\r\n')[0] };
    });
    for (const end of await Promise.all(ends)) {
      expect(end.firstLine).toBe('HTTP/1.1 408 Request Timeout');
      expect(end.ms).toBeGreaterThanOrEqual(1_900);
      expect(end.ms).toBeLessThan(4_500);
    }
  });

  it('makes at most 64 /metrics answers at once: the next is 503 at once, and /healthz is still answered', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let rendering = 0;
    const server = await serve({
      metrics: async () => {
        rendering += 1;
        await gate;
        return 'x_total 1\n';
      },
    });
    const held = Array.from({ length: 64 }, () => get(`${server.url}/metrics`));
    while (rendering < 64) await new Promise((resolve) => setTimeout(resolve, 10));
    const refused = await get(`${server.url}/metrics`, { giveUpMs: 5_000 });
    expect(refused).toMatchObject({ kind: 'answered', status: 503, body: 'busy: 64 answers to /metrics are being made; try again in a second\n' });
    expect(refused.ms).toBeLessThan(1_000);
    expect(rendering).toBe(64);
    expect(await get(`${server.url}/healthz`, { giveUpMs: 5_000 })).toMatchObject({ kind: 'answered', status: 200 });
    release();
    expect(tally(await Promise.all(held))).toEqual({ 200: 64 });
    expect(await get(`${server.url}/metrics`)).toMatchObject({ kind: 'answered', status: 200, body: 'x_total 1\n' });
  });

  it('closes the connection of a client that does not read its answer at the deadline, which frees its /metrics place', async () => {
    // 32 MiB: more than the socket buffers take, so the answer stays unsent while the client does not read.
    const large = `${'# padding\n'.repeat(3 << 20)}x_total 1\n`;
    const server = await serve({ metrics: async () => large, limits: { maxScrapes: 1, answerTimeoutMs: 1_500 } });
    const startedAt = performance.now();
    const { sockets } = await openConnections(server.url, 1, 'GET /metrics HTTP/1.1\r\nHost: stalled\r\n\r\n');
    const stalled = sockets[0]!;
    stalled.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await get(`${server.url}/metrics`, { giveUpMs: 5_000 })).toMatchObject({ kind: 'answered', status: 503 });
    let next: Outcome;
    do next = await get(`${server.url}/metrics`, { giveUpMs: 5_000 });
    while (next.kind === 'answered' && next.status === 503 && performance.now() - startedAt < 5_000);
    expect(next).toMatchObject({ kind: 'answered', status: 200 });
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(1_400);
    expect(performance.now() - startedAt).toBeLessThan(3_500);
    // The stalled client, reading again, finds its answer cut short and its connection closed.
    let received = 0;
    stalled.on('data', (chunk: Buffer) => (received += chunk.length));
    await new Promise((resolve) => (stalled.destroyed ? resolve(undefined) : stalled.once('close', resolve).resume()));
    expect(received).toBeLessThan(large.length);
  });
});
