// How the FUSE edge names an error in a log line: its class and message, plus the server and URI
// when the message lacks them.

/** An error for a log line: its class, message, and server and URI where the message lacks them. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const context = error as Error & { server?: string; uri?: string };
  // Domain errors usually name their server and URI already; add them only when missing.
  const missing = [context.server && !error.message.includes(context.server) && `server ${context.server}`, context.uri && !error.message.includes(context.uri) && context.uri];
  const where = missing.filter(Boolean).join(' ');
  return `${error.name}: ${error.message}${where ? ` (${where})` : ''}`;
}
