// The fetch the Streamable HTTP and SSE transports use: bounds what one response can cost
// (the SDK reads whole bodies with no limit) and reports whether a server-to-client event
// stream is open, which decides whether change notifications can arrive at all.
import { LimitExceededError } from '../errors.js';
import { oversizeMessage } from './error-mapping.js';

/** What the transports need of fetch; the global one by default. */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface BoundedFetchOptions {
  /** Largest JSON body, and largest single event of an event stream, in bytes. */
  maxMessageBytes: number;
  /** Called with true when a GET event stream opens, false when it ends. */
  onEventStream?: (open: boolean) => void;
  /** Called with the reason when a message is refused for being over the limit. */
  onOversize?: (reason: string) => void;
  fetch?: FetchLike;
}

const LF = 0x0a;

/** A fetch whose response bodies fail once a message exceeds the limit. */
export function boundedFetch(options: BoundedFetchOptions): FetchLike {
  const inner = options.fetch ?? ((input, init) => fetch(input, init));
  return async (input, init) => {
    const response = await inner(input, init);
    if (!response.body) return response;
    const isEventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const isStandaloneStream = isEventStream && (init?.method ?? 'GET').toUpperCase() === 'GET' && response.ok;
    if (isStandaloneStream) options.onEventStream?.(true);
    const limited = limitBody(response.body, options.maxMessageBytes, isEventStream, () => {
      if (isStandaloneStream) options.onEventStream?.(false);
    }, options.onOversize);
    return new Response(limited, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/**
 * Passes the body through until a message grows past `maxBytes`. For an event stream a
 * message ends at a blank line, so a long-lived stream is bounded per event, not in total.
 * `onEnd` runs once, however the body ends: done, failed, over the limit or cancelled.
 */
function limitBody(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  perEvent: boolean,
  onEnd: () => void,
  onOversize: ((reason: string) => void) | undefined,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let messageBytes = 0;
  let previousByte = -1;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Uint8Array;
      try {
        const next = await reader.read();
        if (next.done) {
          end();
          controller.close();
          return;
        }
        chunk = next.value;
      } catch (error) {
        end();
        controller.error(error);
        return;
      }
      messageBytes = perEvent ? bytesSinceEventBoundary(chunk, messageBytes, previousByte) : messageBytes + chunk.length;
      if (chunk.length > 0) previousByte = chunk[chunk.length - 1]!;
      if (messageBytes > maxBytes) {
        end();
        const error = new LimitExceededError(oversizeMessage(maxBytes));
        onOversize?.(error.message);
        controller.error(error);
        void reader.cancel(error).catch(() => undefined);
        return;
      }
      controller.enqueue(chunk);
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}

/** Bytes of the current event after `chunk`: a blank line ("\n\n", or "\n\r\n") starts a new one. */
function bytesSinceEventBoundary(chunk: Uint8Array, bytesBefore: number, previousByte: number): number {
  let lastBoundary = -1;
  for (let i = chunk.indexOf(LF); i !== -1; i = chunk.indexOf(LF, i + 1)) {
    const before = i > 0 ? chunk[i - 1]! : previousByte;
    const beforeThat = i > 1 ? chunk[i - 2]! : i === 1 ? previousByte : -1;
    if (before === LF || (before === 0x0d && beforeThat === LF)) lastBoundary = i;
  }
  return lastBoundary === -1 ? bytesBefore + chunk.length : chunk.length - lastBoundary - 1;
}
