// Which Host and Origin headers a server bound to this machine's loopback answers: the
// defence against DNS rebinding, where a web page's own name comes to resolve to 127.0.0.1.
import { BlockList, isIP } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** True for `localhost` and every address of 127.0.0.0/8 and ::1 (bracketed or not, v4-mapped too). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === 'localhost') return true;
  const family = isIP(bare);
  return family !== 0 && LOOPBACK.check(bare, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The Host and Origin checks of a loopback-bound server: a request passes only when its Host
 * names a loopback address, `localhost` or one of `alsoAllowed` (the bound name), and its
 * Origin, when it has one, is an http(s) origin on such a host. Else a 403 JSON-RPC error.
 */
export function loopbackRefusal(request: Request, alsoAllowed: readonly string[] = []): Response | undefined {
  const allowed = (hostname: string): boolean => isLoopbackHost(hostname) || alsoAllowed.includes(hostname);
  const host = request.headers.get('host');
  const hostname = host === null ? undefined : hostnameOf(`http://${host}`);
  if (hostname === undefined || !allowed(hostname)) return refusal(host === null ? 'Missing Host header' : `Host ${JSON.stringify(host)} is not this machine's loopback`);
  const origin = request.headers.get('origin');
  if (origin === null || origin === '') return undefined;
  const originHost = /^https?:\/\//i.test(origin) ? hostnameOf(origin) : undefined;
  if (originHost === undefined || !allowed(originHost)) return refusal(`Origin ${JSON.stringify(origin)} is not this machine's loopback`);
  return undefined;
}

/** How `host` (a name or address, as given to listen) appears as a URL hostname. */
export function urlHostname(host: string): string {
  return hostnameOf(`http://${isIP(host) === 6 ? `[${host}]` : host}`) ?? host.toLowerCase();
}

// Only a bare [scheme://]host[:port]: `evil.example@127.0.0.1` has hostname 127.0.0.1 too.
function hostnameOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    const bare = url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === '';
    return bare && !/[@/?#\\]/.test(text.slice(text.indexOf('//') + 2)) ? url.hostname : undefined;
  } catch {
    return undefined;
  }
}

function refusal(message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }, { status: 403 });
}
