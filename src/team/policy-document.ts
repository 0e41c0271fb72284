// The policy file's format (docs/policy.md): its text parsed and checked into rules, or a
// PolicyFormatError saying what is wrong and where. Strict on purpose: an unknown key, a newer
// version or a key given twice is refused, never half-read. Knows text, not files or servers.
import { visit } from 'jsonc-parser';
import { JsoncSyntaxError, parseJsonc, type TextPosition } from '../config/jsonc.js';
import { SkillsMountError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import { PathGlob, pathGlobProblem } from './path-glob.js';
import { normalUrl, type NormalUrl } from './server-match.js';

/** The one version of the format this build reads. */
export const POLICY_VERSION = 1;
/** The largest policy file read: far beyond any real one, small enough that a stray file costs nothing. */
export const MAX_POLICY_BYTES = 1024 * 1024;

/** What a server may be used for, as a policy names it. */
export const POLICY_ACTIONS = ['mount', 'approve', 'lock', 'link'] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

/** The grants a policy can withhold: a skill's `allowed-tools`, and running its scripts. */
export const POLICY_GRANTS = ['allowed-tools', 'exec'] as const;
export type PolicyGrant = (typeof POLICY_GRANTS)[number];

/** One entry of "servers", checked: a URL rule or a command rule, and what it allows. */
export type ServerRule =
  | { kind: 'url'; url: string; normal: NormalUrl; may: readonly PolicyAction[] }
  | { kind: 'command'; command: string; args: readonly string[] | undefined; may: readonly PolicyAction[] };

/** One entry of "skills", checked: a path glob, or a digest (lower-case `sha256:<64 hex>`). */
export type SkillRule = { kind: 'path'; glob: PathGlob } | { kind: 'digest'; digest: string };

/** A policy file's rules; an absent key is undefined (no restriction of that kind). */
export interface PolicyDocument {
  servers: readonly ServerRule[] | undefined;
  skills: readonly SkillRule[] | undefined;
  neverGrant: readonly PolicyGrant[];
}

/** The text is not a policy this build can honour. `at` is where in the document ("servers[2].may"), when known. */
export class PolicyFormatError extends SkillsMountError {
  override name = 'PolicyFormatError';
  readonly code = 'POLICY_FORMAT';

  constructor(
    message: string,
    readonly at: string | undefined,
    readonly position: TextPosition | undefined = undefined,
  ) {
    super(message);
  }
}

const TOP_KEYS = ['policyVersion', 'servers', 'skills', 'neverGrant'] as const;
const SERVER_RULE_KEYS = ['url', 'command', 'args', 'may'] as const;
const SKILL_RULE_KEYS = ['path', 'digest'] as const;
const DIGEST = /^sha256:[0-9a-f]{64}$/i;

/** The checked rules of a policy file's text (JSON; comments and trailing commas allowed); throws PolicyFormatError. */
export function parsePolicyText(text: string): PolicyDocument {
  const sizeBytes = Buffer.byteLength(text, 'utf8');
  if (sizeBytes > MAX_POLICY_BYTES) throw new PolicyFormatError(`is ${sizeBytes} bytes, more than a policy file may be (${MAX_POLICY_BYTES} bytes)`, undefined);
  let value: unknown;
  try {
    value = parseJsonc(text);
  } catch (error) {
    if (error instanceof JsoncSyntaxError) throw new PolicyFormatError(`line ${error.position.line}, column ${error.position.column}: ${error.message}`, undefined, error.position);
    throw error;
  }
  const duplicate = firstDuplicateKey(text);
  if (duplicate !== undefined) {
    const { key, position } = duplicate;
    throw new PolicyFormatError(`line ${position.line}, column ${position.column}: "${key}" is given twice in one object (which one holds would be a guess)`, undefined, position);
  }
  if (!isObject(value)) throw new PolicyFormatError('is not a JSON object ({ "policyVersion": 1, ... })', undefined);
  // The version first: a newer file's new keys are not typos, and should not be called that.
  const version = value.policyVersion;
  if (version === undefined) throw new PolicyFormatError(`has no "policyVersion" (write "policyVersion": ${POLICY_VERSION})`, 'policyVersion');
  if (typeof version === 'number' && Number.isInteger(version) && version > POLICY_VERSION) {
    throw new PolicyFormatError(`was written for a newer skills-mount (policyVersion ${version}; this one reads policyVersion ${POLICY_VERSION}): upgrade skills-mount`, 'policyVersion');
  }
  if (version !== POLICY_VERSION) throw new PolicyFormatError(`"policyVersion" is ${shown(version)}; it must be ${POLICY_VERSION}`, 'policyVersion');
  unknownKeys(value, TOP_KEYS, '');
  return {
    servers: value.servers === undefined ? undefined : arrayOf(value.servers, 'servers', serverRule),
    skills: value.skills === undefined ? undefined : arrayOf(value.skills, 'skills', skillRule),
    neverGrant: value.neverGrant === undefined ? [] : [...new Set(arrayOf(value.neverGrant, 'neverGrant', (item, at) => oneOf(item, POLICY_GRANTS, at, 'a grant')))],
  };
}

function serverRule(item: unknown, at: string): ServerRule {
  if (!isObject(item)) throw new PolicyFormatError(`${at}: is not an object ({ "url": ..., "may": [...] } or { "command": ..., "may": [...] })`, at);
  unknownKeys(item, SERVER_RULE_KEYS, at);
  if ((item.url === undefined) === (item.command === undefined)) throw new PolicyFormatError(`${at}: must have exactly one of "url" and "command"`, at);
  if (item.may === undefined) throw new PolicyFormatError(`${at}: has no "may" (the actions it allows: ${POLICY_ACTIONS.join(', ')}; [] for none)`, `${at}.may`);
  const may = [...new Set(arrayOf(item.may, `${at}.may`, (action, where) => oneOf(action, POLICY_ACTIONS, where, 'an action')))];
  if (item.url !== undefined) {
    if (item.args !== undefined) throw new PolicyFormatError(`${at}: "args" belongs to a "command" rule, not a "url" one`, `${at}.args`);
    return { kind: 'url', url: urlRule(item.url, `${at}.url`), normal: normalOf(item.url as string), may };
  }
  const command = item.command;
  if (typeof command !== 'string' || command === '' || command.includes('\u0000')) throw new PolicyFormatError(`${at}.command: must be a non-empty string`, `${at}.command`);
  const args = item.args === undefined ? undefined : arrayOf(item.args, `${at}.args`, (arg, where) => {
    if (typeof arg !== 'string') throw new PolicyFormatError(`${where}: is ${shown(arg)}, not a string`, where);
    return arg;
  });
  return { kind: 'command', command, args, may };
}

function urlRule(value: unknown, at: string): string {
  if (typeof value !== 'string') throw new PolicyFormatError(`${at}: is ${shown(value)}, not a URL string`, at);
  const normal = normalUrl(value);
  if ('problem' in normal) throw new PolicyFormatError(`${at}: ${shown(value)} ${normal.problem}`, at);
  const url = new URL(value);
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new PolicyFormatError(`${at}: ${shown(value)} has a user name, query or fragment; a rule names an origin and a path only`, at);
  }
  return value;
}

function normalOf(url: string): NormalUrl {
  const normal = normalUrl(url);
  if ('problem' in normal) throw new Error(`unreachable: ${url} was checked`);
  return normal;
}

function skillRule(item: unknown, at: string): SkillRule {
  if (!isObject(item)) throw new PolicyFormatError(`${at}: is not an object ({ "path": "acme/**" } or { "digest": "sha256:..." })`, at);
  unknownKeys(item, SKILL_RULE_KEYS, at);
  if ((item.path === undefined) === (item.digest === undefined)) throw new PolicyFormatError(`${at}: must have exactly one of "path" and "digest"`, at);
  if (item.path !== undefined) {
    if (typeof item.path !== 'string') throw new PolicyFormatError(`${at}.path: is ${shown(item.path)}, not a string`, `${at}.path`);
    const problem = pathGlobProblem(item.path);
    if (problem !== undefined) throw new PolicyFormatError(`${at}.path: ${shown(item.path)} ${problem}`, `${at}.path`);
    return { kind: 'path', glob: PathGlob.compile(item.path) };
  }
  if (typeof item.digest !== 'string' || !DIGEST.test(item.digest)) throw new PolicyFormatError(`${at}.digest: is ${shown(item.digest)}, not "sha256:" and 64 hex digits`, `${at}.digest`);
  return { kind: 'digest', digest: item.digest.toLowerCase() };
}

function arrayOf<T>(value: unknown, at: string, each: (item: unknown, at: string) => T): T[] {
  if (!Array.isArray(value)) throw new PolicyFormatError(`${at}: is ${shown(value)}, not an array`, at);
  return value.map((item, index) => each(item, `${at}[${index}]`));
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], at: string, what: string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new PolicyFormatError(`${at}: ${shown(value)} is not ${what} (${allowed.join(', ')})`, at);
}

function unknownKeys(value: Record<string, unknown>, known: readonly string[], at: string): void {
  const unknown = Object.keys(value).find((key) => !known.includes(key));
  if (unknown === undefined) return;
  const where = at === '' ? unknown : `${at}.${unknown}`;
  throw new PolicyFormatError(`${at === '' ? '' : `${at}: `}unknown key ${shown(unknown)} (known: ${known.join(', ')})`, where);
}

/** The first key given twice in one object, and where (JSON.parse would silently keep the last). */
function firstDuplicateKey(text: string): { key: string; position: TextPosition } | undefined {
  const open: Array<Set<string> | undefined> = [];
  let found: { key: string; position: TextPosition } | undefined;
  visit(
    text.replace(/^\uFEFF/, ''),
    {
      onObjectBegin: () => void open.push(new Set()),
      onObjectEnd: () => void open.pop(),
      onArrayBegin: () => void open.push(undefined),
      onArrayEnd: () => void open.pop(),
      onObjectProperty: (key, _offset, _length, line, character) => {
        const keys = open.at(-1);
        if (keys === undefined || found !== undefined) return;
        if (keys.has(key)) found = { key, position: { line: line + 1, column: character + 1 } };
        keys.add(key);
      },
    },
    { allowTrailingComma: true, disallowComments: false },
  );
  return found;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value from the file, quoted and short, for a message. */
function shown(value: unknown): string {
  const text = value === undefined ? 'missing' : JSON.stringify(value);
  return escapeForLog(text.length > 80 ? `${text.slice(0, 77)}...` : text);
}
