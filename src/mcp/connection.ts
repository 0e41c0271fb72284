// One MCP client connection with a deadline on every request, reconnect with capped
// exponential backoff, and SDK/JSON-RPC failures turned into domain errors.
// Knows nothing of skills beyond forwarding notifications.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import { NotFoundError, NotSupportedError, ProtocolError, UnavailableError } from '../errors.js';
import type { ServerConfig } from './server-config.js';
import { RobustStdioClientTransport } from './stdio-transport.js';
import type { ConnectionStatus, SourceEvent } from './skill-source.js';

export type Logger = (line: string) => void;

export interface ConnectionOptions {
  /** Deadline for every request, connect included. */
  timeoutMs: number;
  log: Logger;
  /** Log every request with its duration. */
  verbose?: boolean;
  /** Builds the transport; tests inject in-memory or failing transports. */
  createTransport?: (config: ServerConfig) => Transport;
  /** First reconnect delay (default 500 ms); doubles with every failure in a row. */
  minBackoffMs?: number;
  /** Cap on the reconnect delay (default 30 s). */
  maxBackoffMs?: number;
  /** A connection that lasted this long resets the backoff (default 10 s), so a crash loop still backs off. */
  stableAfterMs?: number;
}

const CLIENT_INFO = { name: 'skills-mount', version: '0.1.0' };
/**
 * Largest stdio message accepted. The SDK's default (10 MiB) is less than a 16 MiB file
 * (the per-skill limit) as base64 JSON (~22 MiB); exceeding it drops the whole connection.
 */
const STDIO_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** A client connection to one labelled server, kept alive across crashes. */
export class Connection {
  private client: Client | undefined;
  private status: ConnectionStatus = { status: 'connecting' };
  private capabilities: ServerCapabilities | undefined;
  private readonly listeners: Array<(event: SourceEvent) => void> = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private connectedAtMs = 0;
  private closed = false;

  constructor(
    readonly label: string,
    private readonly config: ServerConfig,
    private readonly options: ConnectionOptions,
  ) {}

  /** Makes the first connection attempt; resolves when it has ended, either way. */
  async start(): Promise<void> {
    await this.attempt();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.status = { status: 'closed' };
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }

  connection(): ConnectionStatus {
    return this.status;
  }

  serverCapabilities(): ServerCapabilities | undefined {
    return this.capabilities;
  }

  onEvent(listener: (event: SourceEvent) => void): void {
    this.listeners.push(listener);
  }

  /** Sends one request with the deadline; throws domain errors naming server and method. */
  async request<S extends z.ZodType>(method: string, params: Record<string, unknown>, schema: S, uri?: string): Promise<z.infer<S>> {
    const client = this.client;
    const context = { server: this.label, uri };
    if (!client || this.status.status !== 'connected') {
      const why = this.status.status === 'connected' ? 'not connected' : describeStatus(this.status);
      throw new UnavailableError(`${this.label}: ${method}: server unavailable (${why})`, context);
    }
    const startedAt = performance.now();
    try {
      const result = await client.request({ method, params }, schema as never, { timeout: this.options.timeoutMs });
      this.trace(method, uri, startedAt, 'ok');
      return result as z.infer<S>;
    } catch (error) {
      const mapped = this.mapError(error, method, context);
      this.trace(method, uri, startedAt, mapped.message);
      // A dead HTTP server is noticed only when a request fails: reconnect now, not at the next timeout.
      if (isConnectionLoss(error)) this.lose(client, `connection lost: ${firstLine(describeError(error))}`);
      throw mapped;
    }
  }

  private trace(method: string, uri: string | undefined, startedAt: number, outcome: string): void {
    if (!this.options.verbose) return;
    const ms = (performance.now() - startedAt).toFixed(1);
    this.options.log(`[${this.label}] ${method}${uri ? ` ${uri}` : ''} ${ms}ms ${outcome}`);
  }

  private mapError(error: unknown, method: string, context: { server: string; uri?: string | undefined }): Error {
    const where = `${this.label}: ${method}${context.uri ? ` ${context.uri}` : ''}`;
    if (error instanceof McpError) {
      switch (error.code) {
        case ErrorCode.MethodNotFound:
          return new NotSupportedError(`${where}: method not supported by the server`, { ...context, cause: error });
        case ErrorCode.InvalidParams:
          return new NotFoundError(`${where}: not found (${error.message})`, { ...context, cause: error });
        case ErrorCode.RequestTimeout:
          return new UnavailableError(`${where}: no answer within ${this.options.timeoutMs} ms`, { ...context, cause: error });
        case ErrorCode.ConnectionClosed:
          return new UnavailableError(`${where}: connection closed`, { ...context, cause: error });
        default:
          return new UnavailableError(`${where}: server error ${error.code}: ${error.message}`, { ...context, cause: error });
      }
    }
    if (error instanceof Error && (error.name === 'ZodError' || error.name === '$ZodError')) {
      return new ProtocolError(`${where}: malformed result: ${firstLine(error.message)}`, { ...context, cause: error });
    }
    return new UnavailableError(`${where}: ${error instanceof Error ? error.message : String(error)}`, { ...context, cause: error });
  }

  private async attempt(): Promise<void> {
    if (this.closed) return;
    this.status = { status: 'connecting', ...(this.status.status === 'failed' ? { reason: this.status.reason } : {}) };
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    let transport: Transport;
    try {
      transport = (this.options.createTransport ?? this.createTransport.bind(this))(this.config);
      await client.connect(transport, { timeout: this.options.timeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      this.fail(`cannot connect: ${firstLine(describeError(error))}`);
      return;
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      return;
    }
    client.onclose = () => {
      if (this.client !== client) return;
      this.client = undefined;
      this.fail('connection closed by the server');
    };
    client.onerror = (error) => {
      if (this.client !== client) return;
      if (isConnectionLoss(error)) this.lose(client, `connection lost: ${firstLine(describeError(error))}`);
      else this.options.log(`[${this.label}] protocol error: ${firstLine(error.message)}`);
    };
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => this.emit({ type: 'list-changed' }));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      this.emit({ type: 'resource-updated', uri: notification.params.uri });
    });
    this.client = client;
    this.capabilities = client.getServerCapabilities();
    this.connectedAtMs = performance.now();
    this.status = { status: 'connected' };
    this.options.log(`[${this.label}] connected`);
    this.emit({ type: 'connected' });
  }

  /**
   * Drops a live client whose transport has failed (HTTP: server gone, session unknown):
   * closing it rejects every request in flight at once, and the reconnect starts a fresh session.
   */
  private lose(client: Client, reason: string): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.fail(reason);
    void client.close().catch(() => undefined);
  }

  private fail(reason: string): void {
    if (this.closed) return;
    const wasConnected = this.status.status === 'connected';
    if (wasConnected && performance.now() - this.connectedAtMs >= (this.options.stableAfterMs ?? 10_000)) this.failures = 0;
    this.status = { status: 'failed', reason };
    this.failures += 1;
    const minMs = this.options.minBackoffMs ?? 500;
    const maxMs = this.options.maxBackoffMs ?? 30_000;
    const delayMs = Math.min(maxMs, minMs * 2 ** Math.min(this.failures - 1, 30));
    this.options.log(`[${this.label}] ${reason}; retrying in ${Number((delayMs / 1000).toFixed(3))} s`);
    if (wasConnected) this.emit({ type: 'disconnected', reason });
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.attempt(), delayMs);
    this.retryTimer.unref();
  }

  private emit(event: SourceEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private createTransport(config: ServerConfig): Transport {
    if (config.kind === 'http') {
      return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    }
    if (config.kind === 'sse') {
      // The SDK adds requestInit headers to the event-stream GET as well as to every POST.
      return new SSEClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    }
    const transport = new RobustStdioClientTransport({
      command: config.command,
      args: config.args,
      env: { ...getDefaultEnvironment(), ...config.env },
      ...(config.cwd ? { cwd: config.cwd } : {}),
      stderr: 'pipe',
      maxBufferSize: STDIO_MAX_MESSAGE_BYTES,
    });
    const stderr = transport.stderr;
    if (stderr) {
      // The server's own diagnostics, one line each, attributed to its label.
      createInterface({ input: stderr as unknown as Readable }).on('line', (line) => {
        this.options.log(`[${this.label}] server: ${line}`);
      });
    }
    return transport;
  }
}


/** Network-level failures that mean the server (or its session) is gone, not that one request went wrong. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** True when a request or transport error means the connection is dead and must be replaced. */
export function isConnectionLoss(error: unknown): boolean {
  // 404 on a request carrying a session id: the server restarted and forgot the session.
  if (error instanceof StreamableHTTPError) return error.code === 404;
  // The legacy SSE transport's event stream failed: no response can arrive any more.
  if (error instanceof SseError) return true;
  if (!(error instanceof Error) || error.name === 'AbortError') return false;
  if (/^(SSE stream disconnected|Failed to reconnect SSE stream|Maximum reconnection attempts)/.test(error.message)) return true;
  if (/^Error POSTing to endpoint \(HTTP 404\)/.test(error.message)) return true;
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return true;
    if (cause instanceof TypeError && cause.message === 'fetch failed') return true;
  }
  return false;
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return cause ? `${error.message} (${typeof code === 'string' ? code : cause.message})` : error.message;
}

function describeStatus(status: ConnectionStatus): string {
  switch (status.status) {
    case 'failed':
      return status.reason;
    case 'connecting':
      return status.reason ? `reconnecting after: ${status.reason}` : 'connecting';
    default:
      return status.status;
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
