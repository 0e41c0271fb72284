// The MCP protocol revisions both sides speak, and how a configuration names them.
// 2026-07-28 is stateless (`server/discover`, per-request `_meta`, `subscriptions/listen`);
// the 2025 revisions use the `initialize` handshake and sessions.

/** The revision the final Skills Extension is written against. */
export const MODERN_REVISION = '2026-07-28';
/** The newest revision with the `initialize` handshake. */
export const LEGACY_REVISION = '2025-11-25';

/** What a server entry (or `--protocol-version`) asks for: try 2026-07-28 then fall back, or one revision only. */
export type ProtocolVersionChoice = 'negotiate' | typeof MODERN_REVISION | typeof LEGACY_REVISION;

export const PROTOCOL_VERSION_CHOICES: readonly ProtocolVersionChoice[] = ['negotiate', MODERN_REVISION, LEGACY_REVISION];

/** The choice named by a config value or flag, or undefined when it names none. */
export function parseProtocolVersionChoice(value: unknown): ProtocolVersionChoice | undefined {
  return PROTOCOL_VERSION_CHOICES.find((choice) => choice === value);
}
