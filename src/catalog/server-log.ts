// One server's log lines and the problems kept for skills.json and status.json. Every line
// carries the server's label; what a problem means is for the caller.
import type { Log } from '../log.js';

const MAX_REMEMBERED_PROBLEMS = 50;

export class ServerLog {
  private problems: string[] = [];

  constructor(
    private readonly label: string,
    private readonly log: Log,
  ) {}

  /** Logs one line that is not a problem to keep. */
  note(line: string): void {
    this.log(`[${this.label}] ${line}`);
  }

  /** Logs a problem and keeps it (the most recent MAX_REMEMBERED_PROBLEMS). */
  remember(problem: string): void {
    this.log(`[${this.label}] ${problem}`);
    this.problems.push(problem);
    if (this.problems.length > MAX_REMEMBERED_PROBLEMS) this.problems.shift();
  }

  /** Logs a problem the first time it occurs (a fallback that would otherwise log on every readdir). */
  rememberOnce(problem: string): void {
    if (this.problems.includes(problem)) return;
    this.remember(problem);
  }

  /** Starts the kept problems over with these: logged, or (`quiet`) only kept. */
  restart(problems: readonly string[], quiet: boolean): void {
    if (quiet) {
      this.problems = problems.slice(-MAX_REMEMBERED_PROBLEMS);
      return;
    }
    this.problems = [];
    for (const problem of problems) this.remember(problem);
  }

  /** A copy of the kept problems, oldest first. */
  list(): string[] {
    return [...this.problems];
  }

  get count(): number {
    return this.problems.length;
  }
}
