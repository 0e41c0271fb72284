// Glewlwyd (Debian's package, nobody here wrote it) as the authorization server of the sign-in
// interop test: the binary scripts/idp-interop.sh unpacked into .cache/idp/glewlwyd (no maintainer
// script ran), started on 127.0.0.1 and a free port with a SQLite database and a config file of
// the test's own, its login page's static files served, and its OpenID Connect plugin created
// through its admin API (admin/password, the schema's default administrator): PKCE, resource
// indicators (the access token's `aud` is the resource asked for), dynamic registration with no
// initial token, refresh tokens (not rotated), revocation by the client the token was issued to.
// One person, alice, may grant skills:read. idp-glewlwyd-browser.mjs signs her in as a browser would.
// Two ways for skills-mount to be its client: registered dynamically (a public client), or a
// confidential client registered beforehand (id, secret and callback port in the config). Glewlwyd
// lets only the latter revoke: its /revoke takes HTTP Basic client authentication of a client
// allowed client_credentials, or a bearer token, and a public client has neither.
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopChild } from './children.js';
import { freePort } from './http-server.js';
import type { InteropProvider, InteropRequest } from './idp-scenario.js';
import { waitFor } from './poll.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Where scripts/idp-interop.sh unpacks Glewlwyd. */
export const GLEWLWYD_HOME = path.join(REPO, '.cache', 'idp', 'glewlwyd');
const ROOT = path.join(GLEWLWYD_HOME, 'root');
const BINARY = path.join(ROOT, 'usr', 'bin', 'glewlwyd');
const SCHEMA = path.join(GLEWLWYD_HOME, 'init.sqlite3.sql');
const WEBAPP = path.join(ROOT, 'usr', 'share', 'glewlwyd', 'webapp');
const MODULES = path.join(ROOT, 'usr', 'lib', 'glewlwyd');
/** The `$BROWSER` script that signs a person in on Glewlwyd. */
export const GLEWLWYD_BROWSER = fileURLToPath(new URL('./idp-glewlwyd-browser.mjs', import.meta.url));
/** The person who signs in. */
export const GLEWLWYD_USER = { username: 'alice', password: 'alice-password-for-tests' } as const;
const ADMIN = { username: 'admin', password: 'password' } as const;
const PLUGIN = 'oidc';

/** Why Glewlwyd cannot run here, or undefined. */
export function glewlwydUnavailable(): string | undefined {
  for (const file of [BINARY, SCHEMA, path.join(WEBAPP, 'login.html'), path.join(MODULES, 'plugin', 'libprotocol_oidc.so')]) {
    if (!existsSync(file)) return `${file} is missing: run scripts/idp-interop.sh (Glewlwyd from Debian, unpacked without its maintainer scripts)`;
  }
  return undefined;
}

function runWithInput(command: string, args: string[], input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${output}`))));
    // A child that exits before reading its input: its exit code says so, not an EPIPE thrown here.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/** A session on Glewlwyd's API: its cookie kept between requests. */
class Session {
  private cookie = '';

  constructor(private readonly origin: string) {}

  async request(method: string, pathname: string, body?: unknown): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.cookie) headers['cookie'] = this.cookie;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.origin}${pathname}`, { method, headers, redirect: 'manual', ...(body !== undefined && { body: JSON.stringify(body) }) });
    const cookies = response.headers.getSetCookie().map((line) => line.split(';')[0]!).filter((pair) => !pair.endsWith('='));
    if (cookies.length > 0) this.cookie = cookies.join('; ');
    return { status: response.status, text: await response.text() };
  }

  async expectOk(method: string, pathname: string, body?: unknown): Promise<string> {
    const { status, text } = await this.request(method, pathname, body);
    if (status !== 200) throw new Error(`Glewlwyd ${method} ${pathname}: HTTP ${status} ${text.slice(0, 600)}`);
    return text;
  }
}

function config(port: number, dir: string): string {
  const mime = (extension: string, type: string, compress: number) => `  { extension = "${extension}"\n    mime_type = "${type}"\n    compress = ${compress} }`;
  return `# Glewlwyd for one sign-in interop test run
port=${port}
bind_address="127.0.0.1"
external_url="http://127.0.0.1:${port}"
login_url="login.html"
api_prefix="api"
static_files_path="${WEBAPP}/"
allow_origin="*"
log_mode="console"
log_level="${process.env["GLEWLWYD_LOG_LEVEL"] ?? "WARNING"}"
cookie_domain="127.0.0.1"
cookie_secure=0
cookie_same_site="empty"
session_expiration=2419200
session_key="GLEWLWYD2_SESSION_ID"
admin_session_authentication="cookie"
profile_session_authentication="cookie"
allow_multiple_user_per_session=true
login_api_enabled=true
add_x_frame_option_header_deny=true
max_post_size=16778240
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="${MODULES}/user"
user_middleware_module_path="${dir}/user_middleware"
client_module_path="${MODULES}/client"
user_auth_scheme_module_path="${MODULES}/scheme"
plugin_module_path="${MODULES}/plugin"
use_secure_connection=false
# Read (though unused) whatever use_secure_connection says: without them Glewlwyd refuses to start.
secure_connection_key_file="${dir}/unused.key"
secure_connection_pem_file="${dir}/unused.pem"
secure_connection_ca_file="${dir}/unused-ca.crt"
hash_algorithm = "SHA512"
database =
{
  type = "sqlite3"
  path = "${dir}/glewlwyd.db"
};
static_files_mime_types =
(
${[mime('.html', 'text/html', 1), mime('.css', 'text/css', 1), mime('.js', 'application/javascript', 1), mime('.json', 'application/json', 1), mime('.png', 'image/png', 0), mime('.ico', 'image/x-icon', 0), mime('.woff2', 'font/woff2', 0), mime('.woff', 'font/woff', 0), mime('.ttf', 'font/ttf', 0), mime('.svg', 'image/svg+xml', 0), mime('.eot', 'application/vnd.ms-fontobject', 0), mime('.map', 'application/octet-stream', 0)].join(',\n')}
);
`;
}

/** How skills-mount is Glewlwyd's client: registered dynamically (public), or confidential and registered beforehand. */
export type GlewlwydClient = 'dynamic' | 'confidential';
const CONFIDENTIAL = { clientId: 'skills-mount-interop', clientSecret: 'interop-client-secret-for-tests-only' } as const;

export interface GlewlwydServer extends InteropProvider {
  readonly child: ChildProcess;
  log(): string;
}

/** Starts Glewlwyd as the note at the top says, skills-mount its `client` of either kind. */
export async function startGlewlwyd({ resource, scope, accessTokenTtlS, dir }: InteropRequest, client: GlewlwydClient = 'dynamic'): Promise<GlewlwydServer> {
  const missing = glewlwydUnavailable();
  if (missing !== undefined) throw new Error(missing);
  await mkdir(path.join(dir, 'user_middleware'), { recursive: true });
  const database = path.join(dir, 'glewlwyd.db');
  await runWithInput('sqlite3', [database], await readFile(SCHEMA, 'utf8'));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const configFile = path.join(dir, 'glewlwyd.conf');
  await writeFile(configFile, config(port, dir));

  const child = spawn(BINARY, [`--config-file=${configFile}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output = (output + chunk).slice(-20_000)));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output = (output + chunk).slice(-20_000)));
  const sqlite = (query: string) => runWithInput('sqlite3', ['-readonly', database, query], '');
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`glewlwyd exited (${child.exitCode}):\n${output}`);
        return (await fetch(`${origin}/config`).then((response) => response.status).catch(() => 0)) === 200;
      },
      20_000,
      `glewlwyd answering on ${origin}`,
    );
    // The login page a person would see is served.
    const loginPage = await fetch(`${origin}/login.html`);
    if (loginPage.status !== 200) throw new Error(`Glewlwyd does not serve its login page (HTTP ${loginPage.status})`);

    const admin = new Session(origin);
    await admin.expectOk('POST', '/api/auth/', ADMIN);
    await admin.expectOk('POST', '/api/scope/', { name: scope, display_name: scope, description: 'read the skills', password_required: false, password_max_age: 0, scheme: {} });
    await admin.expectOk('POST', '/api/user/', { ...GLEWLWYD_USER, name: 'Alice', email: '', enabled: true, scope: ['g_profile', 'openid', scope] });
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await admin.expectOk('POST', '/api/mod/plugin/', {
      module: 'oidc',
      name: PLUGIN,
      display_name: 'OpenID Connect',
      enabled: true,
      parameters: {
        iss: `${origin}/api/${PLUGIN}`,
        'jwt-type': 'rsa',
        'jwt-key-size': '256',
        key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
        cert: publicKey.export({ type: 'spki', format: 'pem' }),
        'access-token-duration': accessTokenTtlS,
        'refresh-token-duration': 3600,
        'code-duration': 600,
        'refresh-token-rolling': true,
        'refresh-token-one-use': 'never',
        'allow-non-oidc': true,
        'auth-type-code-enabled': true,
        'auth-type-token-enabled': false,
        'auth-type-id-token-enabled': true,
        'auth-type-none-enabled': true,
        'auth-type-password-enabled': false,
        'auth-type-client-enabled': false,
        'auth-type-device-enabled': false,
        'auth-type-refresh-enabled': true,
        scope: [],
        'additional-parameters': [],
        claims: [],
        'jwks-show': true,
        'allowed-scope': ['openid', scope],
        'secret-type': 'pairwise',
        'pkce-allowed': true,
        'pkce-method-plain-allowed': false,
        'introspection-revocation-allowed': true,
        'introspection-revocation-auth-scope': [],
        'introspection-revocation-allow-target-client': true,
        'register-client-allowed': true,
        'register-client-auth-scope': [],
        'register-client-credentials-scope': [],
        'register-client-management-allowed': false,
        'register-resource-specify-allowed': false,
        'register-resource-default': [],
        'session-management-allowed': false,
        'request-parameter-allow': false,
        'resource-allowed': true,
        'resource-scope': { [scope]: [resource] },
        'resource-client-property': '',
        'resource-scope-and-client-property': false,
        'resource-change-allowed': true,
        'oauth-dpop-allowed': false,
      },
    });
    let oauth: Record<string, unknown> | undefined;
    if (client === 'confidential') {
      const callbackPort = await freePort();
      await admin.expectOk('POST', '/api/client/', {
        client_id: CONFIDENTIAL.clientId,
        name: 'skills-mount',
        description: 'registered beforehand',
        confidential: true,
        // Glewlwyd's token endpoint refuses (unauthorized_client) a client that names no method.
        client_secret: CONFIDENTIAL.clientSecret,
        token_endpoint_auth_method: ['client_secret_basic'],
        enabled: true,
        scope: [],
        redirect_uri: [`http://127.0.0.1:${callbackPort}/callback`],
        // client_credentials: what Glewlwyd asks of a client that revokes its own tokens.
        authorization_type: ['code', 'refresh_token', 'client_credentials'],
      });
      oauth = { ...CONFIDENTIAL, callbackPort };
    }
    const issuer = `${origin}/api/${PLUGIN}`;
    const discovery = JSON.parse(await admin.expectOk('GET', `/api/${PLUGIN}/.well-known/openid-configuration`)) as { issuer?: string; token_endpoint?: string };
    if (discovery.issuer !== issuer) throw new Error(`Glewlwyd's discovery names issuer ${discovery.issuer}, not ${issuer}`);

    return {
      child,
      issuer,
      tokenEndpoint: discovery.token_endpoint ?? `${issuer}/token`,
      ...(oauth && { oauth }),
      browser: `${process.execPath} ${GLEWLWYD_BROWSER}`,
      browserEnv: { GLEWLWYD_BROWSER_USER: GLEWLWYD_USER.username, GLEWLWYD_BROWSER_PASSWORD: GLEWLWYD_USER.password },
      log: () => output,
      // Each code grant stores one refresh token and one access token; every other access token came from a refresh.
      refreshGrants: async () => {
        const [accessTokens, refreshTokens] = (await sqlite(`SELECT (SELECT COUNT(*) FROM gpo_access_token), (SELECT COUNT(*) FROM gpo_refresh_token);`)).trim().split('|').map(Number);
        return accessTokens! - refreshTokens!;
      },
      // What alice does on her profile page: every sign-in she gave is disabled.
      async dropRefreshTokens() {
        const person = new Session(origin);
        await person.expectOk('POST', '/api/auth/', GLEWLWYD_USER);
        const listed = JSON.parse(await person.expectOk('GET', `/api/${PLUGIN}/token?valid=true`)) as Array<{ token_hash: string; enabled: boolean }>;
        if (listed.length === 0) throw new Error('alice has no refresh token to disable');
        for (const token of listed) await person.expectOk('DELETE', `/api/${PLUGIN}/token/${encodeURIComponent(token.token_hash)}`);
      },
      // The administrator deletes every client that registered itself.
      async forgetClients() {
        const clients = JSON.parse(await admin.expectOk('GET', '/api/client/?limit=100')) as Array<{ client_id: string }>;
        const registered = clients.filter((one) => one.client_id !== CONFIDENTIAL.clientId);
        if (registered.length === 0) throw new Error('no client registered itself with Glewlwyd');
        for (const one of registered) await admin.expectOk('DELETE', `/api/client/${encodeURIComponent(one.client_id)}`);
      },
      diagnostics: () => output.slice(-3_000),
      async close() {
        await stopChild(child);
      },
    };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}
