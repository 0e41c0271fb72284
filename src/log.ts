// The one shape of a log sink, for every layer and both programs: a line in, nothing back.
// The program's sink escapes what servers put into a line (src/format/escape.ts); callers
// pass text as it is. The MCP SDK writes lines of its own with console.warn (no logger option):
// those go through every live secret's redaction and the same escaping before they are shown.
import { formatWithOptions } from 'node:util';
import { escapeForLog } from './format/escape.js';

export type Log = (line: string) => void;

/** Replaces the secrets it knows of (a sign-in's tokens, a configured header's value) in a text. */
export type Redact = (text: string) => string;

/** The SDK's lines start so. */
const SDK_PREFIX = '[mcp-sdk]';
/** Held weakly: a connection that is gone takes its secrets' redaction with it. */
const redactors = new Set<WeakRef<Redact>>();
let routed = false;

/**
 * Every line the SDK writes from now on has `redact`'s secrets replaced, for as long as `redact`
 * lives: it is held weakly, so pass the function the caller itself keeps, not a fresh wrapper.
 */
export function redactSdkLinesWith(redact: Redact): void {
  routeSdkLines();
  redactors.add(new WeakRef(redact));
}

/** `line` with every live redactor's secrets replaced and unsafe characters escaped, as an SDK line is shown. */
export function cleanSdkLine(line: string): string {
  let text = line;
  for (const ref of redactors) {
    const redact = ref.deref();
    if (redact === undefined) redactors.delete(ref);
    else text = redact(text);
  }
  return escapeForLog(text);
}

/**
 * Routes the SDK's console.warn and console.error lines (those starting "[mcp-sdk]") through
 * cleanSdkLine; other console output is left as it is. Idempotent.
 */
export function routeSdkLines(): void {
  if (routed) return;
  routed = true;
  const warn = console.warn.bind(console);
  const error = console.error.bind(console);
  const route =
    (write: (...args: unknown[]) => void) =>
    (...args: unknown[]): void => {
      if (typeof args[0] !== 'string' || !args[0].startsWith(SDK_PREFIX)) return write(...args);
      write(cleanSdkLine(formatWithOptions({ colors: false }, ...args)));
    };
  console.warn = route(warn);
  console.error = route(error);
}
