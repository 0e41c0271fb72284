// Progress on a terminal: one line at the bottom of stderr, redrawn in place as work goes on,
// with log lines printed above it; startup's (servers connecting and listing) and a snapshot's
// (files and bytes written). Off when stderr is not a TTY, so logs and scripts see only the
// usual log lines.
import type { SnapshotProgressSink } from '../snapshot/snapshot-writer.js';

export interface ProgressStream {
  write(text: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

const SPINNER = ['|', '/', '-', '\\'];
const TICK_MS = 250;
const MIB = 1024 * 1024;

/** The line: a spinner, the seconds since start() and what body() says, redrawn every TICK_MS and on draw(). */
export abstract class ProgressLine {
  private frame = 0;
  private drawn = false;
  private timer: NodeJS.Timeout | undefined;
  private startedAtMs = Date.now();

  constructor(
    private readonly stream: ProgressStream,
    readonly enabled = stream.isTTY === true,
  ) {}

  /** Starts the clock again and, on a terminal, draws the line until stop(). */
  start(): void {
    this.startedAtMs = Date.now();
    if (!this.enabled || this.timer) return;
    this.timer = setInterval(() => this.draw(), TICK_MS);
    this.timer.unref();
    this.draw();
  }

  elapsedSeconds(): number {
    return (Date.now() - this.startedAtMs) / 1000;
  }

  /** The progress line's text (without terminal control codes). */
  line(): string {
    return `${SPINNER[this.frame % SPINNER.length]} ${this.elapsedSeconds().toFixed(1)}s  ${this.body()}`;
  }

  /** Writes one log line, keeping the progress line below it. */
  log(line: string): void {
    this.clear();
    this.stream.write(`${line}\n`);
    if (this.timer) this.draw();
  }

  /** Removes the line until the next start(); logs meanwhile go straight through. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  /** What the line says after the spinner and the seconds. */
  protected abstract body(): string;

  /** Redraws the line now (a count changed); nothing while it is stopped. */
  protected draw(): void {
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

/** Counts servers and skills during startup and draws them on a TTY from construction to finish(). */
export class StartupProgress extends ProgressLine {
  private connected = 0;
  private failed = 0;
  private listed = 0;
  private skills = 0;

  constructor(
    stream: ProgressStream,
    private readonly totalServers: number,
    enabled = stream.isTTY === true,
  ) {
    super(stream, enabled);
    this.start();
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

  get skillCount(): number {
    return this.skills;
  }

  /** Removes the progress line for good; later logs go straight through. */
  finish(): void {
    this.stop();
  }

  protected body(): string {
    const pending = this.totalServers - this.connected - this.failed;
    const servers = `${this.connected}/${this.totalServers} servers connected${this.failed ? `, ${this.failed} failed` : ''}${pending ? `, ${pending} starting` : ''}`;
    return `${servers}; ${this.skills.toLocaleString('en-US')} skills listed from ${this.listed} server${this.listed === 1 ? '' : 's'}`;
  }
}

/** A snapshot's progress: files and bytes written, linked and fetched, drawn on a TTY from start() to stop(). */
export class SnapshotProgress extends ProgressLine implements SnapshotProgressSink {
  private total = 0;
  private skills = 0;
  private done = 0;
  private bytes = 0;
  private linked = 0;
  private fetched = 0;

  constructor(
    stream: ProgressStream,
    private readonly servers: number,
    enabled = stream.isTTY === true,
  ) {
    super(stream, enabled);
  }

  /** A new snapshot run: counts start again, the line is drawn while it runs. */
  override start(): void {
    this.total = this.skills = this.done = this.bytes = this.linked = this.fetched = 0;
    super.start();
  }

  walked(files: number, skills: number): void {
    this.total = files;
    this.skills = skills;
    this.draw();
  }

  fileDone(bytes: number, how: 'linked' | 'fetched'): void {
    this.done += 1;
    this.bytes += bytes;
    if (how === 'linked') this.linked += 1;
    else this.fetched += 1;
  }

  protected body(): string {
    const count = (n: number) => n.toLocaleString('en-US');
    const files = this.total === 0 ? 'listing files' : `${count(this.skills)} skills, ${count(this.done)}/${count(this.total)} files`;
    return `${this.servers} server${this.servers === 1 ? '' : 's'}; ${files}, ${(this.bytes / MIB).toFixed(1)} MiB (${count(this.linked)} linked, ${count(this.fetched)} fetched)`;
  }
}
