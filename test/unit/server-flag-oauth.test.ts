// `--server LABEL=URL oauth.FIELD=VALUE...`: a pre-registered client (and the other "oauth"
// fields) without a config file, read and checked as the config file's "oauth" object is.
import { describe, expect, it } from 'vitest';
import { loadMountConfig } from '../../src/config/config.js';
import { parseServerFlag } from '../../src/config/server-flags.js';

describe('--server LABEL=URL oauth.FIELD=VALUE', () => {
  it('gives oauth.clientId and oauth.callbackPort to an HTTP server', async () => {
    expect(parseServerFlag('team=https://skills.example.com/mcp oauth.clientId=desk oauth.callbackPort=8765').server).toMatchObject({
      kind: 'http',
      url: 'https://skills.example.com/mcp',
      oauth: { clientId: 'desk', callbackPort: '8765' },
    });
    const config = await loadMountConfig({ serverFlags: ['team=https://skills.example.com/mcp oauth.clientId=desk oauth.callbackPort=8765'], env: {} });
    expect(config.servers[0]!.config).toMatchObject({ kind: 'http', url: 'https://skills.example.com/mcp', oauth: { grantType: 'authorization_code', clientId: 'desk', callbackPort: 8765 } });
  });

  it('quotes group a value with spaces; an SSE server takes them too; ${VAR} expands from the environment', async () => {
    expect(parseServerFlag(`team=sse+https://x.example/sse "oauth.scopes=skills:read skills:write"`).server).toMatchObject({ kind: 'sse', url: 'https://x.example/sse', oauth: { scopes: 'skills:read skills:write' } });
    const config = await loadMountConfig({
      serverFlags: ['robot=https://x.example/mcp oauth.grantType=client_credentials oauth.clientId=robot oauth.clientSecret=${ROBOT_SECRET}'],
      env: { ROBOT_SECRET: 'from-the-environment' },
    });
    expect(config.servers[0]!.config).toMatchObject({ oauth: { grantType: 'client_credentials', clientId: 'robot', clientSecret: 'from-the-environment' } });
  });

  it('refuses what is not oauth.FIELD=VALUE, an unknown field, a field twice, and a bad port, never quoting a value', async () => {
    expect(() => parseServerFlag('team=https://x.example/mcp clientSecret=hunter2hunter2')).toThrow(/--server team: "clientSecret=\.\.\." after the URL is not oauth\.FIELD=VALUE/);
    expect(() => parseServerFlag('team=https://x.example/mcp clientSecret=hunter2hunter2')).not.toThrow(/hunter2/);
    expect(() => parseServerFlag('team=https://x.example/mcp oauth.colour=blue')).toThrow(/--server team: "oauth"\."colour" is not a field skills-mount knows/);
    expect(() => parseServerFlag('team=https://x.example/mcp oauth.clientId=a oauth.clientId=b')).toThrow(/oauth\.clientId is given twice/);
    await expect(loadMountConfig({ serverFlags: ['team=https://x.example/mcp oauth.callbackPort=99999'], env: {} })).rejects.toThrow(/--server team: "oauth"\."callbackPort" must be a port number from 1 to 65535/);
  });

  it('leaves a URL alone and a command with its words as before', () => {
    expect(parseServerFlag('team=https://x.example/mcp').server).toEqual({ kind: 'http', url: 'https://x.example/mcp', headers: {}, protocolVersion: undefined, approvedOnly: false });
    expect(parseServerFlag('local=skills-serve ./skills oauth.clientId=x').server).toMatchObject({ kind: 'stdio', command: 'skills-serve', args: ['./skills', 'oauth.clientId=x'] });
  });
});
