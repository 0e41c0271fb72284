// The names the daemon itself puts at the mount's root, beside one directory per server label.
// None can be a label: labels match ^[a-z0-9][a-z0-9_-]*$ (src/labels.ts), so a name with a dot
// or a leading underscore is never one. The daemon and the CLI commands share these.
import { createHash } from 'node:crypto';

export const SKILLS_JSON = 'skills.json';
/** The small health file `skills-mount status` reads: per-server counts, never per-skill lists. */
export const STATUS_JSON = 'status.json';
/** The approved view: `_approved/<label>/...` holds only skills whose current set a person approved (docs/agents.md). */
export const APPROVED_DIR = '_approved';
/** One JSON record per skill, for `skills-mount approve` and people: `.inspect/<label>/<inspectFileName(dir)>`. */
export const INSPECT_DIR = '.inspect';

const NAME_MAX_BYTES = 255;
const JSON_SUFFIX = '.json';
/** Starts the name of a record whose path is too long to spell: "%" followed by "s" is never an escape below. */
const DIGEST_PREFIX = '%sha256-';

/**
 * The name of a skill's record in `.inspect/<label>/`: the skill directory under the label with
 * "%" and "/" escaped ("acme%2Frefunds.json"), or, when that is longer than a file name may be,
 * a digest of it. Either way one name per directory and one directory per name.
 */
export function inspectFileName(directory: string): string {
  const spelled = `${directory.replaceAll('%', '%25').replaceAll('/', '%2F')}${JSON_SUFFIX}`;
  if (Buffer.byteLength(spelled) <= NAME_MAX_BYTES) return spelled;
  return `${DIGEST_PREFIX}${createHash('sha256').update(directory).digest('hex')}${JSON_SUFFIX}`;
}

/** The directory a record name spells, 'digest' for a digest name (found by comparing names), or undefined for no record name. */
export function directoryOfInspectName(name: string): string | 'digest' | undefined {
  if (!name.endsWith(JSON_SUFFIX)) return undefined;
  if (name.startsWith(DIGEST_PREFIX)) return 'digest';
  const spelled = name.slice(0, -JSON_SUFFIX.length);
  if (/%(?!25|2F)/.test(spelled)) return undefined;
  return spelled.replaceAll('%2F', '/').replaceAll('%25', '%');
}
