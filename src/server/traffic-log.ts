// --verbose: one log line per request a transport carries ("<method> [<uri>] ok|error <code>
// <ms>"), the format bench/lib/request-log.mjs counts. Wraps a transport; changes no message.
import type { Transport } from '@modelcontextprotocol/server';
import type { Log } from '../log.js';

type Message = Parameters<Transport['send']>[0];
type Handler = NonNullable<Transport['onmessage']>;

/** `transport`, logging each request when its response is sent. */
export function logTraffic(transport: Transport, log: Log): Transport {
  const pending = new Map<string | number, { where: string; started: number }>();
  const send = transport.send.bind(transport);
  transport.send = (message: Message, options) => {
    const reply = message as { id?: string | number; result?: unknown; error?: { code: number } };
    const request = reply.id === undefined ? undefined : pending.get(reply.id);
    if (request && ('result' in reply || 'error' in reply)) {
      pending.delete(reply.id!);
      const ms = `${(performance.now() - request.started).toFixed(1)} ms`;
      log(reply.error ? `${request.where} error ${reply.error.code} ${ms}` : `${request.where} ok ${ms}`);
    }
    return send(message, options);
  };
  let handler: Handler | undefined;
  const observe: Handler = (message, extra) => {
    const request = message as { id?: string | number; method?: string; params?: { uri?: unknown } };
    if (request.id !== undefined && typeof request.method === 'string') {
      const uri = request.params?.uri;
      pending.set(request.id, { where: typeof uri === 'string' ? `${request.method} ${uri}` : request.method, started: performance.now() });
    }
    handler?.(message, extra);
  };
  // Protocol.connect assigns onmessage after this; keep ours in front of whatever it sets.
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => (handler ? observe : undefined),
    set: (value: Handler | undefined) => {
      handler = value;
    },
  });
  return transport;
}
