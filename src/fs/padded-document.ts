// A generated file the kernel sizes once and then clamps reads to (skills.json, status.json):
// sizes are rounded up to a step and the text padded with spaces (valid JSON whitespace), so a
// fresh rendering that fits the size the kernel holds is served fresh, and one that outgrew
// it waits for the kernel's next getattr, the rendering it was sized for served meanwhile.
import { sha256Digest } from '../format/digest.js';

export interface Rendering {
  bytes: Buffer;
  digest: string;
}

export class PaddedDocument {
  private reportedRendering: (Rendering & { atMs: number }) | undefined;

  constructor(
    private readonly render: () => Buffer,
    private readonly options: { stepBytes: number; ttlMs: number; now: () => number },
  ) {}

  /** The padded rendering whose size getattr reports (re-rendered and hashed at most once per TTL). */
  reported(): Rendering {
    const current = this.reportedRendering;
    if (!current || this.options.now() - current.atMs > this.options.ttlMs) {
      const text = this.render();
      this.reportedRendering = { ...rendering(padJson(text, roundUp(text.length + 1, this.options.stepBytes))), atMs: this.options.now() };
    }
    return this.reportedRendering!;
  }

  /** What open serves: fresh if it fits the reported size, else the reported rendering. */
  opened(): Rendering {
    const reported = this.reportedRendering ?? this.reported();
    const text = this.render();
    return text.length < reported.bytes.length ? rendering(padJson(text, reported.bytes.length)) : reported;
  }
}

function rendering(bytes: Buffer): Rendering {
  return { bytes, digest: sha256Digest(bytes) };
}

function roundUp(value: number, step: number): number {
  return Math.ceil(value / step) * step;
}

/** `text` (JSON ending in a newline) padded with spaces to exactly `sizeBytes`, still ending in a newline. */
function padJson(text: Buffer, sizeBytes: number): Buffer {
  const padded = Buffer.alloc(sizeBytes, ' ');
  text.copy(padded, 0, 0, text.length - 1);
  padded[sizeBytes - 1] = 0x0a;
  return padded;
}
