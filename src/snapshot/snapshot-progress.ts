// A snapshot's progress on a terminal: one line at the bottom of stderr (files and bytes written,
// linked and fetched), redrawn in place, log lines printed above it. Off when stderr is no TTY.
import type { SnapshotProgressSink } from './snapshot-writer.js';

export interface ProgressStream {
  write(text: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

const SPINNER = ['|', '/', '-', '\\'];
const TICK_MS = 250;
const MIB = 1024 * 1024;

export class SnapshotProgress implements SnapshotProgressSink {
  private total = 0;
  private skills = 0;
  private done = 0;
  private bytes = 0;
  private linked = 0;
  private fetched = 0;
  private frame = 0;
  private drawn = false;
  private timer: NodeJS.Timeout | undefined;
  private startedAtMs = Date.now();

  constructor(
    private readonly stream: ProgressStream,
    private readonly servers: number,
    readonly enabled = stream.isTTY === true,
  ) {}

  /** A new snapshot run: counts start again, the line is drawn while it runs. */
  start(): void {
    this.total = this.skills = this.done = this.bytes = this.linked = this.fetched = 0;
    this.startedAtMs = Date.now();
    if (!this.enabled || this.timer) return;
    this.timer = setInterval(() => this.draw(), TICK_MS);
    this.timer.unref();
    this.draw();
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

  /** Writes one log line, keeping the progress line below it. */
  log(line: string): void {
    this.clear();
    this.stream.write(`${line}\n`);
    if (this.timer) this.draw();
  }

  /** Removes the line until the next start(). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }

  /** The progress line's text (without terminal control codes). */
  line(): string {
    const seconds = ((Date.now() - this.startedAtMs) / 1000).toFixed(1);
    const files = this.total === 0 ? 'listing files' : `${this.skills.toLocaleString('en-US')} skills, ${this.done.toLocaleString('en-US')}/${this.total.toLocaleString('en-US')} files`;
    return `${SPINNER[this.frame % SPINNER.length]} ${seconds}s  ${this.servers} server${this.servers === 1 ? '' : 's'}; ${files}, ${(this.bytes / MIB).toFixed(1)} MiB (${this.linked.toLocaleString('en-US')} linked, ${this.fetched.toLocaleString('en-US')} fetched)`;
  }

  private draw(): void {
    if (!this.timer) return;
    this.frame += 1;
    const width = Math.max(20, (this.stream.columns ?? 80) - 1);
    this.stream.write(`\r\x1b[2K${this.line().slice(0, width)}`);
    this.drawn = true;
  }

  private clear(): void {
    if (!this.drawn) return;
    this.stream.write('\r\x1b[2K');
    this.drawn = false;
  }
}
