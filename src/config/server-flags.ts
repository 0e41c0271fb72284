// `--server LABEL=COMMAND ARGS...` and `--server LABEL=URL`: one-off servers from the
// command line, read into the same raw shape as config file entries.
import { homedir } from 'node:os';
import { ConfigError } from '../errors.js';
import type { RawServer } from './config-formats.js';
import { isValidLabel, normalizeLabel } from './labels.js';

export interface FlagServer {
  label: string;
  server: RawServer;
}

/** Parses one --server value. The command part is split into words like a shell would (quotes, backslashes). */
export function parseServerFlag(value: string): FlagServer {
  const equals = value.indexOf('=');
  if (equals <= 0) throw new ConfigError(`--server "${value}": expected LABEL=COMMAND [ARGS...] or LABEL=URL`);
  const label = value.slice(0, equals);
  const rest = value.slice(equals + 1).trim();
  if (!isValidLabel(label)) {
    const suggestion = normalizeLabel(label);
    throw new ConfigError(
      `--server: label "${label}" is not a valid directory name: use [a-z0-9][a-z0-9_-]*, at most 64 characters` +
        (suggestion ? ` (e.g. "${suggestion}")` : ''),
    );
  }
  if (rest === '') throw new ConfigError(`--server ${label}=: nothing after "="; give a command or an http(s) URL`);
  const sse = /^sse\+(https?:\/\/.*)$/.exec(rest);
  if (sse) return { label, server: { kind: 'sse', url: sse[1]!, headers: {}, protocolVersion: undefined, approvedOnly: false } };
  if (/^https?:\/\//.test(rest)) return { label, server: { kind: 'http', url: rest, headers: {}, protocolVersion: undefined, approvedOnly: false } };
  const [command, ...args] = splitWords(rest, `--server ${label}`);
  return { label, server: { kind: 'stdio', command: command!, args, env: {}, cwd: undefined, envFile: undefined, protocolVersion: undefined, approvedOnly: false } };
}

/**
 * Splits a command line into words: whitespace separates, '...' and "..." group, backslash
 * escapes, and an unquoted "~" starting a word (alone or before "/") is the home directory, as
 * in a shell: the whole --server value is quoted, so the shell never expanded it.
 */
export function splitWords(text: string, where: string, home: string = homedir()): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (quote) {
      if (char === quote) quote = undefined;
      else if (char === '\\' && quote === '"' && i + 1 < text.length) word = (word ?? '') + text[++i];
      else word = (word ?? '') + char;
    } else if (char === "'" || char === '"') {
      quote = char;
      word ??= '';
    } else if (char === '\\' && i + 1 < text.length) {
      word = (word ?? '') + text[++i];
    } else if (char === '~' && word === undefined && (i + 1 === text.length || text[i + 1] === '/' || /\s/.test(text[i + 1]!))) {
      word = home;
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (quote) throw new ConfigError(`${where}: unterminated ${quote} quote in "${text}"`);
  if (word !== undefined) words.push(word);
  return words;
}
