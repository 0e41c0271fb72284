// What the FUSE edges tell whoever watches them (the metrics): each operation's start, and its
// end with the errno of its answer. Watching never changes an answer.

/** `op` is the operation's name (lookup, read, ...); `errno` is 0 for success. */
export interface OperationObserver {
  started(op: string): void;
  finished(op: string, errno: number, seconds: number): void;
}

/**
 * Requests the libfuse 3 addon answered itself since mounting (counted opens; lookups, getattrs
 * and listings from the names the edge pushed): no observer hears of them. Also the size of its table.
 */
export interface AddonAnswers {
  opens: number;
  releases: number;
  reads: number;
  /** First opens whose version's leading bytes went to the kernel's page cache with the reply. */
  stored?: number;
  lookups?: number;
  getattrs?: number;
  readdirs?: number;
  table?: AddonTableSize;
}

/** The addon's table of pushed names: names held now, in how many directories, the limit, the most held at once, directories dropped for the limit. */
export interface AddonTableSize {
  entries: number;
  directories: number;
  limit: number;
  peakEntries: number;
  evictions: number;
}
