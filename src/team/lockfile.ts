// The project lockfile, `skills-lock.json`: the skills a team approved for a project, each bound to
// its exact bytes (every file's path, size and sha256, as a content-bound approval binds them), the
// server it comes from by identity, and the grants given. Meant to be committed: written in a stable
// order and layout so that a change is a small `git diff`, never holding a token, header or secret.
// A lockfile is input from a repository like any other: a regular file in the project (never a
// symbolic link out of it), parsed strictly, bounded, every entry checked (digests recomputed, paths
// confined), and refused whole, naming the entry, when anything is wrong. Text that is not JSON
// (what a file that is no lockfile holds) is refused by where it fails, never quoted.
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import path from 'node:path';
import { printParseErrorCode, visit, type ParseErrorCode } from 'jsonc-parser';
import type { ServerConfig } from '../config/server-config.js';
import { resourcesDigest } from '../catalog/resources-digest.js';
import { uriToSegments } from '../catalog/uri-path.js';
import { SkillsMountError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import { isValidLabel } from '../labels.js';
import { errorCode, errorMessage } from '../private-files.js';

export const LOCKFILE_NAME = 'skills-lock.json';
/** The format this skills-mount writes and reads; a newer one is refused, never half-understood. */
export const LOCKFILE_VERSION = 1;
/** Far beyond any real project (1,000 skills of 20 files is ~3 MiB), small enough to read at once. */
export const MAX_LOCKFILE_BYTES = 32 * 1024 * 1024;
const MAX_SKILLS = 20_000;
const MAX_FILES_PER_SKILL = 10_000;
const MAX_STRING_LENGTH = 4_096;
const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;
/** Why a lockfile that is a symbolic link, a folder or a device is refused, in its error. */
const REGULAR_FILE = 'a lockfile is a regular file in the project';

/** Where a locked skill comes from: the server as configured, without anything secret. */
export type ServerIdentity = { url: string } | { command: string; args: string[] };

export interface LockedFile {
  /** Relative to the skill's directory. */
  path: string;
  uri: string;
  sizeBytes: number;
  /** `sha256:<64 hex>`. */
  digest: string;
}

/** What a person allowed beyond reading: the `allowed-tools` value granted (null: none), and exec for scripts. */
export interface LockedGrants {
  allowedTools: string | null;
  exec: boolean;
}

export interface LockedSkill {
  /** The server's label in the project's configuration. */
  server: string;
  /** The skill's directory under the label, as on a mount. */
  path: string;
  /** The URI of its SKILL.md. */
  uri: string;
  name: string;
  /** The SKILL.md file's digest. */
  skillDigest: string;
  /** resourcesDigest(files): what skills.json and the approvals report for the set. */
  resourcesDigest: string;
  /** Sorted by path. */
  files: LockedFile[];
  grants: LockedGrants;
}

export interface Lockfile {
  /** By label, for every server a skill names. */
  servers: Record<string, ServerIdentity>;
  /** Sorted by server, then path. */
  skills: LockedSkill[];
}

/** A lockfile that cannot be used: unreadable, too large, of a newer version, or with a bad entry (named). */
export class LockfileError extends SkillsMountError {
  override name = 'LockfileError';
  readonly code = 'LOCKFILE';

  constructor(
    message: string,
    /** The lockfile at fault. */
    readonly file: string,
    /** The entry at fault (`skills[3] (docs/pdf)`), when one is. */
    readonly entry?: string | undefined,
    cause?: unknown,
  ) {
    super(`${file}${entry === undefined ? '' : `: ${entry}`}: ${message}`, cause === undefined ? {} : { cause });
  }
}

export function emptyLockfile(): Lockfile {
  return { servers: {}, skills: [] };
}

/** The lockfile of a project folder. */
export function lockfilePath(projectDir: string): string {
  return path.join(path.resolve(projectDir), LOCKFILE_NAME);
}

/** The key of a locked skill: one entry per server and skill directory. */
export function lockedKey(skill: Pick<LockedSkill, 'server' | 'path'>): string {
  return `${skill.server}/${skill.path}`;
}

/**
 * The identity a lock records for a configured server: the URL without credentials, query or
 * fragment (they may hold a token), or the stdio command line as the configuration writes it
 * (`${workspaceFolder}` differs from machine to machine, `${env:...}` may be a secret); never
 * headers or env.
 */
export function identityOf(config: ServerConfig): ServerIdentity {
  if (config.kind === 'stdio') {
    const line = config.written ?? config;
    return { command: line.command, args: [...line.args] };
  }
  return { url: publicUrl(config.url) };
}

/**
 * Whether `config` is the server the lock names. A stdio server matches by its line as written
 * or as expanded here (what locks written by earlier builds recorded). The identity only keeps a
 * label from being re-pointed by mistake: every locked byte is still checked against its digest.
 */
export function sameIdentity(locked: ServerIdentity, config: ServerConfig): boolean {
  if ('url' in locked) return config.kind !== 'stdio' && publicUrl(config.url) === publicUrl(locked.url);
  if (config.kind !== 'stdio') return false;
  const isLocked = (line: { command: string; args: readonly string[] }) =>
    line.command === locked.command && line.args.length === locked.args.length && line.args.every((arg, index) => arg === locked.args[index]);
  return isLocked(config) || (config.written !== undefined && isLocked(config.written));
}

export function describeIdentity(identity: ServerIdentity): string {
  return 'url' in identity ? escapeForLog(identity.url) : escapeForLog([identity.command, ...identity.args].join(' '));
}

function publicUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  parsed.search = '';
  parsed.hash = '';
  return parsed.href;
}

/** Reads and checks the project's lockfile once; undefined when it has none. */
export async function readLockfile(file: string): Promise<Lockfile | undefined> {
  return (await readLockfileText(file))?.lock;
}

/** readLockfile, with the text it was parsed from (a writer compares its new text with it). */
export async function readLockfileText(file: string): Promise<{ lock: Lockfile; text: string } | undefined> {
  let handle;
  try {
    // A repository can commit the lockfile as a symbolic link to any file of the user's (~/.netrc):
    // O_NOFOLLOW refuses it in the same call that opens, so no swap fits between a check and the read.
    // Non-blocking: a FIFO is refused below, not waited on for a writer.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    if (errorCode(error) === 'ELOOP' && (await lstat(file).catch(() => undefined))?.isSymbolicLink()) throw new LockfileError(`is a symbolic link; ${REGULAR_FILE}`, file);
    throw new LockfileError(`cannot be read (${errorMessage(error)})`, file, undefined, error);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new LockfileError(`is ${stats.isDirectory() ? 'a folder' : 'not a regular file'}; ${REGULAR_FILE}`, file);
    if (stats.size > MAX_LOCKFILE_BYTES) throw new LockfileError(`is ${stats.size} bytes; a lockfile is at most ${MAX_LOCKFILE_BYTES}`, file);
    // Read up to one byte past the bound: a file that grew while read is refused too.
    const buffer = Buffer.alloc(Math.min(MAX_LOCKFILE_BYTES + 1, stats.size + 1));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_LOCKFILE_BYTES) throw new LockfileError(`is over ${MAX_LOCKFILE_BYTES} bytes`, file);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    return { lock: parseLockfile(text, file), text };
  } finally {
    await handle.close();
  }
}

/** Parses and checks a lockfile's text: every field, every digest recomputed, every path confined. */
export function parseLockfile(text: string, file: string): Lockfile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Where, never what: JSON.parse's own message quotes the text, which may be anyone's secret.
    throw new LockfileError(`is not JSON${whereNotJson(text)}`, file);
  }
  const duplicate = firstDuplicateKey(text);
  if (duplicate !== undefined) throw new LockfileError(`"${escapeForLog(duplicate.key)}" is given twice (which one holds would be a guess)`, file, duplicate.where);
  const top = objectAt(raw, file, undefined, 'the lockfile');
  const version = top.lockfileVersion;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) throw new LockfileError('has no lockfileVersion (a positive integer)', file);
  if (version > LOCKFILE_VERSION) throw new LockfileError(`is lockfileVersion ${version}, written by a newer skills-mount; this one reads version ${LOCKFILE_VERSION}: upgrade skills-mount`, file);
  onlyKeys(top, ['lockfileVersion', 'servers', 'skills'], file, undefined);

  const servers: Record<string, ServerIdentity> = {};
  for (const [label, value] of Object.entries(objectAt(top.servers ?? {}, file, 'servers', 'servers'))) {
    const entry = `servers.${escapeForLog(label)}`;
    if (!isValidLabel(label)) throw new LockfileError('is not a server label (lowercase letters, digits, "-" and "_")', file, entry);
    servers[label] = parseIdentity(objectAt(value, file, entry, 'a server'), file, entry);
  }

  if (!Array.isArray(top.skills)) throw new LockfileError('has no skills list', file);
  if (top.skills.length > MAX_SKILLS) throw new LockfileError(`locks ${top.skills.length} skills; at most ${MAX_SKILLS}`, file);
  const skills: LockedSkill[] = [];
  const seen = new Map<string, string>();
  top.skills.forEach((value: unknown, index: number) => {
    const skill = parseSkill(value, file, `skills[${index}]`);
    const entry = `skills[${index}] (${escapeForLog(lockedKey(skill))})`;
    // Own keys only: "constructor" is a valid label, and every object inherits one.
    if (!Object.hasOwn(servers, skill.server)) throw new LockfileError(`names server "${skill.server}", which the lockfile's servers do not list`, file, entry);
    for (const key of [lockedKey(skill), `${skill.server}\0${skill.uri}`]) {
      const earlier = seen.get(key);
      if (earlier !== undefined) throw new LockfileError(`locks the same skill as ${earlier}`, file, entry);
      seen.set(key, entry);
    }
    skills.push(skill);
  });
  return normalized({ servers, skills });
}

/** The lockfile's text: sorted, two-space JSON, one line per file, a final newline. */
export function serializeLockfile(lock: Lockfile): string {
  const { servers, skills } = normalized(lock);
  const lines = ['{', `  "lockfileVersion": ${LOCKFILE_VERSION},`, '  "servers": {'];
  const labels = Object.keys(servers);
  labels.forEach((label, index) => lines.push(`    ${JSON.stringify(label)}: ${JSON.stringify(servers[label])}${index < labels.length - 1 ? ',' : ''}`));
  lines.push('  },', '  "skills": [');
  skills.forEach((skill, index) => {
    lines.push('    {');
    for (const key of ['server', 'path', 'uri', 'name', 'skillDigest', 'resourcesDigest'] as const) lines.push(`      ${JSON.stringify(key)}: ${JSON.stringify(skill[key])},`);
    lines.push(`      "grants": ${JSON.stringify({ allowedTools: skill.grants.allowedTools, exec: skill.grants.exec })},`, '      "files": [');
    skill.files.forEach((lockedFile, fileIndex) => {
      const line = JSON.stringify({ path: lockedFile.path, size: lockedFile.sizeBytes, digest: lockedFile.digest, uri: lockedFile.uri });
      lines.push(`        ${line}${fileIndex < skill.files.length - 1 ? ',' : ''}`);
    });
    lines.push('      ]', `    }${index < skills.length - 1 ? ',' : ''}`);
  });
  lines.push('  ]', '}');
  return `${lines.join('\n')}\n`;
}

/** Sorted entries and only the servers some skill names. */
function normalized(lock: Lockfile): Lockfile {
  const skills = [...lock.skills]
    .map((skill) => ({ ...skill, files: [...skill.files].sort((a, b) => compare(a.path, b.path)) }))
    .sort((a, b) => compare(a.server, b.server) || compare(a.path, b.path));
  const named = new Set(skills.map((skill) => skill.server));
  const servers: Record<string, ServerIdentity> = {};
  for (const label of Object.keys(lock.servers).sort(compare)) if (named.has(label)) servers[label] = lock.servers[label]!;
  return { servers, skills };
}

/** Code-point order: the same on every machine and locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function parseIdentity(value: Record<string, unknown>, file: string, entry: string): ServerIdentity {
  if (typeof value.url === 'string') {
    onlyKeys(value, ['url'], file, entry);
    let url: URL;
    try {
      url = new URL(text(value.url, file, entry, 'url'));
    } catch {
      throw new LockfileError('has a url that is not a URL', file, entry);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new LockfileError(`has a ${escapeForLog(url.protocol)} url; a server is reached over http or https`, file, entry);
    if (url.username !== '' || url.password !== '' || url.search !== '') throw new LockfileError('has a url with credentials or a query; a lockfile holds no secret', file, entry);
    return { url: url.href };
  }
  if (typeof value.command === 'string') {
    onlyKeys(value, ['command', 'args'], file, entry);
    const args = value.args ?? [];
    if (!Array.isArray(args) || args.length > 256) throw new LockfileError('has args that are not a list of strings', file, entry);
    return { command: text(value.command, file, entry, 'command'), args: args.map((arg, index) => text(arg, file, entry, `args[${index}]`)) };
  }
  throw new LockfileError('names neither a url nor a command', file, entry);
}

function parseSkill(value: unknown, file: string, at: string): LockedSkill {
  const raw = objectAt(value, file, at, 'a skill');
  onlyKeys(raw, ['server', 'path', 'uri', 'name', 'skillDigest', 'resourcesDigest', 'grants', 'files'], file, at);
  const server = text(raw.server, file, at, 'server');
  const skillPath = text(raw.path, file, at, 'path');
  const entry = `${at} (${escapeForLog(`${server}/${skillPath}`)})`;
  if (!isValidLabel(server)) throw new LockfileError('names a server that is not a label', file, entry);
  const pathProblem = relativePathProblem(skillPath);
  if (pathProblem !== undefined) throw new LockfileError(`has a path that ${pathProblem}`, file, entry);
  const uri = text(raw.uri, file, entry, 'uri');
  // The path is what a policy's "skills" rules and a person reading the diff judge; the URI is what is linked: they must agree.
  if (!isAt(uri, `${skillPath}/SKILL.md`)) throw new LockfileError(`has uri ${escapeForLog(uri)}, which is not the SKILL.md of its path`, file, entry);
  const name = text(raw.name, file, entry, 'name');
  const folder = skillPath.split('/').at(-1)!;
  if (name !== folder) throw new LockfileError(`has name "${escapeForLog(name)}"; a skill's name is its folder's ("${escapeForLog(folder)}")`, file, entry);
  const skillDigest = digestAt(raw.skillDigest, file, entry, 'skillDigest');
  const setDigest = digestAt(raw.resourcesDigest, file, entry, 'resourcesDigest');
  const grantsRaw = objectAt(raw.grants, file, entry, 'grants');
  onlyKeys(grantsRaw, ['allowedTools', 'exec'], file, entry);
  if (grantsRaw.allowedTools !== null && typeof grantsRaw.allowedTools !== 'string') throw new LockfileError('has grants.allowedTools that is neither a string nor null', file, entry);
  if (typeof grantsRaw.exec !== 'boolean') throw new LockfileError('has grants.exec that is not true or false', file, entry);
  const grants: LockedGrants = { allowedTools: grantsRaw.allowedTools === null ? null : text(grantsRaw.allowedTools, file, entry, 'grants.allowedTools'), exec: grantsRaw.exec };

  if (!Array.isArray(raw.files) || raw.files.length === 0) throw new LockfileError('has no files', file, entry);
  if (raw.files.length > MAX_FILES_PER_SKILL) throw new LockfileError(`lists ${raw.files.length} files; at most ${MAX_FILES_PER_SKILL}`, file, entry);
  const files: LockedFile[] = [];
  const paths = new Set<string>();
  const uris = new Set<string>();
  raw.files.forEach((fileValue: unknown, index: number) => {
    const where = `${entry} files[${index}]`;
    const fileRaw = objectAt(fileValue, file, where, 'a file');
    onlyKeys(fileRaw, ['path', 'size', 'digest', 'uri'], file, where);
    const filePath = text(fileRaw.path, file, where, 'path');
    const problem = relativePathProblem(filePath);
    if (problem !== undefined) throw new LockfileError(`has a path that ${problem}`, file, where);
    const size = fileRaw.size;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) throw new LockfileError('has a size that is not a whole number of bytes', file, where);
    const lockedFile = { path: filePath, uri: text(fileRaw.uri, file, where, 'uri'), sizeBytes: size, digest: digestAt(fileRaw.digest, file, where, 'digest') };
    if (!isAt(lockedFile.uri, `${skillPath}/${lockedFile.path}`)) throw new LockfileError(`has uri ${escapeForLog(lockedFile.uri)}, which is not where its path ${escapeForLog(lockedFile.path)} is`, file, where);
    if (paths.has(lockedFile.path) || uris.has(lockedFile.uri)) throw new LockfileError('lists a file twice', file, where);
    paths.add(lockedFile.path);
    uris.add(lockedFile.uri);
    files.push(lockedFile);
  });
  const skillMd = files.find((lockedFile) => lockedFile.uri === uri);
  if (skillMd === undefined || skillMd.path !== 'SKILL.md') throw new LockfileError('lists no SKILL.md file with the skill\'s uri', file, entry);
  if (skillMd.digest !== skillDigest) throw new LockfileError('has a skillDigest that is not its SKILL.md file\'s digest', file, entry);
  if (resourcesDigest(files) !== setDigest) throw new LockfileError('has a resourcesDigest that does not match its files (edited by hand, or damaged)', file, entry);
  return { server, path: skillPath, uri, name, skillDigest, resourcesDigest: setDigest, files, grants };
}

/** The first key given twice in one object, with where it is (`skills[0].grants, line 9`). */
function firstDuplicateKey(text: string): { key: string; where: string } | undefined {
  const open: Array<Set<string> | undefined> = [];
  let found: { key: string; where: string } | undefined;
  visit(text, {
    onObjectBegin: () => void open.push(new Set()),
    onObjectEnd: () => void open.pop(),
    onArrayBegin: () => void open.push(undefined),
    onArrayEnd: () => void open.pop(),
    onObjectProperty: (key, _offset, _length, line, _character, pathOf) => {
      const keys = open.at(-1);
      if (keys === undefined || found !== undefined) return;
      if (keys.has(key)) {
        const at = pathOf().map((part) => (typeof part === 'number' ? `[${part}]` : `.${escapeForLog(part)}`)).join('').replace(/^\./, '');
        found = { key, where: `${at === '' ? '' : `${at}, `}line ${line + 1}` };
      }
      keys.add(key);
    },
  });
  return found;
}

/** " (line 3, column 14: comma expected)": where JSON.parse stopped, in words of its own; empty when it cannot be placed. */
function whereNotJson(text: string): string {
  let first: { code: ParseErrorCode; line: number; column: number } | undefined;
  visit(text, { onError: (code, _offset, _length, line, column) => void (first ??= { code, line, column }) }, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  if (first === undefined) return '';
  const what = printParseErrorCode(first.code).replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return ` (line ${first.line + 1}, column ${first.column + 1}: ${what})`;
}

/** Whether `uri` maps to `labelPath` under the server's label, as on a mount (uri-path.ts). */
function isAt(uri: string, labelPath: string): boolean {
  const segments = uriToSegments(uri);
  // Segments hold no "/", so the joined path is unambiguous.
  return !('problem' in segments) && segments.join('/') === labelPath;
}

/** Why `given` is not a confined relative path (no absolute, empty, `.` or `..` segment, no control character), or undefined. */
function relativePathProblem(given: string): string | undefined {
  if (given.startsWith('/') || given.includes('\\')) return 'is absolute or has a backslash';
  if (given.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) return 'has an empty, "." or ".." segment';
  if (/[\u0000-\u001f\u007f]/.test(given)) return 'has a control character';
  return undefined;
}

function objectAt(value: unknown, file: string, entry: string | undefined, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LockfileError(`${what} is not an object`, file, entry);
  return value as Record<string, unknown>;
}

function onlyKeys(value: Record<string, unknown>, allowed: readonly string[], file: string, entry: string | undefined): void {
  const unknown = Object.keys(value).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) throw new LockfileError(`has unknown field${unknown.length === 1 ? '' : 's'} ${unknown.map((key) => `"${escapeForLog(key)}"`).join(', ')}`, file, entry);
}

function text(value: unknown, file: string, entry: string, field: string): string {
  if (typeof value !== 'string' || value === '') throw new LockfileError(`has no ${field}`, file, entry);
  if (value.length > MAX_STRING_LENGTH) throw new LockfileError(`has a ${field} over ${MAX_STRING_LENGTH} characters`, file, entry);
  return value;
}

function digestAt(value: unknown, file: string, entry: string, field: string): string {
  if (typeof value !== 'string' || !DIGEST_PATTERN.test(value)) throw new LockfileError(`has a ${field} that is not sha256:<64 lowercase hex>`, file, entry);
  return value;
}
