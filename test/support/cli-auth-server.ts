// An HTTP skills server that demands a bearer token, serving the reference server over
// both Streamable HTTP (/mcp, both eras) and the legacy HTTP+SSE transport (/sse,
// /messages), so tests can check that configured headers reach the server.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { createSkillsHttpHandler, sendWebResponse, SkillsService, SkillTree, toWebRequest } from '../../src/server/index.js';

export interface AuthServer {
  /** e.g. http://127.0.0.1:PORT */
  origin: string;
  /** Authorization headers seen, in order, including refused ones. */
  seen: string[];
  close(): Promise<void>;
}

/** The server end of the deprecated HTTP+SSE transport (gone from SDK v2): events out on GET /sse, messages in on POST. */
class SseServerTransport implements Transport {
  readonly sessionId = randomUUID();
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(private readonly res: ServerResponse) {}

  async start(): Promise<void> {
    this.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    this.res.write(`event: endpoint\ndata: /messages?sessionId=${this.sessionId}\n\n`);
    this.res.once('close', () => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  async close(): Promise<void> {
    this.res.end();
  }

  receive(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }
}

/** Serves `root`'s skills to requests carrying `Authorization: Bearer <token>`; everything else gets 401. */
export async function startAuthServer(root: string, token: string): Promise<AuthServer> {
  const tree = await SkillTree.open({ root, watch: false });
  const service = new SkillsService(tree);
  const streamable = createSkillsHttpHandler(service, { loopbackOnly: true });
  const seen: string[] = [];
  const sse = new Map<string, SseServerTransport>();
  const closers: Array<() => Promise<void>> = [];

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const authorization = req.headers.authorization ?? '';
    seen.push(authorization);
    if (authorization !== `Bearer ${token}`) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('unauthorized\n');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/sse' && req.method === 'GET') {
      const transport = new SseServerTransport(res);
      sse.set(transport.sessionId, transport);
      const mcp = service.build('legacy');
      closers.push(() => mcp.close());
      await mcp.connect(transport);
      return;
    }
    if (url.pathname === '/messages' && req.method === 'POST') {
      const transport = sse.get(url.searchParams.get('sessionId') ?? '');
      if (!transport) return void res.writeHead(404).end();
      const chunks: Buffer[] = [];
      for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
      res.writeHead(202).end('Accepted');
      transport.receive(JSON.parse(Buffer.concat(chunks).toString('utf8')) as JSONRPCMessage);
      return;
    }
    if (url.pathname === '/mcp') {
      const { request, body } = await toWebRequest(req, res, 4 * 1024 * 1024);
      return sendWebResponse(res, await streamable.handle(request, body));
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
      await streamable.close();
      await Promise.allSettled(closers.map((close) => close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      service.close();
      tree.close();
    },
  };
}
