// The --metrics HTTP endpoint (node:http, nothing else): GET /metrics in the Prometheus text
// format and GET /healthz (200 "ok", or 503 with the reason in one line). It serves what it is
// given and knows nothing of mounts or servers; it never keeps the daemon alive on its own.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../errors.js';
import type { HealthReport } from './mount-health.js';

export interface MetricsServerOptions {
  host: string;
  /** 0 lets the system choose (tests); the URL says which. */
  port: number;
  metrics: () => Promise<string>;
  /** The Content-Type of `metrics()`'s text. */
  contentType: string;
  health: () => Promise<HealthReport>;
}

export interface MetricsServer {
  /** http://HOST:PORT, no path. */
  readonly url: string;
  close(): Promise<void>;
}

const TEXT = 'text/plain; charset=utf-8';
const ALLOWED_METHODS = 'GET, HEAD';
/** A scraper sends its request at once: a slow or idle client is cut off, and a flood of them bounded. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 15_000;
const MAX_CONNECTIONS = 64;

/** Listens on host:port; a port in use, a privileged port or an address not of this host is a ConfigError naming it. */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const routes: Record<string, () => Promise<{ status: number; type: string; body: string }>> = {
    '/metrics': async () => ({ status: 200, type: options.contentType, body: await options.metrics() }),
    '/healthz': async () => {
      const report = await options.health();
      return report.healthy ? { status: 200, type: TEXT, body: 'ok\n' } : { status: 503, type: TEXT, body: `${oneLine(report.reason)}\n` };
    },
  };
  const server = createServer((request, response) => void answer(routes, request, response));
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.maxConnections = MAX_CONNECTIONS;
  const shown = `${hostInUrl(options.host)}:${options.port}`;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, shown, options.host, options.port)));
    server.listen(options.port, options.host, () => resolve());
  });
  server.unref();
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${hostInUrl(options.host)}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(routes: Record<string, () => Promise<{ status: number; type: string; body: string }>>, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '/').split('?')[0] ?? '/';
  const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
  if (route === undefined) return send(response, 404, TEXT, 'not found: this endpoint serves /metrics and /healthz\n');
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('Allow', ALLOWED_METHODS);
    return send(response, 405, TEXT, `method ${oneLine(request.method ?? '')} not allowed: ${ALLOWED_METHODS} only\n`);
  }
  try {
    const { status, type, body } = await route();
    send(response, status, type, body);
  } catch (error) {
    send(response, 500, TEXT, `${oneLine(error instanceof Error ? error.message : String(error))}\n`);
  }
}

/** Headers and body (none for HEAD, which node:http leaves out itself). */
function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
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
