// The "oauth" object of HTTP server entries, in every config format skills-mount reads.
import { describe, expect, it } from 'vitest';
import { loadMountConfig, parseConfigText } from '../../src/config/config.js';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { withTempDir } from '../support/temp-dir.js';

async function serversOf(document: unknown, env: NodeJS.ProcessEnv = {}) {
  return withTempDir('auth-config-', async (dir) => {
    const file = path.join(dir, 'mcp.json');
    await writeFile(file, JSON.stringify(document));
    return (await loadMountConfig({ configPath: file, env: { HOME: dir, ...env } })).servers;
  });
}

describe('oauth in config entries', () => {
  it('reads Claude Code\'s fields in .mcp.json, with ${VAR} expanded', async () => {
    const [server] = await serversOf(
      { mcpServers: { team: { type: 'http', url: 'https://skills.example.com/mcp', oauth: { clientId: '${CLIENT}', callbackPort: 8765, authServerMetadataUrl: 'https://id.example.com/.well-known/openid-configuration', scopes: ['skills:read', 'offline_access'] } } } },
      { CLIENT: 'abc123' },
    );
    expect(server!.config).toMatchObject({
      kind: 'http',
      oauth: { grantType: 'authorization_code', clientId: 'abc123', callbackPort: 8765, authServerMetadataUrl: 'https://id.example.com/.well-known/openid-configuration', scopes: 'skills:read offline_access' },
    });
  });

  it('reads it in the mcpServers (Cursor) and VS Code formats, SSE entries too', async () => {
    const [cursor] = await serversOf({ mcpServers: { a: { url: 'https://a.example.com/mcp', oauth: { clientMetadataUrl: 'https://me.example.com/client.json' } } } });
    expect(cursor!.config).toMatchObject({ kind: 'http', oauth: { clientMetadataUrl: 'https://me.example.com/client.json' } });
    const [vscode] = await serversOf({ servers: { b: { type: 'sse', url: 'https://b.example.com/sse', oauth: { scopes: 'read' } } } });
    expect(vscode!.config).toMatchObject({ kind: 'sse', oauth: { grantType: 'authorization_code', scopes: 'read' } });
  });

  it('reads the unattended grants: client credentials (secret or private key) and jwt-bearer', async () => {
    const [secret, key, workload] = await serversOf(
      {
        mcpServers: {
          s: { url: 'https://s.example.com/mcp', oauth: { grantType: 'client_credentials', clientId: 'fleet', clientSecret: '${SECRET}' } },
          k: { url: 'https://k.example.com/mcp', oauth: { grantType: 'client_credentials', clientId: 'fleet', privateKeyFile: '/etc/key.pem', privateKeyAlgorithm: 'ES256' } },
          w: { url: 'https://w.example.com/mcp', oauth: { grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer', clientId: 'pod', assertionFile: '/var/run/secrets/tokens/mcp' } },
        },
      },
      { SECRET: 's3cret-value' },
    );
    expect(secret!.config).toMatchObject({ oauth: { grantType: 'client_credentials', clientId: 'fleet', clientSecret: 's3cret-value' } });
    expect(key!.config).toMatchObject({ oauth: { privateKeyFile: '/etc/key.pem', privateKeyAlgorithm: 'ES256' } });
    expect(workload!.config).toMatchObject({ oauth: { grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertionFile: '/var/run/secrets/tokens/mcp' } });
  });

  it('reads enterprise-managed authorization: an ID token exchanged at the identity provider', async () => {
    const [server] = await serversOf({
      mcpServers: {
        e: {
          url: 'https://e.example.com/mcp',
          oauth: { grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer', clientId: 'mcp-client', idpTokenEndpoint: 'https://idp.example.com/token', idpClientId: 'idp-client', idTokenFile: '/run/id-token' },
        },
      },
    });
    expect(server!.config).toMatchObject({ oauth: { idpTokenEndpoint: 'https://idp.example.com/token', idpClientId: 'idp-client', idTokenFile: '/run/id-token' } });
    await expect(
      serversOf({ mcpServers: { e: { url: 'https://e.example.com/mcp', oauth: { grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer', clientId: 'c', idpTokenEndpoint: 'https://idp.example.com/token', idTokenFile: '/t' } } } }),
    ).rejects.toThrow(/"oauth"."idpClientId" is needed for enterprise-managed authorization/);
  });

  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an unknown field', { clientID: 'x' }, /"oauth"."clientID" is not a field/],
    ['a grant it does not know', { grantType: 'password' }, /"oauth"."grantType" must be one of/],
    ['a port out of range', { callbackPort: 70000 }, /"oauth"."callbackPort" must be a port number from 1 to 65535/],
    ['a metadata URL over http', { clientMetadataUrl: 'http://me.example.com/c.json' }, /must be an https URL with a path/],
    ['a secret without a client', { clientSecret: 'x' }, /"oauth"."clientSecret" needs "clientId"/],
    ['client credentials without a secret or key', { grantType: 'client_credentials', clientId: 'x' }, /needs "clientSecret" or "privateKeyFile"/],
    ['jwt-bearer without an assertion file', { grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer', clientId: 'x' }, /needs "assertionFile"/],
    ['a key algorithm jose cannot sign PEM keys with', { grantType: 'client_credentials', clientId: 'x', privateKeyFile: '/k', privateKeyAlgorithm: 'HS256' }, /"privateKeyAlgorithm" must be one of/],
    ['a scope with a quote', { scopes: 'read "all"' }, /is not a valid scope/],
    ['a string where an object belongs', 'yes' as unknown as Record<string, unknown>, /"oauth" must be an object/],
  ];
  for (const [what, oauth, message] of bad) {
    it(`refuses ${what}, naming the server and the field`, async () => {
      await expect(serversOf({ mcpServers: { team: { url: 'https://t.example.com/mcp', oauth } } })).rejects.toThrow(message);
    });
  }

  it('never quotes a secret in an error', async () => {
    const error = await serversOf({ mcpServers: { team: { url: 'https://t.example.com/mcp', oauth: { clientSecret: 'top-secret-value-123' } } } }).catch((e: Error) => e);
    expect(String(error)).not.toContain('top-secret-value-123');
  });

  it('refuses "oauth" on a stdio server, and leaves entries without it unchanged', () => {
    expect(() => parseConfigText(JSON.stringify({ mcpServers: { s: { command: 'x', oauth: {} } } }), 'f.json', {})).toThrow(/"oauth" is for HTTP servers/);
    const parsed = parseConfigText(JSON.stringify({ mcpServers: { h: { url: 'https://h.example.com/mcp' } } }), 'f.json', {});
    expect(parsed.candidates[0]!.raw).not.toHaveProperty('oauth');
  });
});
