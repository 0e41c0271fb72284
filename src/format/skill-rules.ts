// The Agent Skills naming and frontmatter rules (https://agentskills.io/specification).

const NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Why a skill name breaks the rules, or undefined when it is valid. */
export function skillNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0) return 'name is required';
  if (name.length > 64) return 'name must be at most 64 characters';
  if (!NAME_PATTERN.test(name)) {
    return 'name may contain only a-z, 0-9 and single hyphens, and must not start or end with a hyphen';
  }
  return undefined;
}

/**
 * Why a skill's frontmatter breaks a structural rule (name, description present,
 * field types), or undefined. Length limits are checked by frontmatterLengthProblem.
 */
export function frontmatterStructureProblem(frontmatter: Record<string, unknown>, directoryName: string): string | undefined {
  const nameProblem = skillNameProblem(frontmatter.name);
  if (nameProblem) return nameProblem;
  if (frontmatter.name !== directoryName) {
    return `name "${String(frontmatter.name)}" must equal the directory name "${directoryName}"`;
  }
  const description = frontmatter.description;
  if (typeof description !== 'string' || description.trim().length === 0) return 'description is required';
  const compatibility = frontmatter.compatibility;
  if (compatibility !== undefined && (typeof compatibility !== 'string' || compatibility.length < 1)) {
    return 'compatibility must be a string of 1-500 characters';
  }
  const metadata = frontmatter.metadata;
  if (metadata !== undefined) {
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return 'metadata must be a map';
    if (!Object.values(metadata).every((value) => typeof value === 'string')) return 'metadata must map strings to strings';
  }
  if (Object.getPrototypeOf(frontmatter) !== Object.prototype) return 'frontmatter must not have a "__proto__" field';
  return undefined;
}

/**
 * Why a skill's frontmatter breaks a length limit (description, compatibility), or undefined.
 * Kept apart because real skills exceed them and a server may choose to serve those anyway.
 */
export function frontmatterLengthProblem(frontmatter: Record<string, unknown>): string | undefined {
  const description = frontmatter.description;
  if (typeof description === 'string' && characterCount(description) > 1024) return 'description must be at most 1024 characters';
  const compatibility = frontmatter.compatibility;
  if (typeof compatibility === 'string' && characterCount(compatibility) > 500) {
    return 'compatibility must be a string of 1-500 characters';
  }
  return undefined;
}

/** Why a skill's frontmatter breaks the rules, or undefined when it is valid. */
export function frontmatterProblem(frontmatter: Record<string, unknown>, directoryName: string): string | undefined {
  return frontmatterStructureProblem(frontmatter, directoryName) ?? frontmatterLengthProblem(frontmatter);
}

/** Length in Unicode code points, so a description is not penalized for astral characters. */
function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
