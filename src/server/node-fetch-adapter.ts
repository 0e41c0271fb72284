// node:http <-> fetch: turns an IncomingMessage into a web Request and streams a web
// Response back. The whole adapter the SDK's web-standard handlers need (see docs/serving.md).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SkillsMountError } from '../errors.js';

export class BodyTooLargeError extends SkillsMountError {
  override name = 'BodyTooLargeError';
  readonly code = 'BODY_TOO_LARGE';
}

/** A request no URL can be made of: a Host header that is not a bare host[:port]. */
export class BadHostError extends SkillsMountError {
  override name = 'BadHostError';
  readonly code = 'BAD_HOST';
}

// host[:port], IPv6 in brackets; no credentials, path or spaces (`evil.example@127.0.0.1`).
const BARE_HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[^\s@/?#\\[\]:]+)(?::\d{1,5})?$/;

/** The request as a web Request with its body buffered (at most `maxBodyBytes`); aborted when the client goes. Throws BadHostError, BodyTooLargeError. */
export async function toWebRequest(req: IncomingMessage, res: ServerResponse, maxBodyBytes: number): Promise<{ request: Request; body: Buffer | undefined }> {
  const aborter = new AbortController();
  // 'close' on the response fires when it ends or when the socket dies first.
  res.once('close', () => {
    if (!res.writableFinished) aborter.abort();
  });
  let body: Buffer | undefined;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBodyBytes) throw new BodyTooLargeError(`request body over ${maxBodyBytes} bytes`);
      chunks.push(chunk);
    }
    body = Buffer.concat(chunks);
  }
  const host = req.headers.host ?? 'localhost';
  if (!BARE_HOST.test(host)) throw new BadHostError(`invalid Host header ${JSON.stringify(host)}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const request = new Request(`http://${host}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    ...(body !== undefined && { body: new Uint8Array(body) }),
    signal: aborter.signal,
  });
  return { request, body };
}

/** Writes `response` to `res`, streaming its body (SSE included) with backpressure. */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  // An event stream may wait long for its first event; its client learns at once that it is open.
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) res.flushHeaders();
  const reader = response.body.getReader();
  res.once('close', () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
      if (res.destroyed) break;
    }
  } finally {
    res.end();
  }
}
