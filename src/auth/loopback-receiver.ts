// Receives the authorization server's redirect on 127.0.0.1 (RFC 8252 §7.3): one listener on
// a free port (or the configured one) at /callback, answering the browser with a short page.
// It hands over the redirect's parameters only when `state` matches. Anything else (another
// state, another path) is answered with an error page and the sign-in goes on waiting: any
// local process can find the port, and none may end a person's sign-in by guessing it.
import { createServer, type Server } from 'node:http';
import { SignInError } from './auth-errors.js';

export interface LoopbackReceiverOptions {
  /** The port to listen on; 0 or undefined: a free one. */
  port?: number | undefined;
  /** Label shown on the browser page. */
  label: string;
  /** Told, in words, of each request refused while waiting (another state, another path). */
  refused?: ((what: string) => void) | undefined;
}

/** The redirect's query parameters (code, state, iss, or error). */
export type CallbackParams = URLSearchParams;

/** A listener waiting for one redirect. */
export class LoopbackReceiver {
  private waiter: { state: string; resolve: (params: CallbackParams) => void } | undefined;

  private constructor(
    private readonly server: Server,
    /** Where the authorization server sends the browser back to. */
    readonly redirectUrl: string,
  ) {}

  /** Listens on 127.0.0.1; throws SignInError when the port is taken. */
  static async start(options: LoopbackReceiverOptions): Promise<LoopbackReceiver> {
    let receiver: LoopbackReceiver | undefined;
    const server = createServer((request, response) => receiver?.handle(request.url ?? '/', request.method ?? 'GET', response, options));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => {
        reject(
          new SignInError(
            error.code === 'EADDRINUSE'
              ? `cannot receive the sign-in redirect: port ${options.port} on 127.0.0.1 is in use (set "oauth"."callbackPort" to a free port, or remove it)`
              : `cannot listen on 127.0.0.1 for the sign-in redirect: ${error.message}`,
          ),
        );
      });
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : options.port;
    receiver = new LoopbackReceiver(server, `http://127.0.0.1:${port}/callback`);
    return receiver;
  }

  /**
   * Resolves with the redirect's parameters once a redirect carrying `state` arrives (a code, or
   * the authorization server's error); rejects only after `deadlineMs`. A redirect with another
   * state (forged or stale) is refused with a 400 page and does not end the wait.
   */
  wait(state: string, deadlineMs: number): Promise<CallbackParams> {
    return new Promise<CallbackParams>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new SignInError(`no sign-in redirect arrived within ${Math.round(deadlineMs / 1000)} s (was the browser page completed?)`));
      }, deadlineMs);
      timer.unref();
      this.waiter = {
        state,
        resolve: (params) => {
          clearTimeout(timer);
          resolve(params);
        },
      };
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(target: string, method: string, response: import('node:http').ServerResponse, options: LoopbackReceiverOptions): void {
    const url = new URL(target, this.redirectUrl);
    if (method !== 'GET' || url.pathname !== '/callback') {
      response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found\n');
      if (this.waiter !== undefined) options.refused?.(`answered ${method} ${describePath(url.pathname)} with 404 (not the sign-in's address)`);
      return;
    }
    const waiter = this.waiter;
    if (waiter === undefined) {
      page(response, 409, 'No sign-in is waiting', 'skills-mount is not waiting for a sign-in on this address. Run skills-mount login again.');
      return;
    }
    const params = url.searchParams;
    if (params.get('state') !== waiter.state) {
      // Not this sign-in's answer: refused, and the sign-in goes on waiting for its own.
      page(response, 400, 'Sign-in refused', 'The answer did not carry the state this sign-in sent, so it is not from this sign-in. Nothing was stored; the sign-in in progress goes on.');
      options.refused?.('refused a redirect that did not carry this sign-in\'s state (forged or stale); still waiting for the sign-in');
      return;
    }
    this.waiter = undefined;
    const failed = params.has('error') || !params.has('code');
    page(response, 200, failed ? 'Sign-in not completed' : 'Signed in', failed ? 'The authorization server did not grant access. See the terminal for what happens next.' : `skills-mount received the sign-in for ${options.label}. You can close this tab.`);
    waiter.resolve(params);
  }
}

/** A request's path for the terminal: escaped by the caller's sink, and short. */
function describePath(pathname: string): string {
  return pathname.length > 80 ? `${pathname.slice(0, 80)}...` : pathname;
}

function page(response: import('node:http').ServerResponse, status: number, title: string, text: string): void {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>\n`;
  response.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }).end(html);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
