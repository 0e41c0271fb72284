// Bytes become servable only here: verifyContent checks size, digest and (for a
// SKILL.md) frontmatter against what the listing promised, and only it can make a
// VerifiedContent. Content with nothing to check against is marked unverified.
import { IntegrityError } from '../errors.js';
import { sha256Digest } from '../format/digest.js';
import { FrontmatterError, frontmatterDifference, parseFrontmatter } from '../format/frontmatter.js';
import type { UnverifiedContent } from '../mcp/skill-source.js';

/** What a listing promised about one file; every present field is checked. */
export interface Expectation {
  digest?: string | undefined;
  sizeBytes?: number | undefined;
  /** The entry's frontmatter, for a skill's own SKILL.md. */
  frontmatter?: Record<string, unknown> | undefined;
}

const brand = Symbol('VerifiedContent');

/** Bytes that passed verification (or had nothing to be checked against: `verified` false). */
export interface VerifiedContent {
  readonly [brand]: true;
  readonly uri: string;
  readonly bytes: Buffer;
  /** sha256 of `bytes`, computed once here. */
  readonly digest: string;
  /** True when a listing digest vouched for these bytes. */
  readonly verified: boolean;
}

/** Which promise of the listing the bytes broke. */
export type VerificationCheck = 'size' | 'digest' | 'frontmatter';

/** Bytes that failed one check; still an IntegrityError everywhere (EIO), with the check named for the metrics. */
export class VerificationError extends IntegrityError {
  constructor(
    message: string,
    readonly check: VerificationCheck,
    context: { server: string; uri: string },
  ) {
    super(message, context);
  }
}

/**
 * Checks content against the expectation; throws VerificationError naming expected and actual.
 * `hashedAs`: the sha256 of these very bytes, when this process already computed it (the disk
 * cache hashes what it reads back), so they are not hashed twice; never a digest someone claimed.
 */
export function verifyContent(server: string, content: UnverifiedContent, expectation: Expectation, hashedAs?: string): VerifiedContent {
  const { uri, bytes } = content;
  const fail = (check: VerificationCheck, what: string, expected: string, actual: string) =>
    new VerificationError(`${server}: ${uri}: ${what} mismatch: expected ${expected}, got ${actual}`, check, { server, uri });
  if (expectation.sizeBytes !== undefined && bytes.length !== expectation.sizeBytes) {
    throw fail('size', 'size', `${expectation.sizeBytes} bytes`, `${bytes.length} bytes`);
  }
  const digest = hashedAs ?? sha256Digest(bytes);
  if (expectation.digest !== undefined && digest !== expectation.digest) {
    throw fail('digest', 'digest', expectation.digest, digest);
  }
  if (expectation.frontmatter !== undefined) {
    let actual: Record<string, unknown>;
    try {
      actual = parseFrontmatter(bytes.toString('utf8'));
    } catch (error) {
      const reason = error instanceof FrontmatterError ? error.message : String(error);
      throw fail('frontmatter', 'frontmatter', 'the listed frontmatter', reason);
    }
    const field = frontmatterDifference(expectation.frontmatter, actual);
    if (field !== undefined) {
      throw fail('frontmatter', `frontmatter field "${field}"`, JSON.stringify(pick(expectation.frontmatter, field)), JSON.stringify(pick(actual, field)));
    }
  }
  return { [brand]: true, uri, bytes, digest, verified: expectation.digest !== undefined };
}

function pick(object: Record<string, unknown>, field: string): unknown {
  const top = field.split(/[.[]/)[0] ?? field;
  const value = object[top];
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 80 ? `${text.slice(0, 77)}...` : value;
}
