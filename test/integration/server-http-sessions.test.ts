// skills-serve's 2025 HTTP sessions are bounded: an idle one expires, at the cap the one idle
// the longest makes room, and a session with its notification stream open is never idle.
import { request, type ClientRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { serveHttp, SkillsService, SkillTree, type HttpServing, type SessionLimits } from '../../src/server/index.js';
import { EXAMPLES } from '../support/server-harness.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } };

let stopServer: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stopServer?.();
  stopServer = undefined;
});

async function serve(sessions: SessionLimits): Promise<{ serving: HttpServing; logs: string[] }> {
  const logs: string[] = [];
  const tree = await SkillTree.open({ root: EXAMPLES, watch: false });
  const service = new SkillsService(tree, { log: (line) => logs.push(line) });
  const serving = await serveHttp({ service, host: '127.0.0.1', port: 0, sessions });
  stopServer = async () => {
    await serving.close();
    service.close();
    tree.close();
  };
  return { serving, logs };
}

/** Opens a session as a 2025 client does (initialize, then initialized); its id. */
async function open(url: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) });
  await response.text();
  const id = response.headers.get('mcp-session-id');
  if (response.status !== 200 || id === null) throw new Error(`initialize: HTTP ${response.status}`);
  const initialized = await post(url, id, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (initialized.status !== 202) throw new Error(`initialized: HTTP ${initialized.status}`);
  return id;
}

async function post(url: string, id: string, message: unknown): Promise<{ status: number; body: string }> {
  const response = await fetch(url, { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify(message) });
  return { status: response.status, body: await response.text() };
}

/** HTTP status of a ping in session `id`: 200 while it is open, 404 once the server forgot it. */
async function ping(url: string, id: string): Promise<number> {
  return (await post(url, id, { jsonrpc: '2.0', id: 2, method: 'ping' })).status;
}

/** The session's GET stream of notifications, held open until `close`. */
function holdStream(url: string, id: string): Promise<{ close(): void }> {
  return new Promise((resolve, reject) => {
    const req: ClientRequest = request(url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET stream: HTTP ${res.statusCode}`));
      res.resume();
      resolve({ close: () => req.destroy() });
    });
    req.on('error', () => {});
    req.end();
  });
}

describe('the cap on 2025 sessions', () => {
  it('closes the session idle the longest to make room; it answers 404, the others work', async () => {
    const { serving, logs } = await serve({ maxSessions: 3 });
    const [a, b, c] = [await open(serving.url), await open(serving.url), await open(serving.url)];
    expect(await ping(serving.url, a)).toBe(200); // a was used last: b is now idle the longest
    const d = await open(serving.url);
    expect(serving.sessionCount()).toBe(3);
    expect(await ping(serving.url, b)).toBe(404);
    for (const id of [a, c, d]) expect(await ping(serving.url, id)).toBe(200);
    expect(logs.some((line) => line.includes(`session ${b} closed to make room: 3 sessions open`))).toBe(true);
    // Those pings made a the one idle the longest.
    const e = await open(serving.url);
    expect(await ping(serving.url, a)).toBe(404);
    for (const id of [c, d, e]) expect(await ping(serving.url, id)).toBe(200);
  });

  it('never closes a session holding its notification stream: with all busy, a new one gets 503', async () => {
    const { serving } = await serve({ maxSessions: 2 });
    const a = await open(serving.url);
    const b = await open(serving.url);
    const streams = [await holdStream(serving.url, a), await holdStream(serving.url, b)];
    const refused = await fetch(serving.url, { method: 'POST', headers: HEADERS, body: JSON.stringify(INIT) });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringContaining('Too many sessions') } });
    expect(await ping(serving.url, a)).toBe(200);
    expect(await ping(serving.url, b)).toBe(200);
    // a's stream ends (its client went away): a is idle now and makes room.
    streams[0]!.close();
    await expect.poll(() => open(serving.url).then(() => true, () => false), { timeout: 5000 }).toBe(true);
    expect(await ping(serving.url, a)).toBe(404);
    expect(await ping(serving.url, b)).toBe(200);
    streams[1]!.close();
  });
});

describe('idle 2025 sessions', () => {
  it('expire after the idle time, unless their notification stream is open', async () => {
    const { serving, logs } = await serve({ idleMs: 300 });
    const idle = await open(serving.url);
    const used = await open(serving.url);
    const streaming = await open(serving.url);
    const stream = await holdStream(serving.url, streaming);
    const started = Date.now();
    while (Date.now() - started < 1000) {
      expect(await ping(serving.url, used)).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await ping(serving.url, idle)).toBe(404);
    expect(await ping(serving.url, used)).toBe(200);
    expect(await ping(serving.url, streaming)).toBe(200);
    expect(serving.sessionCount()).toBe(2);
    expect(logs.some((line) => line.includes(`session ${idle} expired after`))).toBe(true);
    stream.close();
  });

  it('are counted by the clock given: 10 minutes idle by default', async () => {
    let nowMs = 0;
    const { serving } = await serve({ now: () => nowMs });
    const a = await open(serving.url);
    nowMs += 9 * 60_000;
    const b = await open(serving.url);
    nowMs += 61_000; // a idle 10 min 1 s, b 1 min 1 s
    const c = await open(serving.url); // opening a session sweeps expired ones
    expect(serving.sessionCount()).toBe(2);
    expect(await ping(serving.url, a)).toBe(404);
    expect(await ping(serving.url, b)).toBe(200);
    expect(await ping(serving.url, c)).toBe(200);
  });
});
