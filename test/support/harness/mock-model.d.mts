/** The model API a recorded request speaks. */
export type ModelApi = 'anthropic' | 'openai-responses' | 'gemini';

/** One request the mock received, as recorded (credential headers and `?key=` left out). */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or null when there was none or it was not JSON. */
  body: unknown;
  /** Set on requests that asked a model for an answer; undefined on probes, token counts, proxy attempts. */
  api: ModelApi | undefined;
  /** The host a harness tried to reach through the proxy (a CONNECT or an absolute URL). */
  outbound?: string;
  /** Date.now() when the request arrived. */
  time: number;
}

/** What the model answers: text, or one tool call with JSON arguments. */
export type ScriptReply = string | { text: string } | { tool: string; input?: Record<string, unknown> };

/** Answers one model request; `turn` is the number of model turns already in its conversation. */
export type ModelScript = (kind: string, request: RecordedRequest, turn: number) => ScriptReply;

export interface MockModelOptions {
  script?: ModelScript;
  /** Passed to the script as `kind` (default: the request's API). */
  harness?: string;
}

export interface MockModel {
  /** http://127.0.0.1:PORT, no trailing slash. */
  url: string;
  port: number;
  /** Every request so far, in arrival order (the same array, growing). */
  requests: RecordedRequest[];
  modelRequests(): RecordedRequest[];
  outboundAttempts(): string[];
  close(): Promise<void>;
}

export interface ToolCall {
  callId: string | undefined;
  name: string;
  input: Record<string, unknown>;
}

/** Starts the mock on 127.0.0.1 (a free port). */
export function startMockModel(options?: MockModelOptions): Promise<MockModel>;
/** The system, developer and instruction text of a recorded model request, joined by blank lines. */
export function instructionText(request: RecordedRequest): string;
/** All the text a recorded model request carries (instructions, messages, tool results), joined. */
export function requestText(request: RecordedRequest): string;
/** The text blocks of a recorded request's conversation (not instructions, not tool results), oldest first. */
export function messageTexts(request: RecordedRequest): { role: string; text: string }[];
/** The names of the tools a recorded model request offers the model. */
export function toolNames(request: RecordedRequest): string[];
/** The tool results a recorded model request sends back, oldest first. */
export function toolResults(request: RecordedRequest): { callId: string | undefined; name?: string; text: string }[];
/** The tool calls in a recorded request's conversation, oldest first. */
export function toolCalls(request: RecordedRequest): ToolCall[];
/** Each tool call of a recorded request's conversation with the text of its result (undefined when none came back). */
export function toolExchanges(request: RecordedRequest): (ToolCall & { result: string | undefined })[];
