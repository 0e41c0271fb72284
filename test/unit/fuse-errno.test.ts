// What a reader sees when the filesystem core fails: every domain error class of
// src/errors.ts, thrown by any filesystem operation, reaches the kernel as the errno the docs
// promise (ENOENT, EIO, EROFS, ...); failures a user could not otherwise explain (EIO) are logged
// with operation and path; anything that is not a domain error is EIO and logged as unexpected.
// Driven through the real libfuse 3 edge (LowLevelEdge) with a recording addon and a fake core.
import { constants } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import * as errors from '../../src/errors.js';
import type { FilesystemCore, NodeAttributes } from '../../src/fs/filesystem-core.js';
import type { Addon, RequestHandler, Session } from '../../src/fuse/lowlevel/addon.js';
import { LowLevelEdge } from '../../src/fuse/lowlevel/lowlevel-edge.js';

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

const OPS = { INIT: 1, LOOKUP: 2, FORGET: 3, GETATTR: 4, OPEN: 5, READ: 6, RELEASE: 7, OPENDIR: 8, READDIR: 9, READDIRPLUS: 10, RELEASEDIR: 11, STATFS: 12, GETXATTR: 13, LISTXATTR: 14, EXIT: 15, DRAINED: 16, NOTIFIED: 17 };
const ROOT: NodeAttributes = { kind: 'directory', sizeBytes: 0, mtimeMs: 0, inode: 1 };

/** A core whose every operation on a name below the root throws `error` (async ones reject, sync ones throw). */
function failingCore(error: unknown): FilesystemCore {
  const reject = async () => {
    throw error;
  };
  const raise = () => {
    throw error;
  };
  return { getattr: async (p: string) => (p === '/' ? ROOT : reject()), readdir: reject, open: reject, listxattr: reject, getxattr: reject, fgetattr: raise, read: raise, release: raise };
}

/** Each request a reader's tool can send that reaches the core, as [log name, op, name]. */
const OPERATIONS: Array<[string, number, string | undefined]> = [
  ['lookup', OPS.LOOKUP, 'srv'],
  ['readdir', OPS.READDIR, undefined],
  ['getxattr', OPS.GETXATTR, 'user.mcp.uri'],
  ['listxattr', OPS.LISTXATTR, undefined],
];

/** Sends one request about the root (LOOKUP: of `name` in it) to an edge over `core`; resolves with the errno replied and the log lines. */
async function call(core: FilesystemCore, op: number, name: string | undefined): Promise<{ errno: number | undefined; log: ReturnType<typeof vi.fn> }> {
  const log = vi.fn();
  let replied: number | undefined;
  const addon = {
    replyErr: (_session: Session, _id: number, errno: number) => {
      replied = errno;
      return true;
    },
    // A LOOKUP's "no such name" is a negative entry (inode 0) the kernel may keep: ENOENT to the reader.
    replyEntry: (_session: Session, _id: number, attrs: Float64Array) => {
      replied = attrs[0] === 0 ? errno.ENOENT : 0;
      return true;
    },
    capabilities: {},
    ops: OPS,
  } as unknown as Addon;
  const edge = new LowLevelEdge(addon, core, { log, owner: { uid: 1, gid: 1, fileMode: 0o100400, directoryMode: 0o40500 }, entryTimeoutSeconds: 600, attrTimeoutSeconds: 600, negativeTimeoutSeconds: 1, pinnedBytesLimit: 1 << 20, operationTimeoutMs: 1_000 }, ROOT);
  edge.attach({} as Session, { init: () => undefined, exit: () => undefined });
  (edge.handle as RequestHandler)(op, 1, 1, 0, 0, 4096, name);
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return { errno: replied, log };
}

describe('errno a reader sees', () => {
  it('every exported domain error class has a documented errno (a new class needs a row here)', () => {
    const names = domainErrorClasses.map(([name]) => name).sort();
    expect(names).toContain('NotFoundError');
    expect(names).toEqual(Object.keys(SEEN_BY_READER).sort());
  });

  const cases = domainErrorClasses.flatMap(([name, ErrorClass]) => OPERATIONS.map(([operation, op, arg]) => [name, operation, ErrorClass, op, arg] as const));

  it.each(cases)('%s thrown by %s reaches the kernel as its errno', async (name, operation, ErrorClass, op, arg) => {
    const error = new ErrorClass('went wrong', { server: 'srv', uri: 'skill://x/SKILL.md' });
    const { errno: replied, log } = await call(failingCore(error), op, arg);
    const seen = SEEN_BY_READER[name]!;
    expect(replied).toBe(seen.errno);
    const where = op === OPS.LOOKUP ? `/${arg}` : '/';
    if (seen.logged) {
      // One line, with the operation, the path and what went wrong, never called "unexpected".
      expect(log).toHaveBeenCalledExactlyOnceWith(`${operation} ${where}: ${name}: went wrong (server srv skill://x/SKILL.md)`);
    } else {
      // ENOENT and the like are answers, not incidents: ls of a missing name must not fill the log.
      expect(log).not.toHaveBeenCalled();
    }
  });

  it('a subclass of a domain error is answered as its parent (a declined skill is ENOENT, quietly)', async () => {
    class DeclinedSkillError extends errors.NotFoundError {}
    const { errno: replied, log } = await call(failingCore(new DeclinedSkillError('hidden')), OPS.LOOKUP, 'too-many');
    expect(replied).toBe(errno.ENOENT);
    expect(log).not.toHaveBeenCalled();
  });

  it.each([
    ['a TypeError (a bug)', new TypeError("Cannot read properties of undefined (reading 'x')"), "TypeError: Cannot read properties of undefined (reading 'x')"],
    // An errno-looking error from inside the core is not trusted as an answer: errno belongs to fuse/errno.ts.
    ['a Node fs error with code ENOENT', Object.assign(new Error("ENOENT: no such file or directory, open '/tmp/x'"), { code: 'ENOENT', errno: -2 }), "Error: ENOENT: no such file or directory, open '/tmp/x'"],
    ['a thrown string', 'kaput', 'kaput'],
    ['undefined', undefined, 'undefined'],
  ])('%s becomes EIO with one "unexpected" log line naming operation and path', async (_what, thrown, described) => {
    for (const [operation, op, arg] of OPERATIONS) {
      const { errno: replied, log } = await call(failingCore(thrown), op, arg);
      expect(replied, operation).toBe(errno.EIO);
      expect(log, operation).toHaveBeenCalledExactlyOnceWith(`${operation} ${op === OPS.LOOKUP ? `/${arg}` : '/'}: unexpected ${described}`);
    }
  });

  it('a domain error whose message already names server and URI is logged without repeating them', async () => {
    const error = new errors.UnavailableError('no answer within 1000 ms', { server: 'docs', method: 'resources/read', uri: 'skill://a/ref.md' });
    const { errno: replied, log } = await call(failingCore(error), OPS.LOOKUP, 'docs');
    expect(replied).toBe(errno.EIO);
    expect(log).toHaveBeenCalledExactlyOnceWith('lookup /docs: UnavailableError: docs: resources/read skill://a/ref.md: no answer within 1000 ms');
  });
});
