// A real terminal for CLI tests: a detached tmux session on a private socket, driven with
// send-keys and read with capture-pane. Always close() it (kills the private server).
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { run } from './fuse-harness.js';
import { pollUntil } from './poll.js';

export class Terminal {
  private shell = 'bash --norc --noprofile';

  private constructor(
    private readonly socket: string,
    readonly session: string,
  ) {}

  /** A 120x30 bash with a plain prompt and the given environment. */
  static async open(env: Record<string, string> = {}): Promise<Terminal> {
    const socket = `skills-mount-cli-${process.pid}-${randomBytes(4).toString('hex')}`;
    const terminal = new Terminal(socket, 'cli');
    const shell = ['env', ...Object.entries({ PS1: '$ ', ...env }).map(([name, value]) => shellQuote(`${name}=${value}`)), 'bash', '--norc', '--noprofile'].join(' ');
    terminal.shell = shell;
    const result = await run('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-x', '120', '-y', '30', '-s', 'cli', shell]);
    if (result.code !== 0) throw new Error(`tmux new-session failed: ${result.stderr}`);
    return terminal;
  }

  /** Types `text` into window `window` and presses Enter. */
  async type(text: string, window = 0): Promise<void> {
    await this.tmux('send-keys', '-t', `${this.session}:${window}`, '-l', text);
    await this.tmux('send-keys', '-t', `${this.session}:${window}`, 'Enter');
  }

  async key(key: string, window = 0): Promise<void> {
    await this.tmux('send-keys', '-t', `${this.session}:${window}`, key);
  }

  async newWindow(): Promise<number> {
    await this.tmux('new-window', '-t', this.session, this.shell);
    const { stdout } = await this.tmux('display-message', '-p', '-t', this.session, '#{window_index}');
    return Number(stdout.trim());
  }

  /** The screen as plain text (wrapped lines joined, plus `history` lines of scrollback), trailing blank lines dropped. */
  async capture(window = 0, history = 0): Promise<string> {
    const { stdout } = await this.tmux('capture-pane', '-p', '-J', '-t', `${this.session}:${window}`, ...(history ? ['-S', String(-history)] : []));
    return stdout.replace(/\n+$/, '\n');
  }

  /** Polls the screen until `pattern` matches; resolves the matching screen. */
  waitFor(pattern: RegExp, timeoutMs = 20_000, window = 0, history = 0): Promise<string> {
    return pollUntil(() => this.capture(window, history), (screen) => pattern.test(screen), {
      timeoutMs,
      intervalMs: 50,
      timeoutError: (screen) => new Error(`timed out waiting for ${pattern} on the terminal:\n${screen}`),
    });
  }

  /** Kills the private tmux server and removes its socket file. */
  async close(): Promise<void> {
    const socketPath = (await run('tmux', ['-L', this.socket, 'display-message', '-p', '#{socket_path}'])).stdout.trim();
    await run('tmux', ['-L', this.socket, 'kill-server']);
    if (socketPath.endsWith(this.socket)) await rm(socketPath, { force: true });
  }

  private async tmux(...args: string[]) {
    const result = await run('tmux', ['-L', this.socket, ...args]);
    if (result.code !== 0) throw new Error(`tmux ${args[0]} failed: ${result.stderr}`);
    return result;
  }
}

/** Quotes a word for bash. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
