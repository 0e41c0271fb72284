#!/usr/bin/env node
// A browser for the Glewlwyd sign-in test, to be named by $BROWSER: given an authorization URL
// (its last argument), it does what a person does on Glewlwyd's login page, with plain HTTP
// requests and a cookie jar: the authorization request sends it to login.html; it signs in
// there (POST /api/auth/, what the page's form sends), grants the client the scopes asked for
// (PUT /api/auth/grant/CLIENT_ID, what the consent button sends), presses Continue (a GET of
// the page's callback_url with g_continue added), and follows the redirect to the client's
// loopback listener.
//
//   GLEWLWYD_BROWSER_USER=alice GLEWLWYD_BROWSER_PASSWORD=... BROWSER="node idp-glewlwyd-browser.mjs" skills-mount login LABEL
//
// OIDC_BROWSER_RECORD (optional): a file the authorization URL is appended to (one line).
// Exit: 0 when the listener answered the redirect (status below 400), 1 otherwise, with why on stderr.
import { appendFileSync } from 'node:fs';

const user = process.env.GLEWLWYD_BROWSER_USER;
const password = process.env.GLEWLWYD_BROWSER_PASSWORD;
const timeoutMs = 20_000;

function fail(message) {
  process.stderr.write(`glewlwyd-browser: ${message}\n`);
  process.exit(1);
}

/** Cookies by name, for the one host the authorization server is. */
const jar = new Map();
function storeCookies(response) {
  for (const line of response.headers.getSetCookie()) {
    const [pair = ''] = line.split(';');
    const equals = pair.indexOf('=');
    if (equals <= 0) continue;
    const name = pair.slice(0, equals).trim();
    const value = pair.slice(equals + 1).trim();
    if (value === '' || /max-age=0\b/i.test(line)) jar.delete(name);
    else jar.set(name, value);
  }
}
const cookieHeader = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');

async function call(method, url, body) {
  const headers = { accept: 'application/json, text/html' };
  if (jar.size > 0) headers.cookie = cookieHeader();
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs), ...(body !== undefined && { body: JSON.stringify(body) }) }).catch((error) =>
    fail(`${method} ${url.origin}${url.pathname} failed: ${error.cause?.code ?? error.message}`),
  );
  storeCookies(response);
  return response;
}

async function authorize(start) {
  const response = await call('GET', start);
  await response.arrayBuffer().catch(() => {});
  const location = response.headers.get('location');
  if (response.status < 300 || response.status >= 400 || !location) fail(`the authorization request answered HTTP ${response.status} without a redirect`);
  return new URL(location, start);
}

async function main() {
  const address = process.argv.at(-1);
  if (!address || !/^https?:\/\//.test(address) || process.argv.length < 3) fail('usage: idp-glewlwyd-browser.mjs AUTHORIZATION_URL (the URL last)');
  if (!user || !password) fail('GLEWLWYD_BROWSER_USER and GLEWLWYD_BROWSER_PASSWORD must be set');
  if (process.env.OIDC_BROWSER_RECORD) appendFileSync(process.env.OIDC_BROWSER_RECORD, `${address}\n`);
  const start = new URL(address);
  let next = await authorize(start);
  if (next.origin === start.origin) {
    // Glewlwyd's login page: sign in, then grant the client what it asks for.
    process.stderr.write(`glewlwyd-browser: at ${next.pathname}: signing in as ${user}\n`);
    const signedIn = await call('POST', new URL('/api/auth/', start), { username: user, password });
    if (signedIn.status !== 200) fail(`signing in answered HTTP ${signedIn.status}: ${(await signedIn.text()).slice(0, 300)}`);
    const clientId = start.searchParams.get('client_id') ?? fail('the authorization URL has no client_id');
    const scope = (start.searchParams.get('scope') ?? '').split(' ').filter(Boolean).join(',');
    const granted = await call('PUT', new URL(`/api/auth/grant/${encodeURIComponent(clientId)}`, start), { scope });
    if (granted.status !== 200) fail(`granting ${scope} to the client answered HTTP ${granted.status}: ${(await granted.text()).slice(0, 300)}`);
    // The page's Continue button.
    const callback = next.searchParams.get('callback_url') ?? fail(`${next.pathname} has no callback_url`);
    const continued = new URL(callback, start);
    if (continued.origin !== start.origin) fail(`the login page would continue to another origin (${continued.origin})`);
    next = await authorize(new URL(`${continued.href}${continued.search ? '&' : '?'}g_continue`));
    if (next.origin === start.origin) fail(`still sent to ${next.pathname}${next.search} after signing in and granting ${scope}`);
  }
  process.stderr.write(`glewlwyd-browser: back to the client at ${next.origin}${next.pathname}${next.searchParams.has('error') ? ` with error ${next.searchParams.get('error')}: ${next.searchParams.get('error_description') ?? ''}` : ''}\n`);
  const back = await fetch(next, { redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) }).catch((error) => fail(`the client's listener did not answer: ${error.cause?.code ?? error.message}`));
  await back.arrayBuffer().catch(() => {});
  if (back.status >= 400) fail(`the client's listener answered HTTP ${back.status}`);
}

main().catch((error) => fail(error?.stack ?? String(error)));
