// Streamable HTTP front end at /mcp, both eras: 2026-07-28 requests go to the SDK's
// stateless createMcpHandler; 2025 clients get a session (and its GET stream for
// notifications) each, via the SDK's transport. Only the routing and lifecycle are ours.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport, type AuthInfo, type McpServer } from '@modelcontextprotocol/server';
import { checkAuthBinding, createResourceAuth, type ResourceAuth, type ResourceAuthOptions } from './auth.js';
import { SessionTable, untilBodyEnds, type SessionLimits } from './http-sessions.js';
import { isLoopbackHost, loopbackRefusal, urlHostname } from './loopback.js';
import { escapeForLog } from '../format/escape.js';
import { BadHostError, BodyTooLargeError, sendWebResponse, toWebRequest } from './node-fetch-adapter.js';
import type { SkillsService } from './skills-server.js';
import { logTraffic } from './traffic-log.js';

export interface HttpServeOptions {
  service: SkillsService;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes?: number;
  /** Idle expiry and cap of 2025 sessions (10 min, 1,000). */
  sessions?: SessionLimits;
  /** Serve as an OAuth protected resource: every request to /mcp needs a bearer token from this issuer. */
  auth?: ResourceAuthOptions;
}

export interface HttpServing {
  /** The MCP endpoint, e.g. http://127.0.0.1:4123/mcp. */
  url: string;
  /** Open 2025 sessions. */
  sessionCount(): number;
  /** With `auth`: the resource identifier and its metadata URL. */
  auth?: Pick<ResourceAuth, 'resource' | 'metadataUrl'>;
  /** Ends every stream and connection; resolves once the port is closed. */
  close(): Promise<void>;
}

/** Both eras' MCP endpoint as a web handler, for serveHttp or an embedder's own HTTP server. */
export interface SkillsHttpHandler {
  /** Answers one request to /mcp; `body` is its buffered body, `authInfo` who its verified token names. */
  handle(request: Request, body: Buffer | undefined, authInfo?: AuthInfo): Promise<Response>;
  sessionCount(): number;
  /** Ends listen streams and 2025 sessions. */
  close(): Promise<void>;
}

export interface SkillsHttpHandlerOptions {
  /** Refuse (403) a Host or Origin that is not loopback (localhost, 127.0.0.0/8, ::1) or in `allowedHosts`. */
  loopbackOnly: boolean;
  /** More hostnames to accept, as in a URL (lowercase, IPv6 in brackets): the name the server was bound to. */
  allowedHosts?: readonly string[];
  /** Idle expiry and cap of 2025 sessions (10 min, 1,000). */
  sessions?: SessionLimits;
}

/** The /mcp endpoint for `service`; `loopbackOnly` adds the Host and Origin checks. */
export function createSkillsHttpHandler(service: SkillsService, options: SkillsHttpHandlerOptions): SkillsHttpHandler {
  const log = service.log;
  const { loopbackOnly, allowedHosts = [] } = options;
  const sessions = new SessionTable<{ transport: WebStandardStreamableHTTPServerTransport; mcp: McpServer }>(
    options.sessions ?? {},
    ({ mcp }) => mcp.close(),
    log,
  );

  const modern = createMcpHandler((ctx) => service.build(ctx.era, false), {
    legacy: 'reject',
    onerror: (error) => log(`http: ${error.message}`),
  });
  const stopSink = service.addSink(({ updated }) => {
    modern.notify.resourcesChanged();
    for (const uri of updated) modern.notify.resourceUpdated(uri);
  });

  const openSession = async (request: Request, body: unknown, authInfo: AuthInfo | undefined): Promise<Response> => {
    // Every session busy at the cap: a new one is refused, and no idle one is there to close.
    if (!sessions.reserve()) {
      const refused = jsonRpcError(503, -32000, `Too many sessions: all ${sessions.size} open sessions are active; try again later`);
      refused.headers.set('retry-after', '30');
      return refused;
    }
    const mcp = service.build('legacy');
    let opened: (() => void) | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        opened = sessions.add(id, { transport, mcp });
        log(`session ${id} opened (${sessions.size} open)`);
      },
      onsessionclosed: () => void mcp.close(),
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && sessions.delete(id)) log(`session ${id} closed (${sessions.size} open)`);
    };
    try {
      await mcp.connect(service.verbose ? logTraffic(transport, log) : transport);
      const response = await transport.handleRequest(request, { parsedBody: body, ...(authInfo && { authInfo }) });
      if (opened === undefined) {
        // Not an initialize (the transport refused it): nothing to keep.
        sessions.unreserve();
        void mcp.close();
        return response;
      }
      // The initialize is in flight until its response ends.
      return untilBodyEnds(response, opened);
    } catch (error) {
      if (opened === undefined) sessions.unreserve();
      throw error;
    }
  };

  const route = async (request: Request, body: Buffer | undefined, authInfo?: AuthInfo): Promise<Response> => {
    if (new URL(request.url).pathname !== '/mcp') return new Response('not found: the MCP endpoint is /mcp\n', { status: 404 });
    if (loopbackOnly) {
      const refused = loopbackRefusal(request, allowedHosts);
      if (refused) return refused;
    }
    let parsed: unknown;
    if (body !== undefined && body.length > 0) {
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        return jsonRpcError(400, -32700, 'Parse error');
      }
    }
    if (await isLegacyRequest(request, parsed)) {
      const id = request.headers.get('mcp-session-id');
      if (id === null) return openSession(request, parsed, authInfo);
      const session = sessions.get(id);
      if (!session) return jsonRpcError(404, -32001, 'Session not found');
      // Busy until the answer (or the GET stream of notifications) ends: only then can it idle.
      const leave = sessions.enter(id);
      try {
        return untilBodyEnds(await session.transport.handleRequest(request, { parsedBody: parsed, ...(authInfo && { authInfo }) }), leave);
      } catch (error) {
        leave();
        throw error;
      }
    }
    const started = performance.now();
    const response = await modern.fetch(request, { parsedBody: parsed, ...(authInfo && { authInfo }) });
    if (service.verbose) log(`${describe(parsed)} ${response.ok ? 'ok' : `error ${response.status}`} ${(performance.now() - started).toFixed(1)} ms`);
    return response;
  };

  return {
    handle: route,
    sessionCount: () => sessions.size,
    close: async () => {
      stopSink();
      await modern.close().catch(() => {});
      const open = sessions.values();
      sessions.stop();
      await Promise.allSettled(open.map(({ mcp }) => mcp.close()));
    },
  };
}

/** Serves MCP over Streamable HTTP at `/mcp` on host:port until closed. */
export async function serveHttp(options: HttpServeOptions): Promise<HttpServing> {
  const log = options.service.log;
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
  if (options.auth) checkAuthBinding(options.host, options.auth);
  // Made once the address is known: the Host and Origin checks depend on where it is bound,
  // the resource identifier on the URL.
  let handler: SkillsHttpHandler | undefined;
  let auth: ResourceAuth | undefined;

  let closing = false;
  const httpServer = createServer((req, res) => {
    void (async () => {
      try {
        if (closing || handler === undefined) return await sendWebResponse(res, new Response('shutting down\n', { status: 503 }));
        const { request, body } = await toWebRequest(req, res, maxBodyBytes);
        await sendWebResponse(res, (await auth?.handle(request)) ?? (await handler.handle(request, body, auth?.authInfoOf(request))));
      } catch (error) {
        const refused = error instanceof BodyTooLargeError ? jsonRpcError(413, -32600, 'Request body too large') : error instanceof BadHostError ? jsonRpcError(400, -32600, 'Invalid Host header') : undefined;
        if (!refused) log(`http ${req.method ?? ''} ${escapeForLog(req.url ?? '')} failed: ${(error as Error).message}`);
        if (res.headersSent) return void res.end();
        await sendWebResponse(res, refused ?? jsonRpcError(500, -32603, 'Internal error')).catch(() => {});
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, options.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const address = httpServer.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}/mcp`;
  if (options.auth) {
    try {
      auth = createResourceAuth({ verbose: options.service.verbose, ...options.auth }, url, log);
    } catch (error) {
      httpServer.close();
      throw error;
    }
  }
  // Bound to loopback (any of 127.0.0.0/8, ::1, or a name resolving there): a page in a
  // browser must not reach it through DNS rebinding, so only loopback Host and Origin pass.
  handler = createSkillsHttpHandler(options.service, {
    loopbackOnly: isLoopbackHost(address.address),
    allowedHosts: [urlHostname(options.host), urlHostname(address.address)],
    ...(options.sessions && { sessions: options.sessions }),
  });
  const serving = handler;

  return {
    url,
    sessionCount: () => serving.sessionCount(),
    ...(auth && { auth: { resource: auth.resource, metadataUrl: auth.metadataUrl } }),
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      // listen streams get their final result, 2025 GET streams end; then idle keep-alive
      // sockets are cut, which otherwise hold the process for keepAliveTimeout.
      await serving.close();
      httpServer.closeAllConnections();
      await closed;
    },
  };
}

function describe(message: unknown): string {
  const { method, params } = (message ?? {}) as { method?: unknown; params?: { uri?: unknown } };
  const name = typeof method === 'string' ? method : 'batch';
  return typeof params?.uri === 'string' ? `${name} ${params.uri}` : name;
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });
}
