// A generated file the kernel sizes once and then clamps reads to (skills.json, status.json).
// Sizes are rounded up to a step and the text padded with spaces (valid JSON whitespace), so a
// fresh rendering that fits the size the kernel holds is served fresh, and one that outgrew it
// waits for the kernel's next getattr, the rendering it was sized for served meanwhile.
//
// Rendering is off the FUSE path's critical section: it runs in slices of a few milliseconds
// (other operations proceed in between), at most once per TTL however many callers wait, and
// builds the text as a list of chunks that are served as they are (no joined copy, no padded
// copy). The bulk of a large document is segments that render their text again when read
// (skills.json holds what each skill shows, not its bytes: a fraction of the document's size).
// A rendering nobody holds open is dropped once the kernel can no longer ask for it.
import { createHash, type Hash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { IntegrityError } from '../errors.js';

/**
 * A piece of a document that renders the same text each time it is asked (it holds a snapshot
 * of what it shows): only its length is kept, and its bytes are rendered again when read.
 */
export interface DocumentSegment {
  text(): string;
}

/** What a document's parts are: text, '' (a place to pause), or a segment rendered again on read. */
export type DocumentPart = string | DocumentSegment;

/** The bytes of an open handle: a plain buffer, or a rendering padded to a size. */
export interface ByteSource {
  readonly length: number;
  slice(position: number, length: number): Buffer;
  /** Every byte at once when they are one buffer in memory (a view, not a copy); renderings have none. */
  whole?(): Buffer;
}

/** A padded rendering: its size and digest are what getattr reports and open serves. */
export interface Rendering extends ByteSource {
  readonly digest: string;
}

export interface DocumentOptions {
  /** Sizes are rounded up to this many bytes, so small changes keep the size the kernel holds. */
  stepBytes: number;
  /** One rendering is reused for this long. */
  ttlMs: number;
  /** How long the kernel may clamp reads to a size it was told (its attribute timeout). */
  kernelHoldMs: number;
  now: () => number;
  /** Awaited before each rendering: the state rendered is one the kernel has been told of. */
  published?: (() => Promise<void>) | undefined;
}

/** How long one slice of rendering runs before other work gets the event loop. */
const SLICE_MS = 8;
/** Rendered text is gathered into chunks of about this size. */
const CHUNK_BYTES = 256 * 1024;

export class GeneratedDocument {
  private latest: Text | undefined;
  private inFlight: Promise<Text> | undefined;
  /** The padded rendering getattr last reported, and when. */
  private reportedView: (PaddedView & { atMs: number }) | undefined;
  private releaseTimer: NodeJS.Timeout | undefined;

  /** `parts` yields the document's text (without its final newline) in pieces; '' marks a place to pause. */
  constructor(
    private readonly parts: () => Iterable<DocumentPart>,
    private readonly options: DocumentOptions,
  ) {}

  /** The padded rendering whose size getattr reports (rendered at most once per TTL). */
  async reported(): Promise<Rendering> {
    const text = await this.fresh();
    const current = this.reportedView;
    if (!current || current.text !== text) {
      this.reportedView = Object.assign(new PaddedView(text, roundUp(text.bytes + 1, this.options.stepBytes)), { atMs: this.options.now() });
    } else {
      current.atMs = this.options.now();
    }
    this.scheduleRelease();
    return this.reportedView!;
  }

  /** What open serves: the fresh rendering if it fits the reported size, else the reported one. */
  async opened(): Promise<Rendering> {
    if (!this.reportedView) await this.reported();
    const reported = this.reportedView!;
    const text = await this.fresh();
    return text.bytes + 1 <= reported.length ? (text === reported.text ? reported : new PaddedView(text, reported.length)) : reported;
  }

  private async fresh(): Promise<Text> {
    const latest = this.latest;
    if (latest && this.options.now() - latest.renderedAtMs <= this.options.ttlMs) return latest;
    this.inFlight ??= this.render().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async render(): Promise<Text> {
    await this.options.published?.();
    const builder = new TextBuilder();
    let sliceStart = performance.now();
    for (const part of this.parts()) {
      if (typeof part !== 'string') builder.addSegment(part);
      else if (part.length > 0) builder.add(part);
      else if (performance.now() - sliceStart > SLICE_MS) {
        await nextTurn();
        sliceStart = performance.now();
      }
    }
    this.latest = builder.finish(this.options.now());
    this.scheduleRelease();
    return this.latest;
  }

  /**
   * Drops renderings nobody can ask for any more: the latest after its TTL, the reported one
   * once the kernel's hold on its size has passed. Open handles keep their own reference.
   */
  private scheduleRelease(): void {
    if (this.releaseTimer) return;
    const delayMs = Math.max(this.options.ttlMs, this.options.kernelHoldMs) + 1;
    this.releaseTimer = setTimeout(() => {
      this.releaseTimer = undefined;
      const now = this.options.now();
      if (this.latest && now - this.latest.renderedAtMs > this.options.ttlMs) this.latest = undefined;
      if (this.reportedView && now - this.reportedView.atMs > this.options.kernelHoldMs) this.reportedView = undefined;
      if (this.latest || this.reportedView) this.scheduleRelease();
    }, delayMs);
    this.releaseTimer.unref?.();
  }
}

/** A rendered text: its pieces, total size and the hash state after its last byte. */
interface Text {
  /** Bytes as rendered, or a segment that renders them again. */
  pieces: Array<Buffer | DocumentSegment>;
  /** Byte offset of each piece; a piece ends where the next begins (the last at `bytes`). */
  offsets: number[];
  bytes: number;
  hash: Hash;
  renderedAtMs: number;
  /** The segments rendered again most recently, by piece index (a reader or two reading on). */
  recent: Map<number, Buffer>;
}

/** Segments whose bytes stay rendered at once per text: two readers reading through it. */
const RECENT_SEGMENTS = 2;

class TextBuilder {
  private readonly pieces: Array<Buffer | DocumentSegment> = [];
  private readonly offsets: number[] = [];
  private pending: string[] = [];
  private pendingLength = 0;
  private bytes = 0;
  private readonly hash = createHash('sha256');

  add(part: string): void {
    this.pending.push(part);
    this.pendingLength += part.length;
    if (this.pendingLength >= CHUNK_BYTES) this.flush();
  }

  /** A segment is rendered now for its length and digest, and its text let go (never copied to bytes). */
  addSegment(segment: DocumentSegment): void {
    this.flush();
    const text = segment.text();
    const length = Buffer.byteLength(text, 'utf8');
    if (length === 0) return;
    this.hash.update(text, 'utf8');
    this.place(length, segment);
  }

  finish(renderedAtMs: number): Text {
    this.flush();
    return { pieces: this.pieces, offsets: this.offsets, bytes: this.bytes, hash: this.hash, renderedAtMs, recent: new Map() };
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const chunk = Buffer.from(this.pending.join(''), 'utf8');
    this.pending = [];
    this.pendingLength = 0;
    this.append(chunk, chunk);
  }

  private append(bytes: Buffer, piece: Buffer): void {
    this.hash.update(bytes);
    this.place(bytes.length, piece);
  }

  private place(length: number, piece: Buffer | DocumentSegment): void {
    this.offsets.push(this.bytes);
    this.pieces.push(piece);
    this.bytes += length;
  }
}

/** The bytes of piece `index`: as held, or its segment rendered again (checked to be the bytes it was). */
function pieceBytes(text: Text, index: number): Buffer {
  const piece = text.pieces[index]!;
  if (Buffer.isBuffer(piece)) return piece;
  const recent = text.recent.get(index);
  if (recent) return recent;
  const bytes = Buffer.from(piece.text(), 'utf8');
  const expectedBytes = (text.offsets[index + 1] ?? text.bytes) - text.offsets[index]!;
  // A segment holds a snapshot, so this cannot differ; if it ever did, no mixed bytes are served.
  if (bytes.length !== expectedBytes) throw new IntegrityError(`a generated document's segment rendered ${bytes.length} bytes, not the ${expectedBytes} it had`);
  if (text.recent.size >= RECENT_SEGMENTS) text.recent.delete(text.recent.keys().next().value!);
  text.recent.set(index, bytes);
  return bytes;
}

/** A text padded with spaces and a final newline to exactly `length` bytes. */
class PaddedView implements Rendering {
  readonly digest: string;

  constructor(
    readonly text: Text,
    readonly length: number,
  ) {
    const hash = text.hash.copy();
    const padding = length - text.bytes - 1;
    for (let left = padding; left > 0; left -= SPACES.length) hash.update(left >= SPACES.length ? SPACES : SPACES.subarray(0, left));
    this.digest = `sha256:${hash.update(NEWLINE).digest('hex')}`;
  }

  slice(position: number, length: number): Buffer {
    const end = Math.min(this.length, position + length);
    if (position >= end) return Buffer.alloc(0);
    const { offsets, bytes } = this.text;
    // Within one piece (the common case): a view, no copy.
    const first = chunkAt(offsets, position);
    const firstEnd = first >= 0 ? (offsets[first + 1] ?? bytes) : 0;
    if (first >= 0 && end <= firstEnd) {
      return pieceBytes(this.text, first).subarray(position - offsets[first]!, end - offsets[first]!);
    }
    const out = Buffer.alloc(end - position, ' ');
    for (let index = Math.max(first, 0); index < offsets.length && offsets[index]! < end; index++) {
      const pieceStart = offsets[index]!;
      const pieceEnd = offsets[index + 1] ?? bytes;
      const from = Math.max(position, pieceStart);
      const to = Math.min(end, pieceEnd);
      if (from < to) pieceBytes(this.text, index).copy(out, from - position, from - pieceStart, to - pieceStart);
    }
    if (end === this.length && this.length > bytes) out[out.length - 1] = 0x0a;
    return out;
  }
}

const SPACES = Buffer.alloc(64 * 1024, ' ');
const NEWLINE = Buffer.from('\n');

/** Index of the last piece starting at or before byte `position` (-1 when there is none); past `bytes` is padding. */
function chunkAt(offsets: number[], position: number): number {
  let low = 0;
  let high = offsets.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (offsets[middle]! <= position) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

function roundUp(value: number, step: number): number {
  return Math.ceil(value / step) * step;
}
