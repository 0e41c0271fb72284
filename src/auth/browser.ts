// Shows an authorization URL to the person: $BROWSER when set (that command with the URL as
// its one argument, no shell), else xdg-open when there is a display, else printed only.
import { spawn } from 'node:child_process';

type Env = Readonly<Record<string, string | undefined>>;

/** How the URL was shown, for the message that follows. */
export type OpenedWith = { kind: 'browser'; command: string } | { kind: 'printed' };

/** Which command opens a URL here; undefined: none (print it). */
export function browserCommand(env: Env): string | undefined {
  const browser = env.BROWSER?.trim();
  if (browser) return browser;
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return 'xdg-open';
  return undefined;
}

/** Starts the browser (detached, not waited for); a browser that cannot start leaves the URL printed. */
export async function openInBrowser(url: URL, env: Env, print: (line: string) => void): Promise<OpenedWith> {
  const command = browserCommand(env);
  print(`open this address to sign in:\n  ${url.href}`);
  if (command === undefined) return { kind: 'printed' };
  const started = await new Promise<boolean>((resolve) => {
    const child = spawn(command, [url.href], { stdio: 'ignore', detached: true, env: env as NodeJS.ProcessEnv });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
  if (!started) {
    print(`(could not start ${command}; open the address above yourself)`);
    return { kind: 'printed' };
  }
  return { kind: 'browser', command };
}
