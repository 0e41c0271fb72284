// What each linked skill is called in a skills root. Its own name where that is free; on a
// collision (a folder already there, another server's skill, a nested skill of the same name) a
// qualified name, `<label>-<name>`, then `<label>-<name>-2`...: never a name in use, never a shadow
// of what is there. Every name is a valid Agent Skills name (a harness lists a skill by its folder
// name, and the entry's SKILL.md says the same). A name given once is kept while its skill stays.
import { createHash } from 'node:crypto';
import { skillNameProblem } from '../format/skill-rules.js';

const MAX_NAME_LENGTH = 64;

export interface NameRequest {
  /** Identifies the skill: its server label and SKILL.md URI. */
  key: string;
  label: string;
  /** The skill's own name (from its approval). */
  name: string;
}

export interface NameChoice {
  name: string;
  /** Not the skill's own name: it collided (reported to the person). */
  qualified: boolean;
}

/**
 * Names for `requests` in a root where `taken(name)` says a name is not free (something of
 * someone else's, or a name this sync keeps for another skill). `kept` are names already given,
 * by request key, and stay. Deterministic: requests are named in the order given.
 */
export function chooseNames(requests: readonly NameRequest[], kept: ReadonlyMap<string, string>, taken: (name: string) => boolean): Map<string, NameChoice> {
  const chosen = new Map<string, NameChoice>();
  const used = new Set<string>();
  for (const request of requests) {
    const name = kept.get(request.key);
    if (name === undefined) continue;
    chosen.set(request.key, { name, qualified: name !== request.name });
    used.add(name);
  }
  // Two new skills of one name: both are qualified, so neither wins by the order of a listing.
  const wanted = new Map<string, number>();
  for (const request of requests) if (!chosen.has(request.key)) wanted.set(request.name, (wanted.get(request.name) ?? 0) + 1);
  const free = (name: string) => !used.has(name) && !taken(name);
  for (const request of requests) {
    if (chosen.has(request.key)) continue;
    const own = validName(request.name);
    let name: string;
    if (own !== undefined && wanted.get(request.name) === 1 && free(own)) name = own;
    else name = qualifiedName(request, free);
    chosen.set(request.key, { name, qualified: name !== request.name });
    used.add(name);
  }
  return chosen;
}

/** `<label>-<name>`, made valid and short enough, with a counter while it is not free. */
function qualifiedName(request: NameRequest, free: (name: string) => boolean): string {
  const base = truncate(sanitize(`${request.label}-${request.name}`) || `skill-${digestOf(request.key)}`, MAX_NAME_LENGTH - 4);
  if (free(base)) return base;
  for (let counter = 2; counter < 1000; counter++) {
    const candidate = `${base}-${counter}`;
    if (free(candidate)) return candidate;
  }
  // A thousand of one name: the skill's identity decides.
  return truncate(`${base}-${digestOf(request.key)}`, MAX_NAME_LENGTH);
}

/** The name as is when it is a valid skill name; undefined otherwise (then only a qualified one will do). */
function validName(name: string): string | undefined {
  return skillNameProblem(name) === undefined ? name : undefined;
}

/** Lower case, a-z 0-9 and single hyphens, no hyphen at either end. */
function sanitize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function truncate(name: string, length: number): string {
  return name.length <= length ? name : name.slice(0, length).replace(/-+$/, '');
}

function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}
