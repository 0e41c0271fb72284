#!/usr/bin/env node
// A browser for sign-in tests, to be named by $BROWSER: given an authorization URL (its last
// argument), it signs in and consents on oidc-provider's devInteractions pages with plain HTTP
// requests and a cookie jar, following every redirect by hand, and ends with a GET of the
// redirect to the client's loopback listener, so that a sign-in completes with nobody there.
//
//   BROWSER="node test/support/oidc-browser.mjs" skills-mount login LABEL ...
//
// Environment (all optional):
//   OIDC_BROWSER_LOGIN   the account to sign in as (default "alice"; any name works)
//   OIDC_BROWSER_ACTION  "approve" (default) or "deny": press Cancel, so the client receives
//                        error=access_denied
//   OIDC_BROWSER_RECORD  a file the authorization URL is appended to (one line), so a test can
//                        check what the client asked for; no code or token is ever written
//   OIDC_BROWSER_TIMEOUT_MS  the whole run's deadline (default 20000)
// Exit: 0 when the listener answered the redirect (any status below 400), 1 otherwise, with
// why on stderr. It prints the pages it visits (paths only, no query) to stderr.
import { appendFileSync } from 'node:fs';

const MAX_STEPS = 30;
const login = process.env.OIDC_BROWSER_LOGIN || 'alice';
const action = process.env.OIDC_BROWSER_ACTION || 'approve';
const timeoutMs = Number(process.env.OIDC_BROWSER_TIMEOUT_MS) || 20_000;

/** Cookies by name and path, for one host: all the authorization server needs. */
class CookieJar {
  /** @type {Map<string, {name: string, value: string, path: string}>} */
  cookies = new Map();

  /** @param {string[]} setCookies @param {URL} url */
  store(setCookies, url) {
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const equals = pair.indexOf('=');
      if (equals <= 0) continue;
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      let path = url.pathname.replace(/\/[^/]*$/, '') || '/';
      let expired = value === '';
      for (const attribute of attributes) {
        const [key = '', ...rest] = attribute.split('=');
        const attributeValue = rest.join('=').trim();
        const lower = key.trim().toLowerCase();
        if (lower === 'path' && attributeValue.startsWith('/')) path = attributeValue;
        if (lower === 'max-age' && Number(attributeValue) <= 0) expired = true;
        if (lower === 'expires' && Date.parse(attributeValue) <= Date.now()) expired = true;
      }
      const key = `${name}\u0000${path}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, { name, value, path });
    }
  }

  /** @param {URL} url */
  header(url) {
    const matching = [...this.cookies.values()].filter(({ path }) => url.pathname === path || url.pathname.startsWith(path.endsWith('/') ? path : `${path}/`));
    // Longer paths first, as browsers send them.
    matching.sort((a, b) => b.path.length - a.path.length);
    return matching.map(({ name, value }) => `${name}=${value}`).join('; ');
  }
}

function decodeEntities(text) {
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, hex) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, decimal) => String.fromCodePoint(Number(decimal)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function attribute(tag, name) {
  const match = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  return match ? decodeEntities(match[1] ?? match[2] ?? match[3] ?? '') : undefined;
}

/** The first POST form of a page: its action and fields, the login ones filled in. */
function formOf(html, pageUrl) {
  const form = /<form\b[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return undefined;
  const tag = /<form\b[^>]*>/i.exec(form[0])[0];
  if ((attribute(tag, 'method') ?? 'get').toLowerCase() !== 'post') return undefined;
  const fields = new URLSearchParams();
  for (const [input] of form[1].matchAll(/<input\b[^>]*>/gi)) {
    const name = attribute(input, 'name');
    if (name === undefined) continue;
    const type = (attribute(input, 'type') ?? 'text').toLowerCase();
    if (name === 'login') fields.set(name, login);
    else if (type === 'password') fields.set(name, 'any-password');
    else if ((type === 'checkbox' || type === 'radio') && !/\schecked\b/i.test(input)) continue;
    else fields.set(name, attribute(input, 'value') ?? '');
  }
  return { action: new URL(attribute(tag, 'action') ?? pageUrl.href, pageUrl), fields };
}

function cancelLinkOf(html, pageUrl) {
  const link = /<a\b[^>]*href\s*=\s*"([^"]*)"[^>]*>\s*\[\s*Cancel\s*\]\s*<\/a>/i.exec(html);
  return link ? new URL(decodeEntities(link[1]), pageUrl) : undefined;
}

function fail(message) {
  process.stderr.write(`oidc-browser: ${message}\n`);
  process.exit(1);
}

async function main() {
  const start = process.argv.at(-1);
  if (!start || !/^https?:\/\//.test(start) || process.argv.length < 3) fail('usage: oidc-browser.mjs AUTHORIZATION_URL (the URL last)');
  if (process.env.OIDC_BROWSER_RECORD) appendFileSync(process.env.OIDC_BROWSER_RECORD, `${start}\n`);
  const deadline = AbortSignal.timeout(timeoutMs);
  const jar = new CookieJar();
  const authorizationServer = new URL(start).origin;
  /** @type {{ url: URL, method: string, body?: URLSearchParams }} */
  let next = { url: new URL(start), method: 'GET' };

  for (let step = 0; step < MAX_STEPS; step++) {
    const { url, method, body } = next;
    if (url.origin !== authorizationServer) {
      // The redirect back to the client: a browser carries none of the server's cookies there.
      process.stderr.write(`oidc-browser: back to the client at ${url.origin}${url.pathname}\n`);
      const response = await fetch(url, { redirect: 'manual', signal: deadline }).catch((error) => fail(`the client's listener at ${url.origin}${url.pathname} did not answer: ${error.cause?.code ?? error.message}`));
      await response.arrayBuffer().catch(() => {});
      if (response.status >= 400) fail(`the client's listener answered HTTP ${response.status}`);
      return;
    }
    process.stderr.write(`oidc-browser: ${method} ${url.pathname}\n`);
    const headers = { accept: 'text/html' };
    const cookie = jar.header(url);
    if (cookie) headers.cookie = cookie;
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(url, { method, headers, body, redirect: 'manual', signal: deadline }).catch((error) =>
      fail(`${method} ${url.origin}${url.pathname} failed: ${error.cause?.code ?? error.message}`),
    );
    jar.store(response.headers.getSetCookie(), url);
    if (response.status >= 300 && response.status < 400) {
      await response.arrayBuffer().catch(() => {});
      const location = response.headers.get('location');
      if (!location) fail(`HTTP ${response.status} from ${url.pathname} without a Location`);
      next = { url: new URL(location, url), method: 'GET' };
      continue;
    }
    const html = await response.text();
    if (response.status !== 200) {
      const text = html.replace(/<style[\s\S]*?<\/style>/gi, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();
      fail(`HTTP ${response.status} from ${url.pathname}: ${decodeEntities(text).slice(0, 400)}`);
    }
    if (action === 'deny') {
      const cancel = cancelLinkOf(html, url);
      if (!cancel) fail(`no Cancel link on ${url.pathname}`);
      next = { url: cancel, method: 'GET' };
      continue;
    }
    const form = formOf(html, url);
    if (!form) fail(`no form to submit on ${url.pathname}`);
    next = { url: form.action, method: 'POST', body: form.fields };
  }
  fail(`still not back at the client after ${MAX_STEPS} pages`);
}

main().catch((error) => fail(error?.stack ?? String(error)));
