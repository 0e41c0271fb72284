// Settings of one server's catalog, and the bound every per-path or per-skill memo keeps to.
// Values only: no module here reads a clock or a server.

import type { ContentCache } from './content-cache.js';
import type { DurableStore } from './durable-store.js';
import type { Log } from '../log.js';
import type { VerificationCheck } from './verified-content.js';

/** Why bytes from the server were refused: a check they failed, or a listed file the server no longer serves. */
export type VerificationFailureReason = VerificationCheck | 'gone';

export interface CatalogOptions {
  log: Log;
  cache: ContentCache;
  /** The verified disk cache of this server: content across restarts, the listing while it is away. */
  durable?: DurableStore | undefined;
  hideDynamic: boolean;
  /** How long a listing is held without a ttlMs from the server; then the daemon lists again by itself. */
  listingTtlMs: number;
  /** How long a path the server said does not exist stays ENOENT without asking again. */
  negativeTtlMs: number;
  /** How long a directory read stands for the directory's children. */
  directoryTtlMs: number;
  /** How long fetched bytes with no listing digest stand for the file's current version. */
  unverifiedTtlMs: number;
  /** At most this many resources are subscribed to for update notifications. */
  maxSubscriptions: number;
  /** Told of every refusal of the server's bytes (metrics); never changes what is served. */
  onVerificationFailure?: ((reason: VerificationFailureReason) => void) | undefined;
  now?: () => number;
  /** In [0, 1): the jitter of re-listings on the daemon's clock; default Math.random. */
  random?: () => number;
}

export const DEFAULT_CATALOG_TIMINGS = {
  listingTtlMs: 60_000,
  negativeTtlMs: 5_000,
  directoryTtlMs: 10_000,
  unverifiedTtlMs: 10_000,
  maxSubscriptions: 10_000,
} as const;

// Per-path and per-skill memory is bounded (least recently used dropped): a client walking
// millions of made-up names, or a server with endless skills, costs a fixed amount.
/** Entries kept in each per-path or per-skill memo (misses, observed versions, refresh times, byte budgets). */
export const MAX_REMEMBERED_PATHS = 10_000;
