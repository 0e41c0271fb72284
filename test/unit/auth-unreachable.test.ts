// Authorization traffic that cannot connect names where it went (the authorization server, the
// identity provider, or the MCP server's own sign-in metadata) and the network's reason.
import { createServer } from 'node:net';
import { expect, it } from 'vitest';
import { AuthServerUnreachableError } from '../../src/auth/auth-errors.js';
import { namingUnreachable } from '../../src/auth/connection-auth.js';

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

it('names the authorization server, the identity provider or the server\'s metadata, with ECONNREFUSED', async () => {
  const port = await closedPort();
  const mcpPort = await closedPort();
  const fetchFn = namingUnreachable((input, init) => fetch(input, init), `http://127.0.0.1:${mcpPort}/mcp`, `http://127.0.0.1:${port}/idp/token`);
  const failure = async (url: string) => fetchFn(url).then(() => undefined, (error: unknown) => error);

  const as = await failure(`http://127.0.0.1:${port}/token?code=secret-code`);
  expect(as).toBeInstanceOf(AuthServerUnreachableError);
  expect((as as Error).message).toBe(`cannot reach the authorization server at http://127.0.0.1:${port}/token (ECONNREFUSED): check that it is up and reachable from this machine (the MCP server's metadata names it, or "oauth"."authServerMetadataUrl")`);
  expect((await failure(`http://127.0.0.1:${port}/idp/token`) as Error).message).toMatch(/^cannot reach the identity provider at http:\/\/127\.0\.0\.1:\d+\/idp\/token \(ECONNREFUSED\).*"oauth"\."idpTokenEndpoint"/);
  expect((await failure(`http://127.0.0.1:${mcpPort}/.well-known/oauth-protected-resource/mcp`) as Error).message).toMatch(/^cannot reach the server's sign-in metadata at http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp \(ECONNREFUSED\)/);
});

it('passes other failures on as they are', async () => {
  const refusal = new Error('not a network failure');
  const fetchFn = namingUnreachable(async () => {
    throw refusal;
  }, 'http://127.0.0.1:1/mcp');
  await expect(fetchFn('http://127.0.0.1:2/token')).rejects.toBe(refusal);
});
