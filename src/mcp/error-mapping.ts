// SDK v2 failures as domain errors: JSON-RPC errors from the peer (ProtocolError), local
// ones (SdkError: timeouts, closed connections, results that fail their schema), network
// failures, and the connect-time failures that mean the two sides share no revision.
import { ProtocolError as SdkProtocolError, SdkError, SdkHttpError, UnsupportedProtocolVersionError } from '@modelcontextprotocol/client';
import { LimitExceededError, NotFoundError, NotSupportedError, ProtocolError, UnavailableError, type ErrorContext } from '../errors.js';
import { LEGACY_REVISION, MODERN_REVISION, type ProtocolVersionChoice } from '../protocol/revisions.js';
import { escapeForLog } from '../format/escape.js';

const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
/** The 2025 revisions' "resource not found"; the final text uses -32602. */
const RESOURCE_NOT_FOUND = -32002;

/** The domain error for a failed request; the message names server, method and URI. */
export function mapRequestError(error: unknown, context: ErrorContext, timeoutMs: number): Error {
  const withCause = { ...context, cause: error };
  if (error instanceof SdkProtocolError) return mapJsonRpcError(error.code, error.message, withCause);
  // A JSON-RPC error that came with an HTTP error status is the server's answer all the same.
  const answer = jsonRpcAnswerIn(error);
  if (answer) return mapJsonRpcError(answer.code, answer.message, withCause);
  if (error instanceof SdkError) {
    switch (error.code) {
      case 'REQUEST_TIMEOUT':
        return new UnavailableError(`no answer within ${timeoutMs} ms`, withCause);
      case 'CONNECTION_CLOSED':
      case 'NOT_CONNECTED':
        return new UnavailableError('connection closed', withCause);
      case 'INVALID_RESULT':
      case 'UNSUPPORTED_RESULT_TYPE':
        return new ProtocolError(`malformed result: ${escapeForLog(firstLine(error.message))}`, withCause);
      default:
        return new UnavailableError(escapeForLog(firstLine(error.message)), withCause);
    }
  }
  if (error instanceof Error && (error.name === 'ZodError' || error.name === '$ZodError')) {
    return new ProtocolError(`malformed result: ${escapeForLog(firstLine(error.message))}`, withCause);
  }
  return new UnavailableError(escapeForLog(firstLine(describeError(error))), withCause);
}

function mapJsonRpcError(code: number, message: string, context: ErrorContext): Error {
  const detail = escapeForLog(firstLine(message));
  switch (code) {
    case METHOD_NOT_FOUND:
      return new NotSupportedError('method not supported by the server', context);
    case INVALID_PARAMS:
    case RESOURCE_NOT_FOUND:
      return new NotFoundError(`not found (${detail})`, context);
    default:
      return new UnavailableError(`server error ${code}: ${detail}`, context);
  }
}

/** "Session not found": the 2025 Streamable HTTP answer (with HTTP 404) to a session the server forgot. */
const SESSION_NOT_FOUND = -32001;

/**
 * The JSON-RPC error response carried by a failed HTTP POST (the SDK throws it as an
 * SdkHttpError for 404, 403, 409 and the 400s it does not unwrap itself; the legacy SSE
 * transport as a plain Error): the server's answer to the request, not a lost connection.
 * Undefined for every other error, for an error with a null id (not an answer to any
 * request) and for a 404 "Session not found" (the session is gone: reconnect).
 */
export function jsonRpcAnswerIn(error: unknown): { code: number; message: string } | undefined {
  if (!(error instanceof Error)) return undefined;
  let body: string | undefined;
  if (error instanceof SdkHttpError) {
    const text = (error.data as { text?: unknown } | undefined)?.text;
    body = typeof text === 'string' ? text : undefined;
  } else if (error.message.startsWith('Error POSTing to endpoint')) {
    const start = error.message.indexOf('{');
    body = start === -1 ? undefined : error.message.slice(start);
  }
  if (body === undefined || body.length > MAX_ANSWER_BODY_CHARS) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const response = parsed as { jsonrpc?: unknown; id?: unknown; error?: { code?: unknown; message?: unknown } } | null;
  if (response === null || typeof response !== 'object' || response.jsonrpc !== '2.0') return undefined;
  if (typeof response.id !== 'string' && typeof response.id !== 'number') return undefined;
  const code = response.error?.code;
  if (typeof code !== 'number' || !Number.isInteger(code)) return undefined;
  if (code === SESSION_NOT_FOUND) return undefined;
  const message = typeof response.error?.message === 'string' ? response.error.message : '';
  return { code, message };
}

/** An error body longer than this is not parsed (the bounded fetch already caps it; this keeps mapping cheap). */
const MAX_ANSWER_BODY_CHARS = 64 * 1024;

/**
 * Why a failed handshake means the two sides share no usable revision, naming what each
 * side offered; undefined for every other failure (those are retried).
 */
export function classifyConnectError(error: unknown, choice: ProtocolVersionChoice): string | undefined {
  const offered = choice === 'negotiate' ? `${MODERN_REVISION}, then the ${LEGACY_REVISION} handshake` : `only ${choice} (pinned)`;
  if (error instanceof UnsupportedProtocolVersionError) {
    const supported: readonly string[] = (error.data as { supported?: string[] } | undefined)?.supported ?? [];
    return `protocol version mismatch: the server supports ${supported.length ? supported.map(escapeForLog).join(', ') : 'nothing it named'}; skills-mount offered ${offered}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  // Over Streamable HTTP the 2025 handshake's -32022 arrives as an HTTP 400 whose body is the JSON-RPC error.
  const unsupported = jsonRpcErrorIn(message);
  if (unsupported?.code === UNSUPPORTED_PROTOCOL_VERSION) {
    const supported = Array.isArray(unsupported.data?.supported) ? unsupported.data.supported.filter((v): v is string => typeof v === 'string') : [];
    return `protocol version mismatch: the server supports ${supported.length ? supported.map(escapeForLog).join(', ') : 'nothing it named'}; skills-mount offered ${offered}`;
  }
  if (error instanceof SdkError && error.code === 'ERA_NEGOTIATION_FAILED' && /pinned|fall back/.test(message)) {
    return `protocol version mismatch: the server did not offer ${MODERN_REVISION} through server/discover; skills-mount offered ${offered}`;
  }
  const legacyCounterOffer = /protocol version is not supported: (\S+)/.exec(message);
  if (legacyCounterOffer) {
    return `protocol version mismatch: the server answered with ${escapeForLog(legacyCounterOffer[1]!)}; skills-mount offered ${offered}`;
  }
  return undefined;
}

const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** The JSON-RPC error object embedded in a transport error's message, if there is one. */
function jsonRpcErrorIn(message: string): { code?: unknown; data?: { supported?: unknown } } | undefined {
  const start = message.indexOf('{"jsonrpc"');
  if (start === -1) return undefined;
  try {
    const parsed = JSON.parse(message.slice(start)) as { error?: { code?: unknown; data?: { supported?: unknown } } };
    return parsed.error;
  } catch {
    return undefined;
  }
}

/** Network-level failures that mean the server (or its session) is gone, not that one request went wrong. */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** True when a request or transport error means the connection is dead and must be replaced. */
export function isConnectionLoss(error: unknown): boolean {
  if (jsonRpcAnswerIn(error) || oversizeIn(error) !== undefined) return false;
  // 404 on a request carrying a session id: the server restarted and forgot the session.
  if (error instanceof SdkHttpError) return error.status === 404;
  if (error instanceof SdkError && error.code === 'CONNECTION_CLOSED') return true;
  if (!(error instanceof Error) || error.name === 'AbortError') return false;
  if (/^(SSE stream disconnected|Failed to reconnect SSE stream|Maximum reconnection attempts|SSE error)/.test(error.message)) return true;
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return true;
    if (cause instanceof TypeError && cause.message === 'fetch failed') return true;
  }
  return false;
}

/** What a message over the mount's cap is called wherever it is refused (stdio and HTTP): the mount's limit, not the server hanging up. */
export function oversizeMessage(maxBytes: number): string {
  return `response larger than the mount's own cap of ${maxBytes} bytes (a message exceeds the ${maxBytes}-byte limit)`;
}

/**
 * The mount's own refusal of a message over its cap, however the SDK wrapped it (an SSE
 * response stream reports it as "SSE stream disconnected: <error>"): only that request failed.
 */
export function oversizeIn(error: unknown): string | undefined {
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof LimitExceededError) return cause.message;
    const match = OVERSIZE_TEXT.exec(cause.message);
    if (match) return match[0];
  }
  return undefined;
}

const OVERSIZE_TEXT = /response larger than the mount's own cap of \d+ bytes \(a message exceeds the \d+-byte limit\)/;

export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause : undefined;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return cause ? `${error.message} (${typeof code === 'string' ? code : cause.message})` : error.message;
}

export function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
