// What a reader sees when the filesystem core fails: every domain error class of
// src/errors.ts, thrown by any filesystem operation, reaches the FUSE callback as the errno
// the docs promise (ENOENT, EIO, EROFS, ...); failures a user could not otherwise explain
// (EIO) are logged with operation and path; anything that is not a domain error is EIO and
// logged as unexpected. Driven through the real fuse-operations with a fake core.
import { constants as fsConstants } from 'node:fs';
import { constants } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import * as errors from '../../src/errors.js';
import type { FilesystemCore } from '../../src/fs/filesystem-core.js';
import { createFuseOperations } from '../../src/fuse/fuse-operations.js';

const { errno } = constants;

type ConcreteErrorClass = new (message: string, context?: errors.ErrorContext) => errors.SkillsMountError;

const domainErrorClasses = Object.entries(errors)
  .filter(([, value]) => typeof value === 'function' && value.prototype instanceof errors.SkillsMountError)
  .map(([name, value]) => [name, value as unknown as ConcreteErrorClass] as const);

// What the reader's tool reports for each class (cat: "No such file or directory", ...),
// from docs/layout.md, docs/protocol.md, docs/troubleshooting.md and the errno comments.
const SEEN_BY_READER: Record<string, { errno: number; logged: boolean }> = {
  NotFoundError: { errno: errno.ENOENT, logged: false },
  IntegrityError: { errno: errno.EIO, logged: true },
  UnavailableError: { errno: errno.EIO, logged: true },
  ProtocolError: { errno: errno.EIO, logged: true },
  NotSupportedError: { errno: errno.EIO, logged: true },
  ReadOnlyError: { errno: errno.EROFS, logged: false },
  NotADirectoryError: { errno: errno.ENOTDIR, logged: false },
  IsADirectoryError: { errno: errno.EISDIR, logged: false },
  // getxattr(2): "no such attribute" is ENODATA on Linux (getfattr prints "No such attribute").
  NoAttributeError: { errno: errno.ENODATA ?? 61, logged: false },
  // "File too large": a permanent refusal by policy, not an I/O error that invites retrying.
  LimitExceededError: { errno: errno.EFBIG, logged: false },
  // "Stale file handle": logged where it is thrown (the filesystem core), not again here.
  StaleVersionError: { errno: errno.ESTALE ?? 116, logged: false },
  ConfigError: { errno: errno.EINVAL, logged: false },
};

/** A core whose every operation throws `error` (async ones reject, sync ones throw). */
function failingCore(error: unknown): FilesystemCore {
  const reject = async () => {
    throw error;
  };
  const raise = () => {
    throw error;
  };
  return { getattr: reject, readdir: reject, open: reject, listxattr: reject, getxattr: reject, fgetattr: raise, read: raise, release: raise };
}

/** Each operation a reader can trigger, as [name, arguments before the callback]. */
const OPERATIONS: Array<[string, unknown[]]> = [
  ['getattr', ['/srv/x/SKILL.md']],
  ['fgetattr', ['/srv/x/SKILL.md', 7]],
  ['readdir', ['/srv/x/SKILL.md']],
  ['open', ['/srv/x/SKILL.md', fsConstants.O_RDONLY]],
  ['read', ['/srv/x/SKILL.md', 7, Buffer.alloc(16), 16, 0]],
  ['release', ['/srv/x/SKILL.md', 7]],
  ['access', ['/srv/x/SKILL.md', fsConstants.R_OK]],
  ['getxattr', ['/srv/x/SKILL.md', 'user.mcp.uri', 0]],
  ['listxattr', ['/srv/x/SKILL.md']],
];

/** Calls one fuse-native operation and resolves with the callback's arguments. */
function call(operations: ReturnType<typeof createFuseOperations>, name: string, args: unknown[]): Promise<unknown[]> {
  const fn = (operations as unknown as Record<string, ((...a: unknown[]) => void) | undefined>)[name];
  if (!fn) throw new Error(`operation ${name} is not implemented`);
  return new Promise((resolve) => fn(...args, (...reply: unknown[]) => resolve(reply)));
}

describe('errno a reader sees', () => {
  it('every exported domain error class has a documented errno (a new class needs a row here)', () => {
    const names = domainErrorClasses.map(([name]) => name).sort();
    expect(names).toContain('NotFoundError');
    expect(names).toEqual(Object.keys(SEEN_BY_READER).sort());
  });

  const cases = domainErrorClasses.flatMap(([name, ErrorClass]) => OPERATIONS.map(([operation, args]) => [name, operation, ErrorClass, args] as const));

  it.each(cases)('%s thrown by %s reaches the callback as its errno', async (name, operation, ErrorClass, args) => {
    const log = vi.fn();
    const error = new ErrorClass('went wrong', { server: 'srv', uri: 'skill://x/SKILL.md' });
    const reply = await call(createFuseOperations(failingCore(error), { log }), operation, args);
    const seen = SEEN_BY_READER[name]!;
    expect(reply).toEqual([-seen.errno]);
    if (seen.logged) {
      // One line, with the operation, the path and what went wrong, never called "unexpected".
      expect(log).toHaveBeenCalledExactlyOnceWith(`${operation} /srv/x/SKILL.md: ${name}: went wrong (server srv skill://x/SKILL.md)`);
    } else {
      // ENOENT and the like are answers, not incidents: ls of a missing name must not fill the log.
      expect(log).not.toHaveBeenCalled();
    }
  });

  it('a subclass of a domain error is answered as its parent (a declined skill is ENOENT, quietly)', async () => {
    class DeclinedSkillError extends errors.NotFoundError {}
    const log = vi.fn();
    const operations = createFuseOperations(failingCore(new DeclinedSkillError('hidden')), { log });
    expect(await call(operations, 'getattr', ['/srv/too-many'])).toEqual([-errno.ENOENT]);
    expect(log).not.toHaveBeenCalled();
  });

  it.each([
    ['a TypeError (a bug)', new TypeError("Cannot read properties of undefined (reading 'x')"), "TypeError: Cannot read properties of undefined (reading 'x')"],
    // An errno-looking error from inside the core is not trusted as an answer: errno belongs to fuse/errno.ts.
    ['a Node fs error with code ENOENT', Object.assign(new Error("ENOENT: no such file or directory, open '/tmp/x'"), { code: 'ENOENT', errno: -2 }), "Error: ENOENT: no such file or directory, open '/tmp/x'"],
    ['a thrown string', 'kaput', 'kaput'],
    ['undefined', undefined, 'undefined'],
  ])('%s becomes EIO with one "unexpected" log line naming operation and path', async (_what, thrown, described) => {
    for (const [operation, args] of OPERATIONS) {
      const log = vi.fn();
      const reply = await call(createFuseOperations(failingCore(thrown), { log }), operation, args);
      expect(reply, operation).toEqual([-errno.EIO]);
      expect(log, operation).toHaveBeenCalledExactlyOnceWith(`${operation} /srv/x/SKILL.md: unexpected ${described}`);
    }
  });

  it('a domain error whose message already names server and URI is logged without repeating them', async () => {
    const log = vi.fn();
    const error = new errors.UnavailableError('no answer within 1000 ms', { server: 'docs', method: 'resources/read', uri: 'skill://a/ref.md' });
    const reply = await call(createFuseOperations(failingCore(error), { log }), 'open', ['/docs/a/ref.md', fsConstants.O_RDONLY]);
    expect(reply).toEqual([-errno.EIO]);
    expect(log).toHaveBeenCalledExactlyOnceWith('open /docs/a/ref.md: UnavailableError: docs: resources/read skill://a/ref.md: no answer within 1000 ms');
  });
});
