#!/usr/bin/env node
// A third-party skills server built the way the SDK v2 documents it, for interop tests of
// the mount: `sdk-skills-server.mjs DIR stdio|http-default|http-modern [TTL_MS|default]`
// (default: no cacheHint, so the SDK's own: ttlMs 0).
//   stdio         serveStdio (answers initialize and server/discover)
//   stdio-legacy  a plain connect() on the stdio transport: the 2025 handshake only
//   stdio-flip:F  the 2025 handshake on odd starts, both eras on even ones (counted in file F)
//   http-default  createMcpHandler in its default mode (2026-07-28 stateless, 2025 clients
//                 served statelessly: no event stream, GET answers 405)
//   http-modern   createMcpHandler with legacy: 'reject' (2026-07-28 only)
// SIGUSR2 reloads the catalog from DIR (SkillCatalog.reload), as a watcher would; over HTTP a
// list change is published on the handler, as the SDK's documentation says. Prints
// "listening on URL" (HTTP) and "reloaded {...}" to stderr.
import http from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadSkills } from '@modelcontextprotocol/server/ext/skills/node';

const [dir, mode = 'stdio', ttlText = '3000'] = process.argv.slice(2);
const catalog = await loadSkills(dir, { ...(ttlText === 'default' ? {} : { cacheHint: { ttlMs: Number(ttlText), cacheScope: 'public' } }), onWarning: (w) => process.stderr.write(`warning: ${w.path}: ${w.message}\n`) });
const build = () => {
  const mcp = new McpServer({ name: 'sdk-skills', version: '1.0.0' }, { capabilities: { resources: { listChanged: true } } });
  catalog.attach(mcp);
  return mcp;
};

let onReload = () => {};
let stop = async () => {};
let era = mode;
if (mode.startsWith('stdio-flip:')) {
  const counter = mode.slice('stdio-flip:'.length);
  let starts = 0;
  try {
    starts = Number(readFileSync(counter, 'utf8')) || 0;
  } catch {}
  writeFileSync(counter, String(starts + 1));
  era = starts % 2 === 0 ? 'stdio-legacy' : 'stdio';
  process.stderr.write(`start ${starts + 1}: ${era}\n`);
}
if (era === 'stdio-legacy') {
  const mcp = build();
  await mcp.connect(new StdioServerTransport());
  stop = () => mcp.close();
} else if (era === 'stdio') {
  const handle = serveStdio(build);
  stop = () => handle.close();
} else {
  const handler = createMcpHandler(build, mode === 'http-modern' ? { legacy: 'reject' } : {});
  onReload = (changes) => {
    if (changes.listChanged) handler.notify.resourcesChanged();
  };
  const server = http.createServer(async (req, res) => {
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && chunks.length > 0;
      const headers = Object.entries(req.headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(', ') : String(value)]);
      const response = await handler.fetch(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined, signal: abort.signal }));
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500);
      process.stderr.write(`http: ${error.message}\n`);
    }
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stderr.write(`listening on http://127.0.0.1:${server.address().port}/mcp\n`);
  stop = async () => {
    await handler.close();
    server.closeAllConnections();
    server.close();
  };
}
process.on('SIGUSR2', async () => {
  const changes = await catalog.reload();
  onReload(changes);
  process.stderr.write(`reloaded ${JSON.stringify(changes)}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => void stop().finally(() => process.exit(0)));
