// The MCP SDK's console lines ("[mcp-sdk] ...") go through every live secret's redaction and the
// log escaping before they are shown; the rest of the console is left alone.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cleanSdkLine, redactSdkLinesWith, routeSdkLines } from '../../src/log.js';
import { headerRedactor } from '../../src/mcp/redaction.js';

const shown: string[] = [];
const before = { warn: console.warn, error: console.error };
beforeAll(() => {
  console.warn = (...args: unknown[]) => void shown.push(`warn: ${args.join(' ')}`);
  console.error = (...args: unknown[]) => void shown.push(`error: ${args.join(' ')}`);
  routeSdkLines();
});
afterAll(() => {
  Object.assign(console, before);
});

it("redacts every live redactor's secrets and escapes control and bidi characters in the SDK's lines only", () => {
  const keep = (text: string) => text.split('client-secret-123456').join('[redacted]');
  redactSdkLinesWith(keep);
  const headers = headerRedactor({ 'X-Api-Key': 'api-key-abcdef-987654' });
  console.warn(`[mcp-sdk] OAuth "invalid_client" — retrying. Cause: "client-secret-123456 and api-key-abcdef-987654 \u001b[2J\u202e"`);
  console.error('[mcp-sdk] %s', 'second line\nforged line');
  console.warn('plain \u001b line');
  expect(shown).toEqual([
    'warn: [mcp-sdk] OAuth "invalid_client" — retrying. Cause: "[redacted] and [redacted] \\u001b[2J\\u202e"',
    'error: [mcp-sdk] second line\\u000aforged line',
    'warn: plain \u001b line',
  ]);
  expect(headers('api-key-abcdef-987654')).toBe('[redacted]');
  expect(keep('x')).toBe('x');
});

it('is idempotent: routing twice still shows a line once', () => {
  shown.length = 0;
  routeSdkLines();
  console.warn('[mcp-sdk] once');
  expect(shown).toEqual(['warn: [mcp-sdk] once']);
  expect(cleanSdkLine('a\u2028b')).toBe('a\\u2028b');
});
