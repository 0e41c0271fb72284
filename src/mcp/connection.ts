// One MCP client connection on the SDK v2: protocol revision negotiation (2026-07-28 first,
// the 2025 handshake as fallback, or one pinned), a deadline on the handshake and on every
// request, reconnect with capped backoff, change events from whichever channel the era has,
// and SDK/JSON-RPC failures turned into domain errors. Knows nothing of skills.
import { Client, InsufficientScopeError, SdkError, SdkHttpError, SSEClientTransport, StreamableHTTPClientTransport, UnauthorizedError, type Transport } from '@modelcontextprotocol/client';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { NotFoundError, NotSupportedError, UnavailableError } from '../errors.js';
import { LEGACY_REVISION, MODERN_REVISION, type ProtocolVersionChoice } from '../protocol/revisions.js';
import { MAX_BYTES_PER_SKILL } from '../protocol/skills-wire.js';
import { boundedFetch } from './bounded-fetch.js';
import { ChangeListener, type ListenTimings } from './change-listener.js';
import { classifyConnectError, describeError, firstLine, isConnectionLoss, jsonRpcAnswerIn, mapRequestError, oversizeIn } from './error-mapping.js';
import { headerRedactor, redactError } from './redaction.js';
import { requestOutcome, type RequestObserver } from './request-observer.js';
import { escapeForLog } from '../format/escape.js';
import type { ServerConfig } from '../config/server-config.js';
import type { ConnectionStatus, SourceEvent } from './skill-source.js';
import { LineLimitedReader } from './stderr-lines.js';
import { RobustStdioClientTransport } from './stdio-transport.js';
import type { Log } from '../log.js';
import { needsLoginIn } from '../auth/auth-errors.js';
import { connectionAuth, type ConnectionAuth, type ConnectionAuthOptions } from '../auth/connection-auth.js';


export interface ConnectionOptions {
  /** Deadline for every request. */
  timeoutMs: number;
  /** Deadline for the handshake (negotiation included); default max(timeoutMs, 10 s). */
  connectTimeoutMs?: number;
  /** Which protocol revision to speak; default: negotiate. */
  protocolVersion?: ProtocolVersionChoice;
  log: Log;
  /** Log every request with its duration. */
  verbose?: boolean;
  /** Told of every request sent, as it starts and ends (metrics); never changes a request. */
  observer?: RequestObserver;
  /** Builds the transport; tests inject in-memory or failing transports. */
  createTransport?: (config: ServerConfig) => Transport;
  /** First reconnect delay (default 500 ms); doubles with every failure in a row. */
  minBackoffMs?: number;
  /** Cap on the reconnect delay (default 30 s). */
  maxBackoffMs?: number;
  /** A connection that lasted this long resets the backoff (default 10 s), so a crash loop still backs off. */
  stableAfterMs?: number;
  /** Largest message accepted (default MAX_MESSAGE_BYTES); tests set a smaller one. */
  maxMessageBytes?: number;
  /** Each step of stopping a stdio server (stdin closed, SIGTERM, SIGKILL) waits this long (default 1 s). */
  stopGraceMs?: number;
  /** Timing of the 2026-07-28 listen stream's reopening; defaults in change-listener.ts. */
  listen?: ListenTimings;
  /** Sign-in for HTTP servers (the token store); default: the user's store. `false`: send no token (tests). */
  auth?: ConnectionAuthOptions | false;
}

/** This many refused requests in a row, none answered between, and a connected server shows as degraded. */
const DEGRADED_AFTER_REFUSALS = 3;

const CLIENT_INFO = { name: 'skills-mount', version: '0.2.0' };
/**
 * Largest message accepted on any transport (the SDK's stdio default, 10 MiB, is less than
 * one 16 MiB file; its HTTP transport has no bound). Hosts must support a 16 MiB file, and
 * as JSON text one byte can take six ("\u0001"), so the bound is six times the per-skill limit.
 */
export const MAX_MESSAGE_BYTES = 6 * MAX_BYTES_PER_SKILL + 1024 * 1024;
const MIN_CONNECT_TIMEOUT_MS = 10_000;

/** A client connection to one labelled server, kept alive across crashes. */
export class Connection {
  private client: Client | undefined;
  /** The client of an attempt still connecting: close() must stop its server too. */
  private connectingClient: Client | undefined;
  private status: ConnectionStatus = { status: 'connecting' };
  private readonly listeners: Array<(event: SourceEvent) => void> = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private connectedAtMs = 0;
  private closed = false;
  /** A 2025 HTTP session's GET event stream is open (notifications can arrive). */
  private eventStreamOpen = false;
  private changeListener: ChangeListener | undefined;
  private readonly wantedSubscriptions = new Set<string>();
  private protocolErrorWindowStartMs = Number.NEGATIVE_INFINITY;
  private protocolErrorsInWindow = 0;
  private protocolErrorsDropped = 0;
  /** Per client: a message over the mount's cap arrived (its transport then drops the connection or the request). */
  private readonly oversize = new WeakMap<Client, { reason?: string }>();
  /** Clients being closed (a lost connection's stdio server being stopped): close() waits for them. */
  private readonly closing = new Set<Promise<void>>();
  /** Requests refused in a row on the live client, and the last refusal. */
  private refusals = 0;
  private lastRefusal = '';
  private readonly redact: (text: string) => string;
  private readonly log: Log;
  /** The sign-in of an HTTP server (undefined for stdio, a static Authorization header, or auth: false). */
  private readonly auth: ConnectionAuth | undefined;
  /** Stops watching the token store (while the server needs a sign-in). */
  private stopWatchingStore: (() => void) | undefined;

  constructor(
    readonly label: string,
    private readonly config: ServerConfig,
    private readonly options: ConnectionOptions,
  ) {
    this.auth = options.auth === false ? undefined : connectionAuth(label, config, options.auth);
    // No configured header value, token or client secret reaches a log line, a status reason or an error message.
    const headers = headerRedactor(config.kind === 'stdio' ? undefined : config.headers);
    this.redact = this.auth ? (text) => this.auth!.redact(headers(text)) : headers;
    this.log = (line) => options.log(this.redact(line));
  }

  /** Makes the first connection attempt; resolves when it has ended, either way. */
  async start(): Promise<void> {
    await this.attempt();
  }

  /** Stops talking to the server; resolves once a stdio server (any this connection started) has exited. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.stopWatchingStore?.();
    this.stopWatchingStore = undefined;
    this.status = { status: 'closed' };
    const client = this.client;
    this.client = undefined;
    await this.changeListener?.close();
    this.changeListener = undefined;
    const connecting = this.connectingClient;
    this.connectingClient = undefined;
    await Promise.all([client?.close().catch(() => undefined), connecting?.close().catch(() => undefined), ...this.closing]);
  }

  connection(): ConnectionStatus {
    return this.status;
  }

  serverCapabilities(): ReturnType<Client['getServerCapabilities']> {
    return this.client?.getServerCapabilities();
  }

  /**
   * True while change events can reach us: stdio and legacy SSE always (2025), an open GET
   * event stream (2025 Streamable HTTP), an open `subscriptions/listen` stream (2026-07-28).
   */
  hasLiveChannel(): boolean {
    if (!isUsable(this.status)) return false;
    if (this.status.protocolVersion === MODERN_REVISION) return this.changeListener?.isListening() ?? false;
    return this.config.kind !== 'http' || this.eventStreamOpen;
  }

  onEvent(listener: (event: SourceEvent) => void): void {
    this.listeners.push(listener);
  }

  /** Sends one request with the deadline; throws domain errors naming server and method. */
  async request<S extends z.ZodType>(method: string, params: Record<string, unknown>, schema: S, uri?: string): Promise<z.infer<S>> {
    const client = this.client;
    const context = { server: this.label, method, uri };
    if (!client || !isUsable(this.status)) {
      throw new UnavailableError(`server unavailable (${describeStatus(this.status)})`, context);
    }
    const observer = this.options.observer;
    const startedAt = performance.now();
    observer?.started(this.label, method);
    try {
      const result = await client.request({ method, params }, schema, { timeout: this.options.timeoutMs });
      observer?.finished(this.label, method, 'ok', (performance.now() - startedAt) / 1000);
      this.trace(method, uri, startedAt, 'ok');
      this.answered(client);
      return result as z.infer<S>;
    } catch (error) {
      const mapped = this.mapFailure(client, error, method, uri);
      observer?.finished(this.label, method, requestOutcome(error, mapped), (performance.now() - startedAt) / 1000);
      this.trace(method, uri, startedAt, mapped.message);
      throw mapped;
    }
  }

  /** The live SDK client, for code that drives it directly (the SDK's SkillsClient). */
  sdkClient(): Client | undefined {
    return isUsable(this.status) ? this.client : undefined;
  }

  /** Maps a failure of a call made on sdkClient() as request() would, and notices a lost connection. */
  failed(error: unknown, method: string, uri?: string): Error {
    const client = this.client;
    return client ? this.mapFailure(client, error, method, uri) : redactError(mapRequestError(error, { server: this.label, method, uri }, this.options.timeoutMs), this.redact);
  }

  /** Asks for update events about `uri`: resources/subscribe (2025) or the listen filter (2026-07-28). */
  async subscribe(uri: string): Promise<void> {
    this.wantedSubscriptions.add(uri);
    if (isUsable(this.status) && this.status.protocolVersion === MODERN_REVISION) {
      this.changeListener?.want(uri);
      return;
    }
    await this.request('resources/subscribe', { uri }, EMPTY_RESULT, uri);
  }

  /**
   * One failed request as a domain error (header values redacted): a lost connection is
   * replaced at once (a dead HTTP server is noticed only when a request fails), and a
   * refusal counts towards showing the server degraded.
   */
  private mapFailure(client: Client, error: unknown, method: string, uri: string | undefined): Error {
    const context = { server: this.label, method, uri };
    const login = this.loginProblem(error);
    if (login !== undefined) {
      // The token was refused and could not be renewed: only a person signing in helps now.
      if (this.client === client) {
        this.client = undefined;
        const closing = client.close().catch(() => undefined);
        this.closing.add(closing);
        void closing.finally(() => this.closing.delete(closing));
      }
      this.needLogin(login);
      return new UnavailableError(login, context);
    }
    const closedBecause = this.oversize.get(client)?.reason;
    const mapped =
      closedBecause !== undefined && error instanceof SdkError && (error.code === 'CONNECTION_CLOSED' || error.code === 'NOT_CONNECTED')
        ? new UnavailableError(closedBecause, { ...context, cause: error })
        : mapRequestError(error, context, this.options.timeoutMs);
    redactError(mapped, this.redact);
    if (isConnectionLoss(error)) this.lose(client, `connection lost: ${firstLine(describeError(error))}`);
    else if (mapped instanceof NotFoundError || mapped instanceof NotSupportedError) this.answered(client);
    else this.refused(client, mapped.message);
    return mapped;
  }

  /** The server answered (a result, or an error that is an answer: not found, not supported). */
  private answered(client: Client): void {
    if (this.client !== client) return;
    this.refusals = 0;
    if (this.status.status !== 'degraded') return;
    this.status = { status: 'connected', protocolVersion: this.status.protocolVersion };
    this.log(`[${this.label}] answering again`);
    this.emit({ type: 'connected' });
  }

  /** A request the server refused or never answered; a run of them shows the server degraded, with the reason. */
  private refused(client: Client, message: string): void {
    if (this.client !== client || this.status.status === 'closed') return;
    this.refusals += 1;
    this.lastRefusal = message;
    if (this.refusals < DEGRADED_AFTER_REFUSALS) return;
    const reason = `connected, but the server refused the last ${this.refusals} requests; the latest: ${escapeForLog(this.lastRefusal)}`;
    if (this.status.status === 'degraded') {
      this.status = { ...this.status, reason };
      return;
    }
    if (this.status.status !== 'connected') return;
    this.status = { status: 'degraded', protocolVersion: this.status.protocolVersion, reason };
    this.log(`[${this.label}] degraded: ${reason}`);
    this.emit({ type: 'disconnected', reason });
  }

  /** What was wrong on the wire, with the label; at most 10 lines a 10 s window, so garbage cannot flood the log. */
  private logProtocolError(error: Error): void {
    const nowMs = performance.now();
    if (nowMs - this.protocolErrorWindowStartMs > 10_000) {
      if (this.protocolErrorsDropped > 0) this.log(`[${this.label}] (${this.protocolErrorsDropped} more protocol errors not shown)`);
      this.protocolErrorWindowStartMs = nowMs;
      this.protocolErrorsInWindow = 0;
      this.protocolErrorsDropped = 0;
    }
    if (this.protocolErrorsInWindow++ < 10) this.log(`[${this.label}] protocol error: ${escapeForLog(firstLine(this.redact(error.message)))}`);
    else this.protocolErrorsDropped += 1;
  }

  private trace(method: string, uri: string | undefined, startedAt: number, outcome: string): void {
    if (!this.options.verbose) return;
    const ms = (performance.now() - startedAt).toFixed(1);
    this.log(`[${this.label}] ${method}${uri ? ` ${escapeForLog(uri)}` : ''} ${ms}ms ${escapeForLog(outcome)}`);
  }

  private async attempt(): Promise<void> {
    if (this.closed) return;
    this.status = { status: 'connecting', ...(this.status.status === 'failed' ? { reason: this.status.reason } : {}) };
    this.eventStreamOpen = false;
    const choice = this.options.protocolVersion ?? 'negotiate';
    const client = new Client(CLIENT_INFO, clientOptionsFor(choice, this.options.timeoutMs));
    const connectTimeoutMs = this.options.connectTimeoutMs ?? Math.max(this.options.timeoutMs, MIN_CONNECT_TIMEOUT_MS);
    this.connectingClient = client;
    const oversize: { reason?: string } = {};
    this.oversize.set(client, oversize);
    try {
      const transport = this.options.createTransport ? this.options.createTransport(this.config) : this.createTransport(this.config, (reason) => (oversize.reason = reason));
      await client.connect(transport, { timeout: connectTimeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      if (this.connectingClient === client) this.connectingClient = undefined;
      const login = this.loginProblem(error);
      if (login !== undefined) {
        this.needLogin(login);
        return;
      }
      const incompatible = classifyConnectError(error, choice);
      if (incompatible) {
        if (this.closed) return;
        // Retrying cannot help until someone changes the server or the configuration.
        this.status = { status: 'incompatible', reason: this.redact(incompatible) };
        this.log(`[${this.label}] ${incompatible}; not retrying (set "protocolVersion" for this server, or upgrade it)`);
        return;
      }
      this.fail(`cannot connect: ${oversize.reason ?? plainConnectFailure(firstLine(this.redact(describeError(error))))}`);
      return;
    }
    if (this.connectingClient === client) this.connectingClient = undefined;
    if (this.closed) {
      await client.close().catch(() => undefined);
      return;
    }
    client.onclose = () => {
      if (this.client !== client) return;
      this.client = undefined;
      const because = oversize.reason;
      this.fail(because === undefined ? 'connection closed by the server' : `connection closed: ${because}`);
    };
    client.onerror = (error) => {
      if (this.client !== client) return;
      // The request it answers fails with it; nothing is wrong with the connection.
      if (jsonRpcAnswerIn(error)) return;
      const over = oversizeIn(error);
      if (over !== undefined) {
        // The transport drops the connection (stdio) or the request (HTTP): say it was the mount's cap.
        oversize.reason = over;
        // A 2025 response event stream cut mid-event leaves its request unanswered for good:
        // replace the connection (rejecting the request with the reason) rather than wait out its deadline.
        if (/^SSE stream disconnected/.test(error.message)) this.lose(client, `connection closed: ${over}`);
        return;
      }
      if (isConnectionLoss(error)) this.lose(client, `connection lost: ${firstLine(describeError(error))}`);
      else this.logProtocolError(error);
    };
    client.setNotificationHandler('notifications/resources/list_changed', () => this.emit({ type: 'list-changed' }));
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      this.emit({ type: 'resource-updated', uri: notification.params.uri });
    });
    const protocolVersion = client.getNegotiatedProtocolVersion() ?? LEGACY_REVISION;
    this.client = client;
    this.connectedAtMs = performance.now();
    this.refusals = 0;
    this.status = { status: 'connected', protocolVersion };
    if (protocolVersion === MODERN_REVISION) this.openChangeListener(client);
    this.log(`[${this.label}] connected (protocol ${protocolVersion})`);
    this.emit({ type: 'connected' });
  }

  /** 2026-07-28: one `subscriptions/listen` stream, when the server has any change events to send. */
  private openChangeListener(client: Client): void {
    const resources = client.getServerCapabilities()?.resources;
    if (!resources?.listChanged && !resources?.subscribe) return;
    this.changeListener = new ChangeListener(client, {
      listChanged: resources.listChanged === true,
      subscribe: resources.subscribe === true,
      timeoutMs: this.options.timeoutMs,
      log: (line) => this.log(`[${this.label}] ${line}`),
      onReopened: () => this.emit({ type: 'list-changed' }),
      ...this.options.listen,
    });
    for (const uri of this.wantedSubscriptions) this.changeListener.want(uri);
    this.changeListener.start();
  }

  /**
   * Drops a live client whose transport has failed (HTTP: server gone, session unknown):
   * closing it rejects every request in flight at once, and the reconnect starts afresh.
   */
  private lose(client: Client, reason: string): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.fail(reason);
    const closing = client.close().catch(() => undefined);
    this.closing.add(closing);
    void closing.finally(() => this.closing.delete(closing));
  }

  /**
   * Why this server needs a person to sign in, when `error` says so: the provider found no usable
   * sign-in, or the server refused the token even after a refresh. Undefined for other failures.
   */
  private loginProblem(error: unknown): string | undefined {
    if (this.auth === undefined) return undefined;
    const needs = needsLoginIn(error);
    if (needs !== undefined) return needs.message;
    if (!this.auth.interactiveGrant) return undefined; // client credentials: a configuration problem, retried with backoff
    if (error instanceof InsufficientScopeError) return this.auth.needsScope(error);
    const refused = error instanceof UnauthorizedError || (error instanceof SdkHttpError && error.status === 401) || (error instanceof Error && error.name === 'UnauthorizedError');
    return refused ? this.auth.refusedAfterRefresh() : undefined;
  }

  /**
   * No retry loop: the server shows "needs login" (kept listing and cached files served meanwhile)
   * until the token store gains a sign-in for it, then connects again at once.
   */
  private needLogin(reason: string): void {
    if (this.closed || this.auth === undefined) return;
    const shown = escapeForLog(this.redact(reason));
    const wasConnected = isUsable(this.status);
    const listener = this.changeListener;
    this.changeListener = undefined;
    void listener?.close();
    clearTimeout(this.retryTimer);
    const already = this.status.status === 'needs-login' && this.status.reason === shown;
    this.status = { status: 'needs-login', reason: shown };
    this.failures = 0;
    if (!already) this.log(`[${this.label}] ${shown}; waiting for a sign-in (not retrying until then)`);
    if (wasConnected) this.emit({ type: 'disconnected', reason: shown });
    this.stopWatchingStore?.();
    this.stopWatchingStore = this.auth.whenSignedIn(() => {
      this.stopWatchingStore = undefined;
      if (this.closed || this.status.status !== 'needs-login') return;
      this.log(`[${this.label}] a sign-in was stored; connecting`);
      void this.attempt();
    });
  }

  private fail(reason: string): void {
    if (this.closed) return;
    const shown = escapeForLog(this.redact(reason));
    const wasConnected = isUsable(this.status);
    if (wasConnected && performance.now() - this.connectedAtMs >= (this.options.stableAfterMs ?? 10_000)) this.failures = 0;
    const listener = this.changeListener;
    this.changeListener = undefined;
    void listener?.close();
    this.status = { status: 'failed', reason: shown };
    this.failures += 1;
    const minMs = this.options.minBackoffMs ?? 500;
    const maxMs = this.options.maxBackoffMs ?? 30_000;
    const delayMs = Math.min(maxMs, minMs * 2 ** Math.min(this.failures - 1, 30));
    this.log(`[${this.label}] ${shown}; retrying in ${Number((delayMs / 1000).toFixed(3))} s`);
    if (wasConnected) this.emit({ type: 'disconnected', reason: shown });
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.attempt(), delayMs);
    this.retryTimer.unref();
  }

  private emit(event: SourceEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** The transport for one attempt; `onOversize` hears of a message refused for being over the cap. */
  private createTransport(config: ServerConfig, onOversize: (reason: string) => void): Transport {
    const maxMessageBytes = this.options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    if (config.kind === 'http' || config.kind === 'sse') {
      const fetch = boundedFetch({
        maxMessageBytes,
        onOversize,
        onEventStream: (open) => {
          this.eventStreamOpen = open;
        },
      });
      const url = new URL(config.url);
      // Authorization traffic (discovery, token requests) gets its own deadline and bound, and no configured header.
      const routed = this.auth ? this.auth.fetchFor(fetch) : fetch;
      const authProvider = this.auth ? { authProvider: this.auth.transportAuth } : {};
      // The SDK adds requestInit headers to the event-stream GET as well as to every POST.
      return config.kind === 'http'
        ? new StreamableHTTPClientTransport(url, { requestInit: { headers: config.headers }, fetch: routed, ...authProvider })
        : new SSEClientTransport(url, { requestInit: { headers: config.headers }, fetch: routed, ...authProvider });
    }
    const transport = new RobustStdioClientTransport({
      command: config.command,
      args: config.args,
      env: config.env,
      ...(config.cwd ? { cwd: config.cwd } : {}),
      stderr: 'pipe',
      maxBufferSize: maxMessageBytes,
      stopGraceMs: this.options.stopGraceMs,
      onOversize,
    });
    const stderr = transport.stderr;
    if (stderr) {
      // The server's own diagnostics, one line each, attributed to its label: bounded in
      // length and rate, and escaped, so a server can neither exhaust memory nor forge lines.
      new LineLimitedReader(stderr as unknown as Readable, (line) => this.log(`[${this.label}] server: ${line}`));
    }
    return transport;
  }
}

const EMPTY_RESULT = z.looseObject({});

/** Connected, or connected but refusing requests: requests are sent either way (a degraded server may recover). */
function isUsable(status: ConnectionStatus): status is Extract<ConnectionStatus, { protocolVersion: string }> {
  return status.status === 'connected' || status.status === 'degraded';
}

function clientOptionsFor(choice: ProtocolVersionChoice, timeoutMs: number): ConstructorParameters<typeof Client>[1] {
  const probe = { timeoutMs };
  switch (choice) {
    case 'negotiate':
      return { capabilities: {}, versionNegotiation: { mode: 'auto', probe } };
    case MODERN_REVISION:
      return { capabilities: {}, versionNegotiation: { mode: { pin: MODERN_REVISION }, probe } };
    case LEGACY_REVISION:
      // The plain 2025 handshake, offering 2025-11-25 (and accepting the older 2025 revisions).
      return { capabilities: {}, versionNegotiation: { mode: 'legacy' } };
  }
}

function describeStatus(status: ConnectionStatus): string {
  switch (status.status) {
    case 'failed':
    case 'incompatible':
    case 'needs-login':
      return status.reason;
    case 'connecting':
      return status.reason ? `reconnecting after: ${status.reason}` : 'connecting';
    default:
      return status.status;
  }
}

/** The SDK's words for a server that exits before answering name its internals; say what happened. */
function plainConnectFailure(text: string): string {
  return /connection closed during the server\/discover probe/.test(text) ? 'the server closed the connection before answering (its own log lines above say why)' : text;
}
