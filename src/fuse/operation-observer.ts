// What the FUSE edges tell whoever watches them (the metrics): each operation's start, and its
// end with the errno of its answer. Watching never changes an answer.

/** `op` is the operation's name (lookup, read, ...); `errno` is 0 for success. */
export interface OperationObserver {
  started(op: string): void;
  finished(op: string, errno: number, seconds: number): void;
}

/** Opens, releases and reads the libfuse 3 addon answered itself since mounting (counted opens): no observer hears of them. */
export interface AddonAnswers {
  opens: number;
  releases: number;
  reads: number;
}
