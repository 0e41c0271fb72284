// Startup progress on a terminal: one line at the bottom of stderr, redrawn as servers
// connect and list their skills, with log lines printed above it. Off when stderr is not
// a TTY, so logs and scripts see only the usual log lines.

export interface ProgressStream {
  write(text: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

const SPINNER = ['|', '/', '-', '\\'];
const TICK_MS = 250;

/** Counts servers and skills during startup and draws them on a TTY. */
export class StartupProgress {
  private connected = 0;
  private failed = 0;
  private listed = 0;
  private skills = 0;
  private frame = 0;
  private drawn = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAtMs = Date.now();
  readonly enabled: boolean;

  constructor(
    private readonly stream: ProgressStream,
    private readonly totalServers: number,
    enabled = stream.isTTY === true,
  ) {
    this.enabled = enabled;
    if (this.enabled) {
      this.timer = setInterval(() => this.draw(), TICK_MS);
      this.timer.unref();
      this.draw();
    }
  }

  /** Writes one log line, keeping the progress line below it. */
  log(line: string): void {
    this.clear();
    this.stream.write(`${line}\n`);
    if (this.timer) this.draw();
  }

  serverConnected(): void {
    this.connected += 1;
    this.draw();
  }

  serverFailed(): void {
    this.failed += 1;
    this.draw();
  }

  serverListed(skillCount: number): void {
    this.listed += 1;
    this.skills += skillCount;
    this.draw();
  }

  /** Seconds since startup, for the summary line. */
  elapsedSeconds(): number {
    return (Date.now() - this.startedAtMs) / 1000;
  }

  get skillCount(): number {
    return this.skills;
  }

  /** Removes the progress line for good; later logs go straight through. */
  finish(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  /** The progress line's text (without terminal control codes). */
  line(): string {
    const pending = this.totalServers - this.connected - this.failed;
    const servers = `${this.connected}/${this.totalServers} servers connected${this.failed ? `, ${this.failed} failed` : ''}${pending ? `, ${pending} starting` : ''}`;
    const skills = `${this.skills.toLocaleString('en-US')} skills listed from ${this.listed} server${this.listed === 1 ? '' : 's'}`;
    return `${SPINNER[this.frame % SPINNER.length]} ${this.elapsedSeconds().toFixed(1)}s  ${servers}; ${skills}`;
  }

  private draw(): void {
    if (!this.timer) return;
    this.frame += 1;
    const width = Math.max(20, (this.stream.columns ?? 80) - 1);
    // \r and erase-line: redraw in place; never wider than the terminal, or it would wrap.
    this.stream.write(`\r\x1b[2K${this.line().slice(0, width)}`);
    this.drawn = true;
  }

  private clear(): void {
    if (!this.drawn) return;
    this.stream.write('\r\x1b[2K');
    this.drawn = false;
  }
}
