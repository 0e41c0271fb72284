// How to reach one server: the transport half of a configuration entry, with every
// variable already expanded. Parsing and validation live in src/cli/config.ts.

export interface StdioServerConfig {
  kind: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | undefined;
}

/** Streamable HTTP (the current MCP transport). */
export interface HttpServerConfig {
  kind: 'http';
  url: string;
  headers: Record<string, string>;
}

/** The legacy HTTP+SSE transport (MCP 2024-11-05), for servers not yet on Streamable HTTP. */
export interface SseServerConfig {
  kind: 'sse';
  url: string;
  headers: Record<string, string>;
}

export type ServerConfig = StdioServerConfig | HttpServerConfig | SseServerConfig;
