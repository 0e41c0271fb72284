// The content versions the libfuse 3 edge holds open in the core: one core handle per kernel
// inode (an inode is one version), shared by every open of it, kept for the next open within a
// byte bound, and released only when nothing holds it any more: no request of the edge's in
// flight, no kernel handle the edge answered itself, no entry of the addon's that counts kernel
// handles for it. Knows the core's handles and the addon's entries by number only.
import { LRUCache } from 'lru-cache';

/** One version held open in the core. */
export interface Pin {
  /** The kernel inode it is the version of; 0 for a rendering of its own (a live document). */
  readonly ino: number;
  /** The core handle, and the fh the kernel holds. */
  readonly handle: number;
  readonly sizeBytes: number;
}

interface PinState extends Pin {
  /** Requests in flight, kernel handles answered in JS, and one per addon entry in `entries`. */
  refs: number;
  /** Out of the byte bound (or never in it): released at its last reference. */
  evicted: boolean;
  /** Gens of the addon's entries that each hold one reference. */
  entries: Set<number>;
  /** The entry answering opens now (0: none; opens reach the edge). */
  answering: number;
}

/** What the pins need of the addon: to stop an entry answering opens (returns the kernel handles still open on it). */
export interface CountedOpens {
  retire(ino: number): number;
}

export class VersionPins {
  private readonly kept: LRUCache<number, PinState>;
  private readonly byHandle = new Map<number, PinState>();
  /** The version pin alive for each inode (kept or evicted), so a new open shares it. */
  private readonly byIno = new Map<number, PinState>();
  private readonly making = new Map<number, { waiters: number; promise: Promise<PinState> }>();

  constructor(
    private readonly release: (handle: number) => void,
    private readonly counted: CountedOpens,
    limitBytes: number,
  ) {
    this.kept = new LRUCache<number, PinState>({
      maxSize: Math.max(1, limitBytes),
      sizeCalculation: (pin) => Math.max(1, pin.sizeBytes),
      dispose: (pin) => this.evict(pin),
    });
  }

  /** Version pins alive (kept or held), for tests and stats. */
  get size(): number {
    return this.byIno.size;
  }

  /**
   * The version of inode `ino`, with one reference taken for the caller (let go of it with
   * unref, or hand it to the addon's entry with countedBy). The reference is taken in the turn
   * the pin is found or made: another request's pin may evict it from the byte bound at any
   * await, and a --cache-size smaller than one file evicts at once. `open` makes the core handle
   * when no pin is alive (undefined: the version is gone); `known` says whether the kernel still
   * holds the inode once it is made (if not, it is not kept).
   */
  async acquire(ino: number, open: () => Promise<{ handle: number; sizeBytes: number } | undefined>, known: () => boolean): Promise<Pin | undefined> {
    const alive = this.byIno.get(ino);
    if (alive) {
      // Wanted again: back within the bound if it was evicted while handles held it.
      if (alive.evicted) this.keep(alive);
      else this.kept.get(ino);
      alive.refs++;
      return alive;
    }
    let making = this.making.get(ino);
    if (making === undefined) {
      const waiting = { waiters: 0 } as { waiters: number; promise: Promise<PinState> };
      waiting.promise = (async () => {
        const opened = await open();
        if (opened === undefined) throw new VersionGone();
        // Every request waiting for this pin holds a reference before the bound may see it.
        const pin: PinState = { ino, ...opened, refs: waiting.waiters, evicted: true, entries: new Set(), answering: 0 };
        this.byHandle.set(pin.handle, pin);
        this.byIno.set(ino, pin);
        if (known()) this.keep(pin);
        return pin;
      })().finally(() => this.making.delete(ino));
      making = waiting;
      this.making.set(ino, making);
    }
    making.waiters++;
    try {
      return await making.promise;
    } catch (error) {
      if (error instanceof VersionGone) return undefined;
      throw error;
    }
  }

  /** A core handle of its own (a rendering per open), with the caller's one reference. */
  own(handle: number): Pin {
    const pin: PinState = { ino: 0, handle, sizeBytes: 0, refs: 1, evicted: true, entries: new Set(), answering: 0 };
    this.byHandle.set(handle, pin);
    return pin;
  }

  /** Whether a pin is out of the byte bound (then opens of it are counted, not answered, by the addon). */
  isEvicted(pin: Pin): boolean {
    return this.byHandle.get(pin.handle)?.evicted ?? true;
  }

  /** Lets go of one reference (a request done, a kernel handle the edge answered released). */
  unref(handle: number): void {
    const pin = this.byHandle.get(handle);
    if (pin === undefined) return;
    pin.refs--;
    this.releaseIfFree(pin);
  }

  /**
   * The addon answered an open of `pin` under its entry `gen` (-1: it did not count it). The
   * caller's reference belongs to that entry if the entry is new to us, else it is let go of.
   */
  countedBy(pin: Pin, gen: number, answering: boolean): void {
    const state = this.byHandle.get(pin.handle);
    if (state === undefined) return;
    if (gen < 0 || state.entries.has(gen)) {
      if (gen >= 0 && answering) state.answering = gen;
      this.unref(pin.handle);
      return;
    }
    state.entries.add(gen);
    if (answering) state.answering = gen;
  }

  /** The addon's entry `gen` saw its last kernel handle released after it was retired: its reference goes. */
  drained(handle: number, gen: number): void {
    const pin = this.byHandle.get(handle);
    if (pin === undefined || !pin.entries.delete(gen)) return;
    if (pin.answering === gen) pin.answering = 0;
    pin.refs--;
    this.releaseIfFree(pin);
  }

  /** The kernel forgot the inode: its version is kept no longer. */
  forget(ino: number): void {
    this.kept.delete(ino);
  }

  /** Lets go of every kept version (at unmount). */
  clear(): void {
    this.kept.clear();
  }

  private keep(pin: PinState): void {
    pin.evicted = false;
    this.kept.set(pin.ino, pin);
    // Larger than the whole bound: the LRU keeps it not, and tells nobody.
    if (this.kept.get(pin.ino) !== pin) pin.evicted = true;
  }

  private evict(pin: PinState): void {
    pin.evicted = true;
    if (pin.answering !== 0) {
      // New opens reach the edge again; handles still open keep the entry until they are released.
      const gen = pin.answering;
      pin.answering = 0;
      if (this.counted.retire(pin.ino) === 0 && pin.entries.delete(gen)) pin.refs--;
    }
    this.releaseIfFree(pin);
  }

  private releaseIfFree(pin: PinState): void {
    if (!pin.evicted || pin.refs > 0) return;
    this.byHandle.delete(pin.handle);
    if (this.byIno.get(pin.ino) === pin) this.byIno.delete(pin.ino);
    this.release(pin.handle);
  }
}

/** The version an inode names could not be opened (the core holds another now). */
class VersionGone extends Error {}
