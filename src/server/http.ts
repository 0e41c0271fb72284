// Streamable HTTP front end: one MCP session (and Server) per mcp-session-id, all on
// one shared SkillTree. Only /mcp is served; everything else is 404.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createSkillsSession, type SkillsSession, type SkillsSessionOptions } from './skills-server.js';
import type { Log, SkillTree } from './skill-tree.js';

export interface HttpServeOptions extends SkillsSessionOptions {
  tree: SkillTree;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes?: number;
}

export interface HttpServing {
  /** The MCP endpoint, e.g. http://127.0.0.1:4123/mcp. */
  url: string;
  sessionCount(): number;
  close(): Promise<void>;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Serves MCP over Streamable HTTP at `/mcp` on host:port until closed. */
export async function serveHttp(options: HttpServeOptions): Promise<HttpServing> {
  const log: Log = options.log ?? (() => {});
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; session: SkillsSession }>();
  const loopbackOnly = LOOPBACK_NAMES.has(options.host);

  const startSession = async (req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    const session = createSkillsSession(options.tree, options);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, session });
        log(`session ${id} opened (${sessions.size} open)`);
      },
    });
    session.server.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && sessions.delete(id)) log(`session ${id} closed (${sessions.size} open)`);
      void session.close();
    };
    await session.server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const onRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== '/mcp') return reply(res, 404, 'not found: the MCP endpoint is /mcp\n');
    // A page in a browser must not reach a loopback server through DNS rebinding.
    if (loopbackOnly && !LOOPBACK_NAMES.has(hostnameOf(req.headers.host))) {
      return reply(res, 403, 'forbidden: Host header is not a loopback name\n');
    }
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const known = sessions.get(sessionId);
      if (!known) return replyJsonRpcError(res, 404, -32001, 'Session not found');
      return known.transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return replyJsonRpcError(res, 400, -32000, 'Bad Request: mcp-session-id header is required');
    let body: unknown;
    try {
      body = JSON.parse((await readBody(req, maxBodyBytes)).toString('utf8'));
    } catch (error) {
      return replyJsonRpcError(res, (error as Error).message === 'too large' ? 413 : 400, -32700, 'Parse error');
    }
    if (!isInitializeRequest(body)) return replyJsonRpcError(res, 400, -32000, 'Bad Request: no session; send initialize first');
    await startSession(req, res, body);
  };

  const httpServer = createServer((req, res) => {
    onRequest(req, res).catch((error: unknown) => {
      log(`http ${req.method ?? ''} ${req.url ?? ''} failed: ${(error as Error).message}`);
      if (!res.headersSent) replyJsonRpcError(res, 500, -32603, 'Internal error');
      else res.end();
    });
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

  return {
    url: `http://${host}:${address.port}/mcp`,
    sessionCount: () => sessions.size,
    close: async () => {
      await Promise.all([...sessions.values()].map(({ session }) => session.close()));
      sessions.clear();
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

function hostnameOf(hostHeader: string | undefined): string {
  if (!hostHeader) return '';
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1);
  const colon = hostHeader.lastIndexOf(':');
  return (colon === -1 ? hostHeader : hostHeader.slice(0, colon)).toLowerCase();
}

async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) throw new Error('too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function reply(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
}

function replyJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
