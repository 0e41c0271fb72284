// `--server LABEL=COMMAND ARGS...` and `--server LABEL=URL [oauth.FIELD=VALUE...]`: one-off
// servers from the command line, read into the same raw shape as config file entries (an
// HTTP server's "oauth" fields as words after its URL, checked as the config file's are).
import { homedir } from 'node:os';
import { ConfigError } from '../errors.js';
import type { RawServer } from './config-formats.js';
import { isValidLabel, normalizeLabel } from './labels.js';
import { readRawOAuth } from './oauth-config.js';

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
  const url = /^(sse\+)?(https?:\/\/\S*)(?:\s+([\s\S]*))?$/.exec(rest);
  if (url) {
    const oauth = url[3] === undefined ? undefined : oauthWords(splitWords(url[3], `--server ${label}`), label);
    return { label, server: { kind: url[1] ? 'sse' : 'http', url: url[2]!, headers: {}, ...(oauth ? { oauth } : {}), protocolVersion: undefined, approvedOnly: false } };
  }
  const [command, ...args] = splitWords(rest, `--server ${label}`);
  return { label, server: { kind: 'stdio', command: command!, args, env: {}, cwd: undefined, envFile: undefined, protocolVersion: undefined, approvedOnly: false } };
}

/** The words after a URL: each `oauth.FIELD=VALUE`, read as the config file's "oauth" object is. */
function oauthWords(words: readonly string[], label: string): ReturnType<typeof readRawOAuth> {
  const record: Record<string, string> = {};
  for (const word of words) {
    const field = /^oauth\.([A-Za-z]+)=([\s\S]*)$/.exec(word);
    // Named by what comes before "=", never by a value (it may be a secret).
    if (!field) throw new ConfigError(`--server ${label}: "${word.split('=')[0]}${word.includes('=') ? '=...' : ''}" after the URL is not oauth.FIELD=VALUE (e.g. oauth.clientId=ID oauth.callbackPort=8765)`);
    if (field[1]! in record) throw new ConfigError(`--server ${label}: oauth.${field[1]} is given twice`);
    record[field[1]!] = field[2]!;
  }
  return readRawOAuth(record, `--server ${label}`);
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
