// Shows an authorization URL to the person: $BROWSER when set, else xdg-open when there is a
// display, else printed only. $BROWSER is read as Python's webbrowser and other tools read it:
// a list of commands (separated as PATH is), each a command line split into words as a shell
// would split it (quotes kept together, no shell run), the URL in place of `%s` or appended;
// the first that starts is used. Nothing but https (or http to loopback) is ever opened.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { assertUsableEndpoint } from './endpoint-rules.js';

type Env = Readonly<Record<string, string | undefined>>;

/** How the URL was shown, for the message that follows. */
export type OpenedWith = { kind: 'browser'; command: string } | { kind: 'printed' };

/** The commands that may open a URL here, as words, in the order to try; empty: none (print it). */
export function browserCommands(env: Env, delimiter = path.delimiter): string[][] {
  const browser = env.BROWSER?.trim();
  if (browser) return browser.split(delimiter).map(commandWords).filter((words) => words.length > 0);
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return [['xdg-open']];
  return [];
}

/**
 * Starts the first browser that starts (detached, not waited for); none that can start leaves the
 * URL printed. Only an https address, or http to this machine's loopback, is shown or opened:
 * anything else (file:, javascript:, a plain-http host elsewhere) is a SignInError.
 */
export async function openInBrowser(url: URL, env: Env, print: (line: string) => void): Promise<OpenedWith> {
  assertUsableEndpoint(url, 'the sign-in address');
  const commands = browserCommands(env);
  print(`open this address to sign in:\n  ${url.href}`);
  for (const words of commands) {
    const args = words.slice(1).some((word) => word.includes('%s')) ? words.slice(1).map((word) => word.replaceAll('%s', url.href)) : [...words.slice(1), url.href];
    const started = await new Promise<boolean>((resolve) => {
      const child = spawn(words[0]!, args, { stdio: 'ignore', detached: true, env: env as NodeJS.ProcessEnv });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    });
    if (started) return { kind: 'browser', command: words.join(' ') };
  }
  if (commands.length > 0) print(`(could not start ${commands.map((words) => words.join(' ')).join(', or ')}; open the address above yourself)`);
  return { kind: 'printed' };
}

/** A command line's words as a POSIX shell splits them: blanks separate, quotes and backslashes keep together. */
function commandWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let index = 0; index < line.length; index++) {
    const character = line[index]!;
    if (quote !== undefined) {
      if (character === quote) quote = undefined;
      else if (character === '\\' && quote === '"' && index + 1 < line.length) word += line[++index]!;
      else word += character;
    } else if (character === '"' || character === "'") {
      quote = character;
      word ??= '';
    } else if (character === '\\' && index + 1 < line.length) {
      word = (word ?? '') + line[++index]!;
    } else if (/\s/.test(character)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? '') + character;
  }
  if (word !== undefined) words.push(word);
  return words;
}
