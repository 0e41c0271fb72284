// How to reach one server: the transport half of a configuration entry, with every
// variable already expanded. Parsing and validation live in config.ts.

export interface StdioServerConfig {
  kind: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | undefined;
  /**
   * The command line as the configuration file writes it, when variables were expanded in it:
   * what a team lock records, the same on every machine sharing the file and never a variable's
   * value. Absent when the line has no variable (it is then `command` and `args`).
   */
  written?: { command: string; args: string[] } | undefined;
}

/** The grants skills-mount can use to get a token (docs/auth.md). */
export const GRANT_TYPES = ['authorization_code', 'client_credentials', 'urn:ietf:params:oauth:grant-type:jwt-bearer'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

/** An HTTP entry's "oauth" object: how to sign in to a server that asks for authorization (MCP authorization). */
export interface OAuthSettings {
  /** authorization_code (a person signs in with `skills-mount login`), or an unattended grant. */
  grantType: GrantType;
  /** A client registered with the authorization server beforehand; else a metadata document URL or dynamic registration. */
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  /** An https URL of this client's metadata document, used as client_id where the server supports it. */
  clientMetadataUrl?: string | undefined;
  /** The loopback port `login` listens on for the redirect; undefined: a free one. */
  callbackPort?: number | undefined;
  /** Where the authorization server's metadata is, when discovery from the server cannot find it. */
  authServerMetadataUrl?: string | undefined;
  /** Space-separated scopes to ask for when the server names none. */
  scopes?: string | undefined;
  /** PEM private key for private_key_jwt client authentication (client_credentials). */
  privateKeyFile?: string | undefined;
  privateKeyAlgorithm?: string | undefined;
  /** A file holding the JWT assertion for the jwt-bearer grant; read again at every use. */
  assertionFile?: string | undefined;
  /**
   * Enterprise-managed authorization (jwt-bearer with an ID-JAG): the enterprise identity
   * provider's token endpoint, the client registered there, and a file holding the person's ID
   * token, exchanged at each use for the grant the server's authorization server accepts.
   */
  idpTokenEndpoint?: string | undefined;
  idpClientId?: string | undefined;
  idpClientSecret?: string | undefined;
  idTokenFile?: string | undefined;
}

/** Streamable HTTP (the current MCP transport). */
export interface HttpServerConfig {
  kind: 'http';
  url: string;
  headers: Record<string, string>;
  oauth?: OAuthSettings | undefined;
}

/** The legacy HTTP+SSE transport (MCP 2024-11-05), for servers not yet on Streamable HTTP. */
export interface SseServerConfig {
  kind: 'sse';
  url: string;
  headers: Record<string, string>;
  oauth?: OAuthSettings | undefined;
}

export type ServerConfig = StdioServerConfig | HttpServerConfig | SseServerConfig;
