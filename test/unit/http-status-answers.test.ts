// Item 1 of issue 22, on the error mapping alone: which failed POSTs carry the server's
// answer (a JSON-RPC error with the request's id, whatever the HTTP status) and which mean the
// connection or session is gone (no answer in the body, a null id, 404 "Session not found").
import { SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { NotFoundError, NotSupportedError, UnavailableError } from '../../src/errors.js';
import { isConnectionLoss, jsonRpcAnswerIn, mapRequestError } from '../../src/mcp/error-mapping.js';

function httpError(status: number, text: string): SdkHttpError {
  return new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `Error POSTing to endpoint: ${text}`, { status, statusText: '', text });
}
const answer = (code: number, id: unknown = 7) => JSON.stringify({ jsonrpc: '2.0', id, error: { code, message: `code ${code}` } });
const context = { server: 's', method: 'skills/list' };

describe('a JSON-RPC error with an HTTP error status', () => {
  for (const status of [400, 403, 404, 409, 500]) {
    it(`HTTP ${status} with the request's id is an answer, mapped by its code`, () => {
      expect(jsonRpcAnswerIn(httpError(status, answer(-32601)))).toEqual({ code: -32601, message: 'code -32601' });
      expect(isConnectionLoss(httpError(status, answer(-32601)))).toBe(false);
      expect(mapRequestError(httpError(status, answer(-32601)), context, 1_000)).toBeInstanceOf(NotSupportedError);
      expect(mapRequestError(httpError(status, answer(-32602, 'req-1')), context, 1_000)).toBeInstanceOf(NotFoundError);
      expect(mapRequestError(httpError(status, answer(-32603)), context, 1_000).message).toBe('s: skills/list: server error -32603: code -32603');
    });
  }

  it('the legacy SSE transport\'s plain Error quoting the body is read the same way', () => {
    expect(jsonRpcAnswerIn(new Error(`Error POSTing to endpoint (HTTP 404): ${answer(-32601)}`))).toEqual({ code: -32601, message: 'code -32601' });
  });

  it('a 404 "Session not found", a null id, or a body that is no JSON-RPC error: the session is gone, not answered', () => {
    expect(jsonRpcAnswerIn(httpError(404, answer(-32001, null)))).toBeUndefined();
    expect(jsonRpcAnswerIn(httpError(404, answer(-32001, 3)))).toBeUndefined();
    expect(isConnectionLoss(httpError(404, answer(-32001, null)))).toBe(true);
    expect(jsonRpcAnswerIn(httpError(400, answer(-32600, null)))).toBeUndefined();
    expect(jsonRpcAnswerIn(httpError(404, 'not found: the MCP endpoint is /mcp'))).toBeUndefined();
    expect(isConnectionLoss(httpError(404, 'not found: the MCP endpoint is /mcp'))).toBe(true);
    expect(mapRequestError(httpError(503, 'upstream down'), context, 1_000)).toBeInstanceOf(UnavailableError);
  });
});
