// A digest of a skill's resources set: what a content-bound approval binds to, so a harness
// can tell from skills.json that the set it approved is no longer the one held.
import { createHash } from 'node:crypto';

/** sha256 over the entry's `uri` and `digest` pairs, sorted by URI, one "uri digest\n" line each. */
export function resourcesDigest(files: ReadonlyArray<{ uri: string; digest: string }>): string {
  const lines = files.map((file) => `${file.uri} ${file.digest}\n`).sort();
  const hash = createHash('sha256');
  for (const line of lines) hash.update(line);
  return `sha256:${hash.digest('hex')}`;
}
