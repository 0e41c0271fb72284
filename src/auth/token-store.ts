// The one private store of sign-ins: registered clients, tokens, discovery state and the
// PKCE verifier of a sign-in under way, per (server label, server URL), tokens bound to the
// resource and the authorization server (issuer) that issued them. A running mount, `login`,
// `link` and `snapshot` share it: every change is a read-modify-write under a lock file,
// written atomically (src/private-json-file.ts), so a rotated refresh token is on disk before
// anyone uses it again. Knows nothing of MCP connections; never logs what it holds.
//
// Layout: $XDG_CONFIG_HOME/skills-mount/auth/tokens.json (0600) in auth/ (0700).
import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import type { OAuthClientInformationMixed, OAuthDiscoveryState, OAuthTokens } from '@modelcontextprotocol/client';
import type { StoredDpopKey } from './dpop-key.js';
import { changePrivateFile, readPrivateFile, withPrivateLock, type PrivateFileTerms } from '../private-json-file.js';
import { TokenStoreError, TokenStoreLockedError } from './auth-errors.js';
import { appDir, platformPath } from '../user-dirs.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Tokens as stored: what the token endpoint answered, bound to where they may be used. */
export interface StoredTokens extends OAuthTokens {
  /** The authorization server that issued them. */
  issuer: string;
  /** The RFC 8707 resource they were issued for: they are sent to nothing else. */
  resource: string;
  obtainedAtMs: number;
  /** When the access token expires (from expires_in); undefined: the server did not say. */
  expiresAtMs?: number | undefined;
}

/** A sign-in under way (between the redirect to the browser and the code's exchange). */
export interface PendingSignIn {
  codeVerifier: string;
  state?: string | undefined;
  redirectUrl: string;
  startedAtMs: number;
}

/** Everything stored for one server of one label. */
export interface AuthEntry {
  label: string;
  /** The server's URL as configured (normalized by URL). */
  serverUrl: string;
  /** Registered clients by issuer (a client ID means something only to the server that issued it). */
  clients: Record<string, OAuthClientInformationMixed>;
  tokens?: StoredTokens | undefined;
  discovery?: OAuthDiscoveryState | undefined;
  pending?: PendingSignIn | undefined;
  /** The DPoP key the tokens are bound to, where the authorization server binds them (a secret like the tokens). */
  dpopKey?: StoredDpopKey | undefined;
  /** Scopes a server asked for beyond the sign-in's (a step-up a mount could not complete); the next login asks for them. */
  wantedScope?: string | undefined;
  /** The redirect URL of the last interactive sign-in (what the registered client knows). */
  redirectUrl?: string | undefined;
  /** Why the revocation endpoint the discovery named was not kept (tokens are never sent to it). */
  revocationRefused?: string | undefined;
  updatedAtMs: number;
}

interface StoreFile {
  version: 1;
  entries: AuthEntry[];
}

const FILE_VERSION = 1;
const MAX_FILE_BYTES = 16 * 1024 * 1024;
const DEFAULT_LOCK_TIMEOUT_MS = 30_000;
/** How often a watcher looks at the file's stat when no fs event came (events are not guaranteed on every filesystem). */
const POLL_MS = 500;

const TERMS: PrivateFileTerms = {
  what: 'sign-ins',
  distrust: 'its tokens cannot be trusted',
  refuse: (message, file, cause) => new TokenStoreError(message, file, cause),
  locked: (message, lockPath, holder) => new TokenStoreLockedError(message, lockPath, holder.pid),
  maxBytes: MAX_FILE_BYTES,
};

/** `<config>/skills-mount/auth/tokens.json` (user-dirs.ts: `$XDG_CONFIG_HOME` when absolute, else `~/.config`; `%APPDATA%` on Windows). */
export function defaultTokenStorePath(env: Env = process.env, home: string = homedir(), platform: NodeJS.Platform = process.platform): string {
  return platformPath(platform).join(appDir('config', 'skills-mount', { env, home, platform }), 'auth', 'tokens.json');
}

/** The canonical form of a server URL, as entries are keyed. */
export function serverKey(serverUrl: string): string {
  return new URL(serverUrl).href;
}

/**
 * The store in one file. Reads re-read the file when its stat changed (cheap enough for every
 * request's bearer read); changes re-read it under the lock and write it whole.
 */
export class TokenStore {
  private cached: { signature: string; file: StoreFile } | undefined;

  constructor(
    /** The tokens file. */
    readonly file: string,
    private readonly lockTimeoutMs: number = DEFAULT_LOCK_TIMEOUT_MS,
  ) {}

  /** The entry for (label, server URL) as on disk now; undefined when none. */
  async get(label: string, serverUrl: string): Promise<AuthEntry | undefined> {
    const key = serverKey(serverUrl);
    return (await this.current()).entries.find((entry) => entry.label === label && entry.serverUrl === key);
  }

  /**
   * Runs `work` as the one renewal of a refused sign-in among every process sharing the store (a
   * lock file of its own: `work` itself changes the store under the store's lock).
   */
  renewing<T>(work: () => Promise<T>): Promise<T> {
    return withPrivateLock(this.file, 'renewal', TERMS, this.lockTimeoutMs, work);
  }

  /**
   * Changes one entry under the lock: `apply` gets it as on disk now (undefined: none) and returns
   * the new entry, `null` to remove it, or undefined to change nothing. Resolves with what is
   * stored once the write is on disk. The lock is held while `apply` runs (keep it short).
   */
  async update(
    label: string,
    serverUrl: string,
    apply: (entry: AuthEntry | undefined) => AuthEntry | null | undefined | Promise<AuthEntry | null | undefined>,
  ): Promise<AuthEntry | undefined> {
    const key = serverKey(serverUrl);
    let result: AuthEntry | undefined;
    await changePrivateFile(this.file, TERMS, this.lockTimeoutMs, async (text) => {
      const file = text === undefined ? emptyFile() : parseStore(text, this.file);
      const index = file.entries.findIndex((entry) => entry.label === label && entry.serverUrl === key);
      const before = index === -1 ? undefined : file.entries[index];
      const after = await apply(before === undefined ? undefined : structuredClone(before));
      if (after === undefined) {
        result = before;
        return undefined;
      }
      if (after === null) {
        result = undefined;
        if (index === -1) return undefined;
        file.entries.splice(index, 1);
      } else {
        const stored: AuthEntry = { ...after, label, serverUrl: key, updatedAtMs: Date.now() };
        result = stored;
        if (index === -1) file.entries.push(stored);
        else file.entries[index] = stored;
      }
      return `${JSON.stringify(file, null, 2)}\n`;
    });
    this.cached = undefined;
    return result;
  }

  /** Removes every entry of a label; resolves with what was removed (for revocation). */
  async removeLabel(label: string): Promise<AuthEntry[]> {
    let removed: AuthEntry[] = [];
    await changePrivateFile(this.file, TERMS, this.lockTimeoutMs, (text) => {
      if (text === undefined) return undefined;
      const file = parseStore(text, this.file);
      removed = file.entries.filter((entry) => entry.label === label);
      if (removed.length === 0) return undefined;
      file.entries = file.entries.filter((entry) => entry.label !== label);
      return `${JSON.stringify(file, null, 2)}\n`;
    });
    this.cached = undefined;
    return removed;
  }

  /**
   * Calls `onChange` (at most once per change, soon after it) whenever the file changes: an fs
   * watch on its directory, and a poll of its stat in case no event comes. Returns a stop function.
   */
  watch(onChange: () => void): () => void {
    const dir = path.dirname(this.file);
    let last: string | undefined;
    let stopped = false;
    let watcher: FSWatcher | undefined;
    const check = async () => {
      if (stopped) return;
      const signature = await this.signature();
      if (last !== undefined && signature !== last && !stopped) onChange();
      last = signature;
    };
    void check();
    const startWatcher = () => {
      if (watcher || stopped) return;
      try {
        watcher = watch(dir, { persistent: false }, (_event, name) => {
          if (name === null || name === path.basename(this.file)) void check();
        });
        watcher.on('error', () => {
          watcher?.close();
          watcher = undefined;
        });
      } catch {
        // No directory yet (nobody has signed in): the poll notices the file once it exists.
        watcher = undefined;
      }
    };
    startWatcher();
    const timer = setInterval(() => {
      startWatcher();
      void check();
    }, POLL_MS);
    timer.unref();
    return () => {
      stopped = true;
      clearInterval(timer);
      watcher?.close();
    };
  }

  private async signature(): Promise<string> {
    try {
      const stats = await stat(this.file, { bigint: true });
      return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
    } catch {
      return 'none';
    }
  }

  private async current(): Promise<StoreFile> {
    const signature = await this.signature();
    if (this.cached?.signature === signature) return this.cached.file;
    const text = await readPrivateFile(this.file, TERMS);
    const file = text === undefined ? emptyFile() : parseStore(text, this.file);
    this.cached = { signature, file };
    return file;
  }
}

function emptyFile(): StoreFile {
  return { version: FILE_VERSION, entries: [] };
}

/** The file's contents, checked for shape; a file that is not ours to read is an error, never an empty store. */
function parseStore(text: string, file: string): StoreFile {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new TokenStoreError(`sign-ins file ${file} is not valid JSON (${(error as Error).message}); move it aside and sign in again`, file, error);
  }
  const bad = (what: string) => new TokenStoreError(`sign-ins file ${file}: ${what}; move it aside and sign in again`, file);
  if (!isObject(document) || document.version !== FILE_VERSION || !Array.isArray(document.entries)) throw bad(`not a version ${FILE_VERSION} sign-ins file`);
  for (const entry of document.entries) {
    if (!isObject(entry) || typeof entry.label !== 'string' || typeof entry.serverUrl !== 'string' || !isObject(entry.clients)) throw bad('an entry without label, serverUrl or clients');
    const tokens = entry.tokens;
    if (tokens !== undefined && (!isObject(tokens) || typeof tokens.access_token !== 'string' || typeof tokens.issuer !== 'string' || typeof tokens.resource !== 'string')) {
      throw bad(`the tokens of "${entry.label}" lack access_token, issuer or resource`);
    }
  }
  return document as unknown as StoreFile;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
