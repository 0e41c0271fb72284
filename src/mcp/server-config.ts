// How to reach one server: the transport half of a configuration entry.

export interface StdioServerConfig {
  kind: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | undefined;
}

export interface HttpServerConfig {
  kind: 'http';
  url: string;
  headers: Record<string, string>;
}

export type ServerConfig = StdioServerConfig | HttpServerConfig;

/** A short human description for logs: the command line or the URL. */
export function describeServer(config: ServerConfig): string {
  return config.kind === 'stdio' ? [config.command, ...config.args].join(' ') : config.url;
}
