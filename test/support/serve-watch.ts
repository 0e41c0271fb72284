// `skills-mount serve` as a test runs it: the built CLI as a child process in a person's HOME, over
// Streamable HTTP (the URL it prints on stdout awaited) or stdio (an SDK client starts it), and
// connected clients that count the list-changed notifications they get, in either era.
import { spawn } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { exitOf, stopChild, type ChildExit } from './children.js';
import { connectHttp, listAllSkills, newClient, type ClientEra, type Entry } from './server-harness.js';
import { SKILLS_MOUNT, type Person } from './team-lock-world.js';

export interface RunningServe {
  /** http://127.0.0.1:PORT/mcp */
  url: string;
  /** Everything it wrote to stderr so far. */
  log(): string;
  stop(): Promise<ChildExit>;
}

/** `skills-mount serve ARGS --http 127.0.0.1:0` as `who`; resolves once it printed its URL (rejects, stopping it, after `timeoutMs`). */
export async function startServe(who: Person, args: readonly string[], { timeoutMs = 20_000, http = '127.0.0.1:0' } = {}): Promise<RunningServe> {
  const child = spawn(process.execPath, [SKILLS_MOUNT, 'serve', ...args, '--http', http], { env: who.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stopChild(child);
      reject(new Error(`serve printed no URL within ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    // The URL on stdout, and the log line that says how it listens (it follows the URL).
    const check = (): void => {
      const match = /^(http:\/\/\S+)\n/m.exec(stdout);
      if (match && stderr.includes(`listening on ${match[1]}`)) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      check();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      check();
    });
    void exitOf(child).then((exit) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${exit.code ?? exit.signal}) before listening:\n${stderr}`));
    });
  });
  return { url, log: () => stderr, stop: () => stopChild(child) };
}

/** A connected client and what it was told: list-changed notifications, with when each came. */
export interface Watching {
  client: Client;
  /** Times (Date.now()) of each notifications/resources/list_changed. */
  changes: number[];
  /** Its server's stderr (stdio only; HTTP: the serve's own log). */
  log(): string;
  close(): Promise<void>;
}

function watch(client: Client, log: () => string, close: () => Promise<void>): Watching {
  const changes: number[] = [];
  client.setNotificationHandler('notifications/resources/list_changed', () => {
    changes.push(Date.now());
  });
  return { client, changes, log, close };
}

/** A client of `url` in `era`; a 2026-07-28 one listens for list changes (a 2025 session gets them on its GET stream). */
export async function watchHttp(url: string, era: ClientEra): Promise<Watching> {
  const client = await connectHttp(url, era);
  const listens: Array<{ close(): Promise<void> }> = [];
  const watching = watch(
    client,
    () => '',
    async () => {
      await Promise.allSettled(listens.map((listen) => listen.close()));
      await client.close();
    },
  );
  if (era === 'modern') listens.push(await client.listen({ resourcesListChanged: true }));
  return watching;
}

/** `skills-mount serve ARGS` on stdio as `who`, started by an SDK client in `era`. */
export async function watchStdio(who: Person, args: readonly string[], era: ClientEra): Promise<Watching> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [SKILLS_MOUNT, 'serve', ...args], env: who.env as Record<string, string>, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = newClient(era);
  await client.connect(transport);
  const listens: Array<{ close(): Promise<void> }> = [];
  const watching = watch(
    client,
    () => stderr,
    async () => {
      await Promise.allSettled(listens.map((listen) => listen.close()));
      await client.close();
    },
  );
  if (era === 'modern') listens.push(await client.listen({ resourcesListChanged: true }));
  return watching;
}

/** The served skills' URIs, sorted. */
export async function servedUris(client: Client): Promise<string[]> {
  return (await listAllSkills(client)).skills.map((skill) => skill.uri).sort();
}

/** How long after a change a client was told (list_changed) and saw it (skills/list). */
export interface Followed {
  notifiedMs: number;
  listedMs: number;
}

/**
 * Runs `act`, then resolves, for each of `watchers`, how long after `act` ended it got a
 * list-changed notification and skills/list satisfied `done` (a notification that came while
 * `act` ran counts as 0 ms); throws after `timeoutMs`, saying what each client last saw.
 */
export async function timeFollowing(watchers: readonly Watching[], act: () => Promise<unknown>, done: (skills: Entry[]) => boolean, timeoutMs = 5_000): Promise<Followed[]> {
  const seen = watchers.map((watching) => watching.changes.length);
  await act();
  const since = Date.now();
  return Promise.all(
    watchers.map(async (watching, i) => {
      let listedMs: number | undefined;
      let last: Entry[] = [];
      while (Date.now() - since < timeoutMs) {
        if (listedMs === undefined) {
          last = (await listAllSkills(watching.client)).skills;
          if (done(last)) listedMs = Date.now() - since;
        }
        if (listedMs !== undefined && watching.changes.length > seen[i]!) return { notifiedMs: Math.max(0, watching.changes[seen[i]!]! - since), listedMs };
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const listed = last.map((skill) => `${skill.uri} ${skill.resources[0]?.digest}`);
      throw new Error(`client ${i}, within ${timeoutMs} ms: ${watching.changes.length - seen[i]!} list_changed, skills/list ${JSON.stringify(listed)}\n${watching.log()}`);
    }),
  );
}

/** A `done` for timeFollowing: skills/list gives exactly these URIs. */
export function listing(...uris: string[]): (skills: Entry[]) => boolean {
  const expected = JSON.stringify([...uris].sort());
  return (skills) => JSON.stringify(skills.map((skill) => skill.uri).sort()) === expected;
}

/** The bytes the gateway serves for `uri` now: read past the client's own cache (its ttlMs would answer from what it read before). */
export async function servedBytes(client: Client, uri: string): Promise<string> {
  const content = (await client.readResource({ uri }, { cacheMode: 'bypass' })).contents[0]!;
  return 'text' in content && typeof content.text === 'string' ? content.text : Buffer.from((content as { blob: string }).blob, 'base64').toString('utf8');
}
