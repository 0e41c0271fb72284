// What the catalog needs of a disk cache (src/cache implements it; the CLI wires it in):
// verified bytes found again across restarts, and the last listing to show while a server
// is away. Every method is best effort and never throws.

export interface DurableStore {
  /** Bytes stored for (uri, digest), hashed again on the way out: their sha256 is `digest`; undefined on a miss or a failed check. */
  get(uri: string, digest: string, sizeBytes?: number): Promise<Buffer | undefined>;
  /** Stores bytes that just verified against a listing's digest. */
  put(uri: string, digest: string, bytes: Uint8Array): Promise<boolean>;
  /** The path of the stored file for (uri, digest), for a reader that hashes it on every access; undefined when none is known. */
  copyPath?(uri: string, digest: string): string | undefined;
  saveListing(document: unknown): Promise<boolean>;
  loadListing(): Promise<{ savedAt: string; document: unknown } | undefined>;
}
