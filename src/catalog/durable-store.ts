// What the catalog needs of a disk cache (src/cache implements it; the CLI wires it in):
// verified bytes found again across restarts, and the last listing to show while a server
// is away. Every method is best effort and never throws.

export interface DurableStore {
  /**
   * Bytes stored for (uri, digest), hashed again on the way out: their sha256 is `digest`;
   * undefined on a miss or a failed check. `binding` names what else they were verified against
   * when stored (a SKILL.md's listed frontmatter); bytes stored under another binding are a miss.
   */
  get(uri: string, digest: string, sizeBytes?: number, binding?: string): Promise<Buffer | undefined>;
  /** Stores bytes that just verified against a listing's digest (and `binding`). */
  put(uri: string, digest: string, bytes: Uint8Array, binding?: string): Promise<boolean>;
  /** The path of the stored file for (uri, digest, binding), for a reader that hashes it on every access; undefined when none is known. */
  copyPath?(uri: string, digest: string, binding?: string): string | undefined;
  saveListing(document: unknown): Promise<boolean>;
  loadListing(): Promise<{ savedAt: string; document: unknown } | undefined>;
}
