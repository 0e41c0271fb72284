#!/usr/bin/env node
// The client command the conformance suite's authorization scenarios run: `auth-adapter.mjs URL`.
// skills-mount is the client: a config entry for the suite's server (with the "oauth" fields the
// scenario's context calls for), `skills-mount login` with a $BROWSER script that follows the
// authorization server's redirect back to the loopback listener, then `skills-mount snapshot`,
// which connects with the stored tokens and lists the server as a mount would. Everything lives
// in a temporary XDG home, removed at the end. Exit 0 when login succeeded.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SKILLS_MOUNT = process.env.SKILLS_MOUNT_BIN || path.join(REPO, 'dist', 'cli', 'skills-mount.js');
const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const log = (line) => process.stderr.write(`auth-adapter: ${line}\n`);
/** The client ID metadata document URL the suite's CIMD scenarios accept. */
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';

if (!url || !/^https?:\/\//.test(url)) {
  log(`usage: auth-adapter.mjs URL (got ${JSON.stringify(url)})`);
  process.exit(2);
}

const home = await mkdtemp(path.join(os.tmpdir(), 'skills-mount-auth-conformance-'));
let exitCode = 1;
try {
  const oauth = await oauthFor(scenario, context, home);
  const config = path.join(home, 'mcp.json');
  await writeFile(config, JSON.stringify({ mcpServers: { suite: { type: 'http', url, oauth } } }, null, 2));
  // The browser: fetch the authorization URL and follow its redirects (to the loopback listener).
  const browser = path.join(home, 'browser.sh');
  await writeFile(browser, `#!/bin/sh\nexec "${process.execPath}" -e 'fetch(process.argv[1]).then((r) => r.text()).catch(() => {})' "$1"\n`);
  await chmod(browser, 0o700);
  const env = { ...process.env, XDG_CONFIG_HOME: home, XDG_CACHE_HOME: home, BROWSER: browser };
  // As a person would: sign in, use the server; when the snapshot says the server needs a new
  // sign-in (its authorization server changed), sign in again and use it again.
  for (let round = 1; round <= 2; round++) {
    const login = await run([SKILLS_MOUNT, 'login', 'suite', '--config', config, '--wait', '15', '--timeout', '5'], env);
    log(`login exited ${login.code}`);
    if (login.code !== 0) break;
    exitCode = 0;
    const snapshot = await run([SKILLS_MOUNT, 'snapshot', path.join(home, `snapshot-${round}`), '--config', config, '--timeout', '5', '--no-disk-cache'], env);
    log(`snapshot exited ${snapshot.code}`);
    if (!/needs login/.test(snapshot.stderr)) break;
  }
} catch (error) {
  log(String(error?.message ?? error));
} finally {
  await rm(home, { recursive: true, force: true }).catch(() => undefined);
}
process.exit(exitCode);

/** The entry's "oauth" object for a scenario: the credentials its context hands out, written to files where skills-mount reads files. */
async function oauthFor(name, ctx, dir) {
  switch (name) {
    case 'auth/pre-registration':
      return { clientId: ctx.client_id, clientSecret: ctx.client_secret };
    case 'auth/client-credentials-basic':
      return { grantType: 'client_credentials', clientId: ctx.client_id, clientSecret: ctx.client_secret };
    case 'auth/client-credentials-jwt': {
      const keyFile = path.join(dir, 'client-key.pem');
      await writeFile(keyFile, ctx.private_key_pem, { mode: 0o600 });
      return { grantType: 'client_credentials', clientId: ctx.client_id, privateKeyFile: keyFile, privateKeyAlgorithm: ctx.signing_algorithm || 'ES256' };
    }
    case 'auth/wif-jwt-bearer': {
      const assertionFile = path.join(dir, 'workload-token');
      await writeFile(assertionFile, ctx.valid_jwt, { mode: 0o600 });
      return { grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer', clientId: ctx.client_id, assertionFile };
    }
    case 'auth/enterprise-managed-authorization': {
      const idTokenFile = path.join(dir, 'id-token');
      await writeFile(idTokenFile, ctx.idp_id_token, { mode: 0o600 });
      return {
        grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
        clientId: ctx.client_id,
        clientSecret: ctx.client_secret,
        idpTokenEndpoint: ctx.idp_token_endpoint,
        idpClientId: ctx.idp_client_id,
        idTokenFile,
      };
    }
    default:
      return { clientMetadataUrl: CIMD_URL };
  }
}

function run(args, env) {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { env, timeout: 40_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      process.stderr.write(stderr);
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}
