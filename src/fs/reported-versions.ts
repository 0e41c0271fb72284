// What the kernel holds of a path: the version and size getattr last reported, to which it
// clamps reads until its attribute timeout passes. The filesystem keeps that record (it is what
// the filesystem reported); the views that serve bytes keep within it through this. No view's contents.
import { StaleVersionError } from '../errors.js';

/** A version the kernel was told of: its digest, and the size reported last and when (updated while it stays the path's version). */
export interface ReportedVersion {
  readonly digest: string | undefined;
  readonly sizeBytes?: number;
  readonly reportedAtMs?: number;
}

/** A size the kernel may still clamp reads to, and for how many more milliseconds. */
export interface HeldSize {
  sizeBytes: number;
  forMs: number;
}

export interface KernelHoldOptions {
  /** The kernel's attribute timeout (--metadata-ttl): how long a reported size may still clamp reads. */
  metadataTtlMs: number;
  now: () => number;
  log?: ((line: string) => void) | undefined;
}

/** What the filesystem told the kernel, by the path as asked: read by the views that serve bytes. */
export class KernelHold {
  constructor(
    private readonly reportedOf: (path: string) => ReportedVersion | undefined,
    private readonly options: KernelHoldOptions,
  ) {}

  /** The version last reported for `path`, as it stands now: take it before fetching the bytes held against it. */
  reported(path: string): ReportedVersion | undefined {
    return this.reportedOf(path);
  }

  /** The size the kernel may still clamp reads of `reported` to, and for how long; undefined once its attribute timeout passed. */
  heldSize(reported: ReportedVersion | undefined): HeldSize | undefined {
    if (reported?.sizeBytes === undefined || reported.reportedAtMs === undefined) return undefined;
    const forMs = this.options.metadataTtlMs - (this.options.now() - reported.reportedAtMs);
    return forMs > 0 ? { sizeBytes: reported.sizeBytes, forMs } : undefined;
  }

  /**
   * A read returns all the bytes of one verified version, or fails. The kernel clamps reads to
   * the size getattr last reported, for up to the attribute timeout; when the file has since
   * grown on the server and the reported version is gone, its new bytes would arrive cut short.
   */
  refuseClipped(path: string, reported: ReportedVersion | undefined, content: { digest: string; bytes: Buffer }): void {
    if (!reported || reported.digest === undefined || reported.digest === content.digest) return;
    const held = this.heldSize(reported);
    if (held === undefined || content.bytes.length <= held.sizeBytes) return;
    this.refuseStale(path, `changed on the server (now ${content.bytes.length} bytes) after the kernel was told ${held.sizeBytes}`, held.forMs);
  }

  /** Logs and throws StaleVersionError: `path` is served whole once the kernel asks again, within `heldForMs`. */
  refuseStale(path: string, what: string, heldForMs: number): never {
    const message = `${path}: ${what}; served whole after the kernel's attribute cache expires (within ${Math.ceil(heldForMs / 1000)} s)`;
    this.options.log?.(message);
    throw new StaleVersionError(message, { uri: path });
  }
}
