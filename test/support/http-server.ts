// HTTP servers as child processes: the built `skills-serve --http` (or another script that
// prints "listening on URL" to stderr), started, waited for until it listens, and stopped.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { stopChild, type ChildExit, type StopOptions } from './children.js';

/** The built reference server (needs `npm run build`). */
export const SKILLS_SERVE = fileURLToPath(new URL('../../dist/cli/skills-serve.js', import.meta.url));

export interface ListeningServer {
  readonly child: ChildProcess;
  /** The URL the server printed, e.g. http://127.0.0.1:PORT/mcp. */
  readonly url: string;
  /** Everything the server wrote to stderr so far. */
  log(): string;
  /** SIGTERM (or `signal`), then SIGKILL after the grace; resolves how it exited. */
  stop(options?: StopOptions): Promise<ChildExit>;
}

export interface ListenOptions {
  /** How long the server may take to say it listens (default 15 s); then it is stopped. */
  timeoutMs?: number;
  /** The server's whole environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

/** Spawns `node ...args` and resolves once its stderr says "listening on http://…". */
export async function startListening(args: string[], { timeoutMs = 15_000, env }: ListenOptions = {}): Promise<ListeningServer> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`${args[0]} printed no URL within ${timeoutMs} ms; stderr:\n${stderr}`));
      void stopChild(child);
    }, timeoutMs);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited (${code ?? signal}) before listening; stderr:\n${stderr}`));
    });
  });
  return { child, url, log: () => stderr, stop: (options) => stopChild(child, options) };
}

/** `skills-serve ...args --http 127.0.0.1:PORT`; PORT 0 (the default) lets the OS pick a free one. */
export function startHttpServe(args: string[], { port = 0, ...options }: ListenOptions & { port?: number } = {}): Promise<ListeningServer> {
  return startListening([SKILLS_SERVE, ...args, '--http', `127.0.0.1:${port}`], options);
}

/** A TCP port that was free a moment ago: for a server that must come back on the same port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
