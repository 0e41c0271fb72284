// The --metrics HTTP endpoint (node:http, nothing else): GET /metrics in the Prometheus text
// format and GET /healthz (200 "ok" and a line per note, or 503 with the reason in one line). It serves what it is
// given and knows nothing of mounts or servers; it never keeps the daemon alive on its own.
// A flood cannot starve /healthz: the cap on work is on /metrics answers, not on connections,
// and idle or slow connections give way to new ones.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ConfigError } from '../errors.js';
import { ConnectionSlots } from './connection-slots.js';
import type { HealthReport } from './mount-health.js';

export interface MetricsServerOptions {
  host: string;
  /** 0 lets the system choose (tests); the URL says which. */
  port: number;
  metrics: () => Promise<string>;
  /** The Content-Type of `metrics()`'s text. */
  contentType: string;
  /** Answered for every /healthz request: it must be cheap (MountHealth answers from its last check). */
  health: () => Promise<HealthReport>;
  /** The bounds below, for tests; the defaults otherwise. */
  limits?: Partial<MetricsServerLimits>;
}

export interface MetricsServerLimits {
  /** Connections held at once (default 512); at the bound a new one takes an idle or waiting one's place. */
  maxConnections: number;
  /** /metrics answers being made at once (default 64); a request beyond them is answered 503 at once. */
  maxScrapes: number;
  /** How long a client has to send its request head, counted from its connection (default 10 s). */
  headersTimeoutMs: number;
  /** How long an answer may take to be made and taken, from its request (default 15 s); then its connection is closed. */
  answerTimeoutMs: number;
}

export interface MetricsServer {
  /** http://HOST:PORT, no path. */
  readonly url: string;
  /** The address it listens on, as the system resolved the host (0.0.0.0 for every IPv4 address). */
  readonly address: string;
  close(): Promise<void>;
}

const TEXT = 'text/plain; charset=utf-8';
const ALLOWED_METHODS = 'GET, HEAD';
const DEFAULT_LIMITS: MetricsServerLimits = { maxConnections: 512, maxScrapes: 64, headersTimeoutMs: 10_000, answerTimeoutMs: 15_000 };
/** Once a request head is in, the rest of the request (a GET has none) may take this much more. */
const REQUEST_BODY_MS = 5_000;
/** How often node:http looks for connections past their deadline (its default, 30 s, quadruples a 10 s deadline). */
const DEADLINE_CHECK_MS = 1_000;

type Answer = { status: number; type: string; body: string; headers?: Record<string, string> };

/** Listens on host:port; a port in use, a privileged port or an address not of this host is a ConfigError naming it. */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const slots = new ConnectionSlots(limits.maxConnections);
  let scrapes = 0;
  const routes: Record<string, (response: ServerResponse) => Promise<Answer>> = {
    '/metrics': async (response) => {
      if (scrapes >= limits.maxScrapes) {
        const body = `busy: ${limits.maxScrapes} answers to /metrics are being made; try again in a second\n`;
        return { status: 503, type: TEXT, body, headers: { 'Retry-After': '1', Connection: 'close' } };
      }
      // Counted until the answer is sent or given up: a client that does not read it holds its
      // place until the answer's deadline.
      scrapes += 1;
      response.once('close', () => (scrapes -= 1));
      return { status: 200, type: options.contentType, body: await options.metrics() };
    },
    '/healthz': async () => {
      const report = await options.health();
      if (!report.healthy) return { status: 503, type: TEXT, body: `${oneLine(report.reason)}\n` };
      // Still 200: a server waiting for a sign-in does not make the mount unhealthy (a restart would not sign in).
      return { status: 200, type: TEXT, body: `ok\n${(report.notes ?? []).map((note) => `${oneLine(note)}\n`).join('')}` };
    },
  };
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.headersTimeoutMs + REQUEST_BODY_MS,
      connectionsCheckingInterval: Math.min(DEADLINE_CHECK_MS, limits.headersTimeoutMs),
    },
    (request, response) => {
      const socket = request.socket;
      slots.answering(socket);
      // A client that stops reading would hold its connection, and a /metrics place, for ever.
      const deadline = setTimeout(() => socket.destroy(), limits.answerTimeoutMs).unref();
      response.once('close', () => {
        clearTimeout(deadline);
        slots.answered(socket);
      });
      void answer(routes, request, response);
    },
  );
  // Not server.maxConnections: it closes the newest connection, even a probe, while idle ones hold every slot.
  server.on('connection', (socket: Socket) => slots.admit(socket));
  const shown = `${hostInUrl(options.host)}:${options.port}`;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, shown, options.host, options.port)));
    server.listen(options.port, options.host, () => resolve());
  });
  server.unref();
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${hostInUrl(options.host)}:${port}`,
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(routes: Record<string, (response: ServerResponse) => Promise<Answer>>, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '/').split('?')[0] ?? '/';
  const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
  if (route === undefined) return send(response, { status: 404, type: TEXT, body: 'not found: this endpoint serves /metrics and /healthz\n' });
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return send(response, { status: 405, type: TEXT, body: `method ${oneLine(request.method ?? '')} not allowed: ${ALLOWED_METHODS} only\n`, headers: { Allow: ALLOWED_METHODS } });
  }
  try {
    send(response, await route(response));
  } catch (error) {
    send(response, { status: 500, type: TEXT, body: `${oneLine(error instanceof Error ? error.message : String(error))}\n` });
  }
}

/** Headers and body (none for HEAD, which node:http leaves out itself); nothing once the client is gone. */
function send(response: ServerResponse, { status, type, body, headers }: Answer): void {
  if (response.destroyed) return;
  response.writeHead(status, { ...headers, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  response.end(body);
}

function listenError(error: NodeJS.ErrnoException, shown: string, host: string, port: number): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new ConfigError(`--metrics ${shown}: the address is in use (another process listens on port ${port} there); choose another port`);
    case 'EACCES':
      return new ConfigError(`--metrics ${shown}: permission denied (a port below 1024 needs root); choose a port from 1024 up`);
    case 'EADDRNOTAVAIL':
      return new ConfigError(`--metrics ${shown}: ${host} is not an address of this host`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError(`--metrics ${shown}: cannot resolve the host name ${host}`);
    default:
      return new ConfigError(`--metrics ${shown}: cannot listen: ${error.message}`);
  }
}

/** An IPv6 address in brackets, as a URL needs it. */
function hostInUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** A reason or a method name on one line, whatever it held. */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, 1_000);
}
