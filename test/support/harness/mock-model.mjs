// A mock model server on 127.0.0.1 for the real coding-agent harnesses: it speaks the Anthropic
// Messages API, the OpenAI Responses API and the Gemini API (streaming over SSE where each harness
// asks for it), records every request, and answers from a script the test gives. It knows wire
// formats only, never which skills a harness has or how a harness loads them (harnesses.ts does).
import http from 'node:http';
import zlib from 'node:zlib';

/** Header names never recorded: they carry (test) credentials. */
const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key', 'api-key', 'cookie', 'proxy-authorization']);

/**
 * Starts the mock on 127.0.0.1 (a free port). `script(kind, request, turn)` answers each model
 * request: `kind` is `options.harness` (or the API when none was given), `turn` the number of model
 * turns already in the request's conversation; it returns text, `{ text }` or `{ tool, input }`.
 */
export async function startMockModel(options = {}) {
  const script = options.script ?? (() => 'ok');
  const requests = [];
  const server = http.createServer((req, res) => {
    readBody(req)
      .then((raw) => {
        const record = recordOf(req, raw);
        requests.push(record);
        route(record, res, (api) => script(options.harness ?? api, record, turnOf(api, record.body)));
      })
      .catch((error) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `mock model: ${error.message}` } }));
      });
  });
  // The runner names this server as every harness's HTTP(S) proxy (NO_PROXY=127.0.0.1): an attempt
  // to reach another host arrives here as a CONNECT (or an absolute URL), is recorded and refused.
  server.on('connect', (req, socket) => {
    requests.push({ method: 'CONNECT', path: '', query: {}, headers: {}, body: null, api: undefined, outbound: req.url ?? '', time: Date.now() });
    socket.on('error', () => {});
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
  });
  // Harnesses keep connections alive; close() must not wait for them.
  const sockets = new Set();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    /** The recorded requests that asked a model for an answer (not probes, token counts or logs). */
    modelRequests: () => requests.filter((r) => r.api !== undefined),
    /** The hosts a harness tried to reach through the proxy (anything but 127.0.0.1). */
    outboundAttempts: () => requests.filter((r) => r.outbound !== undefined).map((r) => r.outbound),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('error', reject);
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const encoding = String(req.headers['content-encoding'] ?? '').toLowerCase();
      try {
        if (encoding === 'gzip') resolve(zlib.gunzipSync(raw));
        else if (encoding === 'br') resolve(zlib.brotliDecompressSync(raw));
        else if (encoding === 'deflate') resolve(zlib.inflateSync(raw));
        else resolve(raw);
      } catch (error) {
        reject(error);
      }
    });
  });
}

function recordOf(req, raw) {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const headers = {};
  for (const [name, value] of Object.entries(req.headers)) if (!SECRET_HEADERS.has(name)) headers[name] = value;
  url.searchParams.delete('key');
  // An absolute URL in the request line is a plain-HTTP proxy request for another host.
  const outbound = /^[a-z]+:\/\//i.test(req.url ?? '') ? url.host : undefined;
  const text = raw.toString('utf8');
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  const api = outbound === undefined ? apiOf(req.method, url.pathname) : undefined;
  return { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body, api, ...(outbound === undefined ? {} : { outbound }), time: Date.now() };
}

/** Which model API a request speaks, or undefined for everything that is not a model turn. */
function apiOf(method, path) {
  if (method !== 'POST') return undefined;
  if (/\/messages$/.test(path)) return 'anthropic';
  if (/\/responses$/.test(path)) return 'openai-responses';
  if (/:(stream)?[gG]enerateContent$/.test(path)) return 'gemini';
  return undefined;
}

/** How many model turns the conversation in `body` already holds (0 for a fresh prompt). */
function turnOf(api, body) {
  if (!body) return 0;
  if (api === 'anthropic') return (body.messages ?? []).filter((m) => m.role === 'assistant').length;
  if (api === 'gemini') return (body.contents ?? []).filter((c) => c.role === 'model').length;
  // Responses: one turn per run of model output items (function calls, assistant messages) in the input.
  let turns = 0;
  let inModel = false;
  for (const item of Array.isArray(body.input) ? body.input : []) {
    const fromModel = item.type === 'function_call' || item.type === 'custom_tool_call' || item.type === 'local_shell_call' || (item.type === 'message' && item.role === 'assistant') || item.type === 'reasoning';
    if (fromModel && !inModel) turns++;
    inModel = fromModel;
  }
  return turns;
}

function route(record, res, answer) {
  const { method, path, api, body } = record;
  if (record.outbound !== undefined) return sendJson(res, 403, { error: { message: `mock model: no network beyond 127.0.0.1 (${record.outbound})` } });
  if (method === 'HEAD' || (method === 'GET' && path === '/')) return sendJson(res, 200, {});
  if (path.endsWith('/count_tokens')) return sendJson(res, 200, { input_tokens: 10 });
  if (path.endsWith(':countTokens')) return sendJson(res, 200, { totalTokens: 10 });
  if (api === undefined) return sendJson(res, 404, { error: { type: 'not_found_error', message: `mock model: no ${method} ${path}` } });
  const reply = normalise(answer(api));
  if (api === 'anthropic') return body?.stream ? anthropicStream(res, body, reply) : sendJson(res, 200, anthropicMessage(body, reply));
  if (api === 'openai-responses') return responsesStream(res, body, reply);
  return path.endsWith(':streamGenerateContent') ? geminiStream(res, reply) : sendJson(res, 200, geminiResponse(reply));
}

/** A script's answer as `{ text }` or `{ tool, input }`. */
function normalise(reply) {
  if (typeof reply === 'string') return { text: reply };
  if (reply && typeof reply.tool === 'string') return { tool: reply.tool, input: reply.input ?? {} };
  if (reply && typeof reply.text === 'string') return { text: reply.text };
  throw new Error(`a script answer is text, { text } or { tool, input }, not ${JSON.stringify(reply)}`);
}

let nextId = 1;
const id = (prefix) => `${prefix}_mock${nextId++}`;
const usage = { input_tokens: 10, output_tokens: 5 };

function sendJson(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function openSse(res) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

function sse(res, event, data) {
  res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
}

function anthropicBlock(reply) {
  return reply.tool ? { type: 'tool_use', id: id('toolu'), name: reply.tool, input: reply.input } : { type: 'text', text: reply.text };
}

function anthropicMessage(body, reply) {
  return { id: id('msg'), type: 'message', role: 'assistant', model: body?.model ?? 'mock', content: [anthropicBlock(reply)], stop_reason: reply.tool ? 'tool_use' : 'end_turn', stop_sequence: null, usage };
}

function anthropicStream(res, body, reply) {
  const message = anthropicMessage(body, reply);
  const block = message.content[0];
  openSse(res);
  sse(res, 'message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 0 } } });
  if (block.type === 'tool_use') {
    sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { ...block, input: {} } });
    sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
  } else {
    sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: block.text } });
  }
  sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: 5 } });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

function responsesStream(res, body, reply) {
  const item = reply.tool
    ? { type: 'function_call', id: id('fc'), call_id: id('call'), name: reply.tool, arguments: JSON.stringify(reply.input), status: 'completed' }
    : { type: 'message', id: id('msg'), role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] };
  const response = { id: id('resp'), object: 'response', created_at: Math.floor(Date.now() / 1000), model: body?.model ?? 'mock', status: 'in_progress', output: [] };
  openSse(res);
  sse(res, 'response.created', { type: 'response.created', response });
  sse(res, 'response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } });
  if (!reply.tool) sse(res, 'response.output_text.delta', { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: reply.text });
  sse(res, 'response.output_item.done', { type: 'response.output_item.done', output_index: 0, item });
  const done = { ...response, status: 'completed', output: [item], usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 } };
  sse(res, 'response.completed', { type: 'response.completed', response: done });
  res.end();
}

function geminiResponse(reply) {
  const part = reply.tool ? { functionCall: { name: reply.tool, args: reply.input } } : { text: reply.text };
  return { candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }, modelVersion: 'mock' };
}

function geminiStream(res, reply) {
  openSse(res);
  sse(res, undefined, geminiResponse(reply));
  res.end();
}

/** The system, developer and instruction text of a recorded model request, joined by blank lines. */
export function instructionText(request) {
  const body = request.body ?? {};
  const parts = [];
  if (request.api === 'anthropic') {
    // Claude Code 2.1 also sends system-role entries inside `messages` (its skill listing is one).
    parts.push(...textsOf(body.system));
    for (const m of body.messages ?? []) if (m.role === 'system') parts.push(...textsOf(m.content));
  } else if (request.api === 'openai-responses') {
    if (typeof body.instructions === 'string') parts.push(body.instructions);
    for (const item of Array.isArray(body.input) ? body.input : []) if (item.role === 'developer' || item.role === 'system') parts.push(...textsOf(item.content));
  } else if (request.api === 'gemini') {
    const system = body.systemInstruction ?? body.system_instruction;
    parts.push(...(typeof system === 'string' ? [system] : textsOf(system?.parts)));
  }
  return parts.join('\n\n');
}

/** All the text a recorded model request carries (instructions, messages, tool results), joined. */
export function requestText(request) {
  const body = request.body ?? {};
  const parts = [instructionText(request)];
  if (request.api === 'anthropic') for (const m of body.messages ?? []) if (m.role !== 'system') parts.push(...textsOf(m.content));
  if (request.api === 'openai-responses') for (const item of Array.isArray(body.input) ? body.input : []) if (item.role !== 'developer' && item.role !== 'system') parts.push(...textsOf(item.content ?? item.output ?? item.arguments));
  if (request.api === 'gemini') for (const c of body.contents ?? []) parts.push(...textsOf(c.parts));
  return parts.join('\n\n');
}

/** The text blocks of a recorded request's conversation (not instructions, not tool results), oldest first. */
export function messageTexts(request) {
  const body = request.body ?? {};
  const texts = [];
  const push = (role, content) => {
    if (typeof content === 'string') texts.push({ role, text: content });
    else for (const block of Array.isArray(content) ? content : []) if (typeof block?.text === 'string' && block.type !== 'tool_result') texts.push({ role, text: block.text });
  };
  if (request.api === 'anthropic') for (const m of body.messages ?? []) if (m.role !== 'system') push(m.role, m.content);
  if (request.api === 'openai-responses') for (const item of Array.isArray(body.input) ? body.input : []) if (item.type === 'message' && item.role !== 'developer' && item.role !== 'system') push(item.role, item.content);
  if (request.api === 'gemini') for (const c of body.contents ?? []) push(c.role, c.parts);
  return texts;
}

/** The names of the tools a recorded model request offers the model. */
export function toolNames(request) {
  const tools = request.body?.tools ?? [];
  if (request.api === 'gemini') return tools.flatMap((t) => (t.functionDeclarations ?? t.function_declarations ?? []).map((f) => f.name));
  // Responses API built-in tools (web_search, local_shell) have a type and no name; Codex may also
  // offer tools in `additional_tools` input items, grouped in namespaces.
  const extra = request.api === 'openai-responses' && Array.isArray(request.body?.input) ? request.body.input.filter((i) => i.type === 'additional_tools').flatMap((i) => i.tools ?? []) : [];
  const flat = (list) => list.flatMap((t) => (t.type === 'namespace' ? flat(t.tools ?? []) : [t.name ?? t.function?.name ?? t.type]));
  return flat([...tools, ...extra]);
}

/** The tool results a recorded model request sends back, oldest first: `{ callId, name?, text }`. */
export function toolResults(request) {
  const body = request.body ?? {};
  const results = [];
  if (request.api === 'anthropic') {
    for (const m of body.messages ?? []) for (const block of Array.isArray(m.content) ? m.content : []) if (block.type === 'tool_result') results.push({ callId: block.tool_use_id, text: textsOf(block.content).join('\n') });
  } else if (request.api === 'openai-responses') {
    for (const item of Array.isArray(body.input) ? body.input : []) if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') results.push({ callId: item.call_id, text: textsOf(item.output).join('\n') });
  } else if (request.api === 'gemini') {
    for (const c of body.contents ?? []) for (const part of c.parts ?? []) if (part.functionResponse) results.push({ callId: part.functionResponse.id, name: part.functionResponse.name, text: functionResponseText(part.functionResponse.response) });
  }
  return results;
}

/** The tool calls in a recorded request's conversation, oldest first: `{ callId, name }`, parsed `input`. */
export function toolCalls(request) {
  const body = request.body ?? {};
  const calls = [];
  if (request.api === 'anthropic') {
    for (const m of body.messages ?? []) for (const block of Array.isArray(m.content) ? m.content : []) if (block.type === 'tool_use') calls.push({ callId: block.id, name: block.name, input: block.input ?? {} });
  } else if (request.api === 'openai-responses') {
    for (const item of Array.isArray(body.input) ? body.input : []) if (item.type === 'function_call') calls.push({ callId: item.call_id, name: item.name, input: parseJson(item.arguments) });
  } else if (request.api === 'gemini') {
    for (const c of body.contents ?? []) for (const part of c.parts ?? []) if (part.functionCall) calls.push({ callId: part.functionCall.id, name: part.functionCall.name, input: part.functionCall.args ?? {} });
  }
  return calls;
}

/** Each tool call of a recorded request's conversation with the text of its result (undefined when none came back). */
export function toolExchanges(request) {
  const results = toolResults(request);
  return toolCalls(request).map((call, index) => {
    // Pair by call id; Gemini calls without ids pair by position.
    const result = call.callId !== undefined ? results.find((r) => r.callId === call.callId) : results[index];
    return { ...call, result: result?.text };
  });
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

function functionResponseText(response) {
  if (typeof response?.output === 'string') return response.output;
  if (typeof response?.error === 'string') return response.error;
  return JSON.stringify(response ?? null);
}

/** The strings in a content value: a string, a list of text blocks, or parts with `text`. */
function textsOf(content) {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [content];
  if (Array.isArray(content)) return content.flatMap((c) => textsOf(c));
  if (typeof content.text === 'string') return [content.text];
  if (content.content !== undefined) return textsOf(content.content);
  return [];
}
