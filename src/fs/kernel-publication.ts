// When the documents may show a change: only once every edge that tells the kernel has told it.
// Otherwise, for the few milliseconds the invalidations take, skills.json could name a version
// while the kernel still gives the next open the one before.
/** The longest a document waits for the kernel (a notifier held up by a slow read, a stream of changes). */
export const MAX_PUBLICATION_WAIT_MS = 500;

export class KernelPublication {
  /** Changes reported to an edge whose kernel has not been told yet. */
  private readonly untold = new Set<Promise<void>>();

  /** What a change listener returned: a promise settled once its kernel has been told, or nothing. */
  track(told: void | Promise<void>): void {
    if (told === undefined) return;
    this.untold.add(told);
    void told.finally(() => this.untold.delete(told));
  }

  /** Settles once every change reported so far (and meanwhile) has reached the kernel, or after MAX_PUBLICATION_WAIT_MS. */
  async settled(maxWaitMs = MAX_PUBLICATION_WAIT_MS): Promise<void> {
    const deadline = performance.now() + maxWaitMs;
    while (this.untold.size > 0) {
      const leftMs = deadline - performance.now();
      if (leftMs <= 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(this.untold), new Promise<void>((resolve) => (timer = setTimeout(resolve, leftMs)))]);
      clearTimeout(timer);
    }
  }
}
