// The servers a command starts in this process when no mount is there to read (`--config`,
// `--server`, `--only`), and the `LABEL/SKILLDIR` form that names a skill under one of them.

/** `--config`, `--server` and `--only` of approve and revoke: the servers to start in this process, where there is no mount to read. */
export interface ServerSelection {
  configPath: string | undefined;
  serverFlags: string[];
  only: string[];
}

/**
 * The label and skill directory a `LABEL/SKILLDIR` argument names (a trailing `/` or `/SKILL.md`
 * allowed, as on a mount), or what is wrong with it.
 */
export function labelledSkillPath(given: string): { label: string; directory: string } | string {
  const segments = given.replace(/\/+$/, '').split('/');
  if (segments.at(-1) === 'SKILL.md') segments.pop();
  if (given.startsWith('/')) return `"${given}" is absolute`;
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) return `"${given}" has an empty, "." or ".." segment`;
  const [label, ...rest] = segments;
  if (label === undefined || rest.length === 0) return `"${given}" names no skill directory under a label`;
  return { label, directory: rest.join('/') };
}
