// What a connection tells whoever watches its requests (the metrics): each request's start, and
// its end with a coarse outcome and its duration. Watching never changes a request or its answer.
import { ProtocolError as SdkProtocolError, SdkError } from '@modelcontextprotocol/client';
import { LimitExceededError, NotFoundError, NotSupportedError, ProtocolError } from '../errors.js';
import { jsonRpcAnswerIn, oversizeIn } from './error-mapping.js';

/** How one request ended, in a fixed set of words (a server cannot add any). */
export type RequestOutcome = 'ok' | 'timeout' | 'unavailable' | 'server_error' | 'not_found' | 'not_supported' | 'protocol_error' | 'too_large';

export const REQUEST_OUTCOMES: readonly RequestOutcome[] = ['ok', 'timeout', 'unavailable', 'server_error', 'not_found', 'not_supported', 'protocol_error', 'too_large'];

/** `server` is the configured label, `method` the MCP method sent. */
export interface RequestObserver {
  started(server: string, method: string): void;
  finished(server: string, method: string, outcome: RequestOutcome, seconds: number): void;
}

/** The outcome of a failed request: `error` as the SDK threw it, `mapped` the domain error it became. */
export function requestOutcome(error: unknown, mapped: Error): RequestOutcome {
  if (error instanceof SdkError && error.code === 'REQUEST_TIMEOUT') return 'timeout';
  if (mapped instanceof NotFoundError) return 'not_found';
  if (mapped instanceof NotSupportedError) return 'not_supported';
  if (mapped instanceof LimitExceededError || oversizeIn(error) !== undefined || oversizeIn(mapped) !== undefined) return 'too_large';
  if (mapped instanceof ProtocolError) return 'protocol_error';
  // Any other JSON-RPC error is the server's answer; the rest is a connection that failed.
  if (error instanceof SdkProtocolError || jsonRpcAnswerIn(error) !== undefined) return 'server_error';
  return 'unavailable';
}
