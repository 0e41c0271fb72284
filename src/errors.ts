// Domain errors shared by every layer. They carry the context that makes a log line
// useful; errno values exist only in src/fuse/errno.ts, which maps these classes.

export interface ErrorContext {
  server?: string | undefined;
  /** The MCP method or operation; when given, the message is prefixed with the context. */
  method?: string | undefined;
  uri?: string | undefined;
  cause?: unknown;
}

/** "label: method uri", with the URI escaped (it comes from a server). */
export function describeContext(context: ErrorContext): string {
  const where = [context.method, context.uri === undefined ? undefined : JSON.stringify(context.uri).slice(1, -1)].filter(Boolean).join(' ');
  return context.server === undefined ? where : `${context.server}: ${where}`;
}

/** Base class: every domain error has a stable `code` and may name the server and URI. */
export abstract class SkillsMountError extends Error {
  abstract readonly code: string;
  readonly server: string | undefined;
  readonly uri: string | undefined;

  /**
   * With a `method` in the context the message is built from it ("label: method uri: detail"),
   * so every throw site names server, operation and URI the same way.
   */
  constructor(message: string, context: ErrorContext = {}) {
    super(context.method === undefined ? message : `${describeContext(context)}: ${message}`, context.cause === undefined ? undefined : { cause: context.cause });
    this.server = context.server;
    this.uri = context.uri;
  }
}

/** The path or resource does not exist (or is declined and hidden). */
export class NotFoundError extends SkillsMountError {
  override name = 'NotFoundError';
  readonly code = 'NOT_FOUND';
}

/** Bytes or metadata from a server failed verification (size, digest, frontmatter, shape). */
export class IntegrityError extends SkillsMountError {
  override name = 'IntegrityError';
  readonly code = 'INTEGRITY';
}

/** The server could not answer: not connected, timed out, crashed, or returned a protocol error. */
export class UnavailableError extends SkillsMountError {
  override name = 'UnavailableError';
  readonly code = 'UNAVAILABLE';
}

/** The request was valid but the server's answer was malformed. */
export class ProtocolError extends SkillsMountError {
  override name = 'ProtocolError';
  readonly code = 'PROTOCOL';
}

/** A write of any kind on the read-only mount. */
export class ReadOnlyError extends SkillsMountError {
  override name = 'ReadOnlyError';
  readonly code = 'READ_ONLY';
}

/** A directory operation on a file. */
export class NotADirectoryError extends SkillsMountError {
  override name = 'NotADirectoryError';
  readonly code = 'NOT_A_DIRECTORY';
}

/** A file operation on a directory. */
export class IsADirectoryError extends SkillsMountError {
  override name = 'IsADirectoryError';
  readonly code = 'IS_A_DIRECTORY';
}

/** An extended attribute that the node does not carry. */
export class NoAttributeError extends SkillsMountError {
  override name = 'NoAttributeError';
  readonly code = 'NO_ATTRIBUTE';
}

/** A skill exceeds the per-skill limits and is declined. */
export class LimitExceededError extends SkillsMountError {
  override name = 'LimitExceededError';
  readonly code = 'LIMIT_EXCEEDED';
}

/** Invalid user input: command line or configuration. */
export class ConfigError extends SkillsMountError {
  override name = 'ConfigError';
  readonly code = 'CONFIG';
}

/** The server does not implement the method (JSON-RPC -32601). */
export class NotSupportedError extends SkillsMountError {
  override name = 'NotSupportedError';
  readonly code = 'NOT_SUPPORTED';
}


/**
 * A file changed on the server after the kernel was told its size, and the version that size
 * belongs to is no longer to be had: serving the new bytes would be clipped to the old size.
 */
export class StaleVersionError extends SkillsMountError {
  override name = 'StaleVersionError';
  readonly code = 'STALE_VERSION';
}
