// An HTTP skills server that demands a bearer token, serving the reference server's
// sessions over both Streamable HTTP (/mcp) and the legacy HTTP+SSE transport (/sse,
// /messages), so tests can check that configured headers reach the server.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createSkillsSession, SkillTree, type SkillsSession } from '../../src/server/index.js';

export interface AuthServer {
  /** e.g. http://127.0.0.1:PORT */
  origin: string;
  /** Authorization headers seen, in order, including refused ones. */
  seen: string[];
  close(): Promise<void>;
}

/** Serves `root`'s skills to requests carrying `Authorization: Bearer <token>`; everything else gets 401. */
export async function startAuthServer(root: string, token: string): Promise<AuthServer> {
  const tree = await SkillTree.open({ root, watch: false });
  const seen: string[] = [];
  const sse = new Map<string, SSEServerTransport>();
  const streamable = new Map<string, StreamableHTTPServerTransport>();
  const sessions: SkillsSession[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const authorization = req.headers.authorization ?? '';
    seen.push(authorization);
    if (authorization !== `Bearer ${token}`) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('unauthorized\n');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/sse' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      sse.set(transport.sessionId, transport);
      const session = createSkillsSession(tree);
      sessions.push(session);
      await session.server.connect(transport);
      return;
    }
    if (url.pathname === '/messages' && req.method === 'POST') {
      const transport = sse.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) return void res.writeHead(404).end();
      return transport.handlePostMessage(req, res);
    }
    if (url.pathname === '/mcp') {
      const id = req.headers['mcp-session-id'];
      const known = typeof id === 'string' ? streamable.get(id) : undefined;
      if (known) return known.handleRequest(req, res);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => void streamable.set(sessionId, transport),
      });
      const session = createSkillsSession(tree);
      sessions.push(session);
      await session.server.connect(transport);
      return transport.handleRequest(req, res);
    }
    res.writeHead(404).end();
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    async close() {
      await Promise.all(sessions.map((session) => session.close().catch(() => undefined)));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      tree.close();
    },
  };
}
