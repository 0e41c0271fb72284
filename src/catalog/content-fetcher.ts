// A file's verified bytes: from the store, else one resources/read per file version in flight,
// verified against its entry, retried once after refreshing an entry that may have changed.
// Every resources/read of content goes through fetchResource, and every verified result through keep.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { IntegrityError, LimitExceededError, NotFoundError, SkillsMountError } from '../errors.js';
import type { SkillSource, UnverifiedContent } from '../mcp/skill-source.js';
import type { SkillByteBudget } from './skill-byte-budget.js';
import type { CatalogState } from './catalog-state.js';
import type { ContentStore } from './content-store.js';
import type { DurableStore } from './durable-store.js';
import type { HeldEntries } from './held-entries.js';
import type { FileFacts } from './namespace.js';
import type { ServerLog } from './server-log.js';
import type { SkillEntries } from './skill-entries.js';
import type { Subscriptions } from './subscriptions.js';
import type { VerificationFailureReason } from './catalog-options.js';
import { VerificationError, verifyContent, type Expectation, type VerifiedContent } from './verified-content.js';
import { ancestryOf, type ChildAncestries } from './skill-ancestry.js';
import { uriToSegments } from './uri-path.js';

/** A stored copy of a file's version that a reader may serve once it has hashed it to `digest` itself. */
export interface LocalCopy {
  path: string;
  /** sha256 hex of the version. */
  digest: string;
}

export class ContentFetcher {
  private readonly inflight = new Map<string, Promise<VerifiedContent>>();
  /**
   * SKILL.md versions (uri, digest, frontmatter binding) known to agree with the entry: a fact
   * about those three that stays true, kept so that offering a skill's other copies asks once.
   */
  private readonly agreedSkillMds = new LRUCache<string, true>({ max: 65_536 });

  constructor(
    private readonly source: SkillSource,
    private readonly state: CatalogState,
    private readonly store: ContentStore,
    private readonly held: HeldEntries,
    private readonly budget: SkillByteBudget,
    private readonly subscriptions: Subscriptions,
    private readonly entries: SkillEntries,
    private readonly log: ServerLog,
    private readonly durable: DurableStore | undefined,
    private readonly onVerificationFailure: (reason: VerificationFailureReason) => void = () => {},
  ) {}

  /** The file's verified bytes: cached when its version is known, else fetched once however many ask at a time. */
  contentFor(path: string, facts: FileFacts): Promise<VerifiedContent> {
    const knownDigest = facts.digest ?? this.store.freshUnverified(facts.uri)?.digest;
    if (knownDigest !== undefined) {
      const cached = this.store.get(facts.uri, knownDigest);
      if (cached) return Promise.resolve(cached);
    }
    const flightKey = `${facts.uri}\0${facts.digest ?? ''}`;
    let flight = this.inflight.get(flightKey);
    if (!flight) {
      flight = this.fetchVerified(path, facts).finally(() => this.inflight.delete(flightKey));
      this.inflight.set(flightKey, flight);
    }
    return flight;
  }

  /**
   * The stored copy of a file that may be served without this catalog (read whole and hashed on
   * each open, by the FUSE addon): a listed file of a skill whose manifest enumerates its files
   * (the per-skill byte limit needs no count), with a listing digest and size, of a skill not
   * rejected whose SKILL.md is known to agree with its entry (every read of the skill's other
   * files waits for that): verified in this process, or stored after it verified against the
   * entry's frontmatter as listed now (a SKILL.md's copy is stored under that frontmatter:
   * frontmatterBinding). A SKILL.md's own copy is offered only when so stored. 'pending': it has
   * a copy, and may once its SKILL.md has verified. Reads nothing; subscribes to the skill's
   * changes when it offers a copy, since no read of it may reach this catalog to do so.
   * `siblings`: the ancestries of the directory the file is in, shared by the files asked for together.
   */
  localCopy(facts: FileFacts, siblings?: ChildAncestries): LocalCopy | 'pending' | undefined {
    const { digest, sizeBytes, skillUri } = facts;
    if (this.durable?.copyPath === undefined || digest === undefined || sizeBytes === undefined || skillUri === undefined) return undefined;
    const isSkillMd = facts.uri === skillUri;
    if (facts.conflict !== undefined || (facts.frontmatter !== undefined) !== isSkillMd) return undefined;
    const record = this.state.records.get(skillUri);
    if (record === undefined || !Array.isArray(record.files) || this.held.rejection(skillUri) !== undefined) return undefined;
    const segments = uriToSegments(facts.uri);
    if ('problem' in segments) return undefined;
    const ancestry = siblings === undefined ? ancestryOf(this.state, segments) : siblings.of(segments);
    if (ancestry.manifestOwner?.uri !== skillUri || ancestry.unenumeratedOwner !== undefined || ancestry.declined || ancestry.refused) return undefined;
    const path = this.durable.copyPath(facts.uri, digest, bindingOf(facts));
    if (path === undefined) return undefined;
    if (!isSkillMd && !this.skillMdAgrees(record.path)) return 'pending';
    this.subscriptions.subscribe(skillUri);
    return { path, digest: digest.replace(/^sha256:/, '') };
  }

  /** Whether the SKILL.md at `path` is known to agree with the held entry: verified in this process, or stored under its frontmatter. */
  private skillMdAgrees(path: string): boolean {
    const skillMd = this.state.namespace.get(path);
    if (skillMd?.kind !== 'file' || skillMd.facts.digest === undefined) return false;
    const { uri, digest } = skillMd.facts;
    const binding = bindingOf(skillMd.facts);
    const key = `${uri}\0${digest}\0${binding ?? ''}`;
    if (this.agreedSkillMds.has(key)) return true;
    const agrees = this.store.get(uri, digest) !== undefined || (binding !== undefined && this.durable?.copyPath?.(uri, digest, binding) !== undefined);
    if (agrees) this.agreedSkillMds.set(key, true);
    return agrees;
  }

  /** resources/read; a refusal by policy (over a size limit) is not an EIO the FUSE edge logs, so it is logged here. */
  async fetchResource(uri: string): Promise<UnverifiedContent> {
    try {
      return await this.source.readResource(uri);
    } catch (error) {
      if (error instanceof LimitExceededError) this.log.remember(error.message);
      throw error;
    }
  }

  /** Keeps bytes fetched for a path nobody listed: nothing to verify them against. */
  keepUnlisted(content: UnverifiedContent): VerifiedContent {
    return this.keep(verifyContent(this.state.label, content, {}));
  }

  private async fetchVerified(path: string, facts: FileFacts): Promise<VerifiedContent> {
    const label = this.state.label;
    try {
      return await this.fetchAndVerify(facts);
    } catch (error) {
      const listedButGone = error instanceof NotFoundError && facts.digest !== undefined;
      if (!(error instanceof IntegrityError) && !listedButGone) throw error;
      // Perhaps the skill changed since its entry was fetched: refresh it once. The final
      // failure is logged where it becomes an errno, so only the retry is noted here.
      const refreshed = await this.refreshedFacts(path, facts);
      if (!refreshed) {
        if (this.state.namespace.get(path) === undefined) throw new NotFoundError(`${label}: ${path}: no longer in the skill's entry`, { server: label, uri: facts.uri });
        if (listedButGone) this.onVerificationFailure('gone');
        const final = listedButGone
          ? new IntegrityError(
              `${label}: ${facts.uri}: listed in the skill's entry but not served: resources/read answered not found, and the refreshed entry still lists it`,
              { server: label, uri: facts.uri },
            )
          : (error as IntegrityError);
        if (facts.skillUri !== undefined && facts.uri === facts.skillUri) this.held.reject(facts.skillUri, final.message);
        throw final;
      }
      this.log.note(`${(error as Error).message}; the refreshed entry differs, fetching again`);
      try {
        return await this.fetchAndVerify(refreshed);
      } catch (retryError) {
        if (retryError instanceof IntegrityError && refreshed.skillUri !== undefined && refreshed.uri === refreshed.skillUri) {
          this.held.reject(refreshed.skillUri, retryError.message);
        }
        throw retryError;
      }
    }
  }

  /** From the disk cache when it holds this version (hashed again there, the rest verified here), else one resources/read. */
  private async fetchAndVerify(facts: FileFacts): Promise<VerifiedContent> {
    const label = this.state.label;
    if (this.durable && facts.digest !== undefined) {
      const bytes = await this.durable.get(facts.uri, facts.digest, facts.sizeBytes, bindingOf(facts));
      if (bytes) {
        try {
          // The store hashed these bytes on the way out and found them `facts.digest` (its contract).
          return this.keep(verifyContent(label, { uri: facts.uri, bytes, mimeType: undefined }, expectationOf(facts), facts.digest), facts.skillUri);
        } catch (error) {
          // The digest matched but the entry's frontmatter did not: what the server says now decides.
          if (!(error instanceof IntegrityError)) throw error;
        }
      }
    }
    const content = this.verifyServed(await this.fetchResource(facts.uri), expectationOf(facts));
    // Only bytes a listing's digest vouches for go to disk: dynamic and unlisted files key nothing.
    // A SKILL.md goes under the frontmatter it just verified against too.
    // After this open's reply: the put only queues a write, and the reader waits on nothing it does.
    if (this.durable && content.verified) {
      const durable = this.durable;
      setImmediate(() => void durable.put(content.uri, content.digest, content.bytes, bindingOf(facts)));
    }
    return this.keep(content, facts.skillUri);
  }

  /** verifyContent on bytes the server just sent; a failure is reported (bytes from the disk cache are not the server's). */
  private verifyServed(content: UnverifiedContent, expectation: Expectation): VerifiedContent {
    try {
      return verifyContent(this.state.label, content, expectation);
    } catch (error) {
      if (error instanceof VerificationError) this.onVerificationFailure(error.check);
      throw error;
    }
  }

  /** The file's facts after refreshing its entry, or undefined when nothing changed (so a retry is pointless). */
  private async refreshedFacts(path: string, facts: FileFacts): Promise<FileFacts | undefined> {
    const skillUri = facts.skillUri;
    if (skillUri === undefined) return undefined;
    await this.entries.refresh(skillUri).catch((error: unknown) => {
      if (!(error instanceof SkillsMountError)) throw error;
      this.log.remember(`refreshing ${skillUri} failed: ${error.message}`);
    });
    const node = this.state.namespace.get(path);
    if (node?.kind !== 'file') return undefined;
    const next = node.facts;
    const changed = next.digest !== facts.digest || next.sizeBytes !== facts.sizeBytes || JSON.stringify(next.frontmatter) !== JSON.stringify(facts.frontmatter);
    return changed ? next : undefined;
  }

  /** Caches verified content; subscribes to updates of its skill's SKILL.md (or of the file, outside any skill). */
  private keep(content: VerifiedContent, skillUri?: string): VerifiedContent {
    this.budget.charge(content);
    this.store.put(content);
    if (!content.verified) this.store.noteVersion(content.uri, content);
    // One subscription per skill, not per file: a changed skill changes its entry.
    this.subscriptions.subscribe(skillUri ?? content.uri);
    return content;
  }
}

/**
 * What a skill's SKILL.md is stored under besides its URI and digest: the entry's frontmatter it
 * verified against (SEP-2640, Frontmatter Verification), so a copy found under the frontmatter
 * listed now may be served by a reader that only hashes it (the FUSE addon), and one stored under
 * another frontmatter is not found. This catalog still parses what it reads back itself.
 */
export function frontmatterBinding(frontmatter: Record<string, unknown>): string {
  let binding = bindings.get(frontmatter);
  if (binding === undefined) {
    binding = `frontmatter sha256:${createHash('sha256').update(JSON.stringify(frontmatter)).digest('hex')}`;
    bindings.set(frontmatter, binding);
  }
  return binding;
}

/** Each entry's frontmatter object is hashed once (a listing replaces the object when it changes). */
const bindings = new WeakMap<Record<string, unknown>, string>();

function bindingOf(facts: FileFacts): string | undefined {
  return facts.frontmatter === undefined ? undefined : frontmatterBinding(facts.frontmatter);
}

function expectationOf(facts: FileFacts): Expectation {
  return { digest: facts.digest, sizeBytes: facts.sizeBytes, frontmatter: facts.frontmatter };
}
