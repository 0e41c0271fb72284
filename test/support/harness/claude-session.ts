// A long-lived Claude Code session (stream-json in and out) against a mock model: send messages,
// read its events, and find out when a skill added to a watched folder reaches what it tells the
// model. Claude Code only; the other harnesses have no such mode worth driving.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { claudeSessionCommand, harnesses } from './harnesses.js';
import { startMockModel, type MockModel, type ModelScript, type RecordedRequest } from './mock-model.mjs';
import { ProcessTree } from './process-tree.js';

/** One line of Claude Code's stream-json output, with when it arrived. */
export interface SessionEvent {
  type: string;
  subtype?: string;
  at: number;
  data: Record<string, unknown>;
}

export interface SessionOptions {
  home: string;
  cwd: string;
  script?: ModelScript;
  extraArgs?: readonly string[];
}

export interface ListedAfter {
  /** From the call to the model request that first listed the skill. */
  elapsedMs: number;
  request: RecordedRequest;
}

export class ClaudeSession {
  readonly events: SessionEvent[] = [];
  #stderr = '';
  #buffer = '';
  readonly #tree: ProcessTree;
  readonly #exited: Promise<void>;

  private constructor(
    readonly mock: MockModel,
    private readonly child: ChildProcessWithoutNullStreams,
  ) {
    this.#tree = new ProcessTree(child.pid!);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => this.#onStdout(chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (this.#stderr += chunk));
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** Starts the mock and `claude -p --input-format stream-json --output-format stream-json --verbose`. */
  static async start(options: SessionOptions): Promise<ClaudeSession> {
    const harness = harnesses['claude-code'];
    const mock = await startMockModel({ harness: 'claude-code', script: options.script ?? (() => 'done') });
    try {
      await harness.prepare(options.home, mock.url);
      const { argv, env } = claudeSessionCommand({ home: options.home, cwd: options.cwd, mockUrl: mock.url, extraArgs: options.extraArgs ?? [] });
      const child = spawn(argv[0]!, argv.slice(1), { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      return new ClaudeSession(mock, child);
    } catch (error) {
      await mock.close();
      throw error;
    }
  }

  get stderr(): string {
    return this.#stderr;
  }

  #onStdout(chunk: string): void {
    this.#buffer += chunk;
    for (let newline = this.#buffer.indexOf('\n'); newline >= 0; newline = this.#buffer.indexOf('\n')) {
      const line = this.#buffer.slice(0, newline).trim();
      this.#buffer = this.#buffer.slice(newline + 1);
      if (!line) continue;
      try {
        const data = JSON.parse(line) as Record<string, unknown>;
        this.events.push({ type: String(data['type']), subtype: typeof data['subtype'] === 'string' ? data['subtype'] : undefined, at: Date.now(), data });
      } catch {
        this.events.push({ type: 'unparsed', at: Date.now(), data: { line } });
      }
    }
  }

  /** Sends one user message; resolves the model requests of that turn once its `result` event arrives. */
  async send(text: string, timeoutMs = 30_000): Promise<RecordedRequest[]> {
    const resultsBefore = this.events.filter((e) => e.type === 'result').length;
    const requestsBefore = this.mock.requests.length;
    this.child.stdin.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: text } })}\n`);
    await this.waitFor(() => this.events.filter((e) => e.type === 'result').length > resultsBefore, timeoutMs, `the result of "${text}"`);
    return this.mock.requests.slice(requestsBefore).filter((r) => r.api !== undefined);
  }

  /** Resolves the first event since `since` (ms epoch) that `match`es. */
  async waitForEvent(match: (event: SessionEvent) => boolean, since: number, timeoutMs: number): Promise<SessionEvent> {
    let found: SessionEvent | undefined;
    await this.waitFor(() => (found = this.events.find((e) => e.at >= since && match(e))) !== undefined, timeoutMs, 'a stream-json event');
    return found!;
  }

  /**
   * Sends a message every `intervalMs` until the model request it causes lists skill `name`;
   * measures from the call. Throws after `timeoutMs`.
   */
  async waitUntilListed(name: string, { timeoutMs, intervalMs = 250 }: { timeoutMs: number; intervalMs?: number }): Promise<ListedAfter> {
    const started = Date.now();
    const listing = harnesses['claude-code'];
    for (let round = 0; Date.now() - started < timeoutMs; round++) {
      const requests = await this.send(`is ${name} there? (${round})`, timeoutMs);
      const hit = requests.find((request) => listing.listedSkills([request]).some((skill) => skill.name === name));
      if (hit) return { elapsedMs: hit.time - started, request: hit };
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
    throw new Error(`Claude Code did not list ${name} within ${timeoutMs} ms`);
  }

  private async waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.#exited.then(() => (exited = true));
    while (!condition()) {
      if (exited) throw new Error(`Claude Code exited while waiting for ${what}: ${this.#stderr.slice(-500)}`);
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      this.#tree.scan();
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Ends the session (stdin closed, then the whole process tree killed) and the mock. */
  async close(): Promise<void> {
    this.child.stdin.end();
    const graceful = await Promise.race([this.#exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2_000))]);
    if (!graceful) this.#tree.signal('SIGTERM');
    this.#tree.signal('SIGKILL');
    await this.#exited;
    await this.mock.close();
  }
}
