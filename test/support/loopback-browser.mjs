#!/usr/bin/env node
// A browser for sign-in tests, to be named by $BROWSER, for authorization servers that approve
// at once (test/support/jwt-auth-server.ts): given an authorization URL (its last argument), it
// follows the redirects by hand and ends with a GET of the redirect to the client's loopback
// listener. With LOOPBACK_BROWSER_PROBES=1 it first plays the other local process that found
// the listener's port: a redirect with a forged state, one with no parameters, /favicon.ico.
//
// Environment:
//   LOOPBACK_BROWSER_RECORD  a file to append one JSON line per request to the listener to:
//                            {"what", "status", "title"} (never a code or token)
//   LOOPBACK_BROWSER_PROBES  "1": the hostile requests first
// Exit: 0 when the listener answered the real redirect, 1 otherwise, with why on stderr.
import { appendFileSync } from 'node:fs';

const record = process.env.LOOPBACK_BROWSER_RECORD;
const target = new URL(process.argv.at(-1) ?? '');
const redirectUri = new URL(target.searchParams.get('redirect_uri') ?? '');

/** GETs `url` on the listener and records how it answered. */
async function visit(what, url) {
  const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(10_000) });
  const body = await response.text();
  const title = /<title>([^<]*)<\/title>/.exec(body)?.[1] ?? body.trim().slice(0, 40);
  if (record) appendFileSync(record, `${JSON.stringify({ what, status: response.status, title })}\n`);
  return response.status;
}

try {
  if (process.env.LOOPBACK_BROWSER_PROBES === '1') {
    const forged = new URL(redirectUri);
    forged.searchParams.set('code', 'forged-code');
    forged.searchParams.set('state', 'forged-state');
    await visit('forged state', forged);
    await visit('no parameters', redirectUri);
    await visit('favicon', new URL('/favicon.ico', redirectUri));
    const forgedError = new URL(redirectUri);
    forgedError.searchParams.set('error', 'access_denied');
    forgedError.searchParams.set('state', 'forged-state');
    await visit('forged error', forgedError);
  }
  let next = target;
  for (let step = 0; step < 10; step++) {
    if (next.origin === redirectUri.origin && next.pathname === redirectUri.pathname) {
      const status = await visit('redirect', next);
      process.exit(status < 400 ? 0 : 1);
    }
    // A browser where the person is signed in at the authorization server already.
    const response = await fetch(next, { redirect: 'manual', headers: { cookie: 'session=signed-in' }, signal: AbortSignal.timeout(10_000) });
    await response.text();
    const location = response.headers.get('location');
    if (location === null) {
      process.stderr.write(`loopback-browser: ${next.origin}${next.pathname} answered ${response.status} without a redirect\n`);
      process.exit(1);
    }
    next = new URL(location, next);
  }
  process.stderr.write('loopback-browser: too many redirects\n');
  process.exit(1);
} catch (error) {
  process.stderr.write(`loopback-browser: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
