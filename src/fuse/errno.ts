// The one place where errno exists: domain errors (src/errors.ts) -> negative errno as
// the edge replies, plus the few codes the FUSE edge answers on its own. Values come
// from the running platform (os.constants), so nothing here assumes Linux numbering.

import { constants } from 'node:os';
import * as errors from '../errors.js';

const { errno } = constants;

/** Negative errno values the FUSE edge replies with when no domain error is involved. */
export const Errno = {
  /** Success. */
  OK: 0,
  EIO: -errno.EIO,
  /** Any write on the read-only mount. */
  EROFS: -errno.EROFS,
  /** Execute permission on a file (nothing here is executable). */
  EACCES: -errno.EACCES,
  /** An xattr value or list larger than the caller's buffer. */
  ERANGE: -errno.ERANGE,
  /** An xattr namespace this filesystem does not have (anything but user.*). */
  ENOTSUP: -errno.ENOTSUP,
} as const;

type ErrorsModule = typeof errors;
type ErrorClass = abstract new (...args: never[]) => errors.SkillsMountError;
/** Names of the concrete domain error classes exported from src/errors.ts. */
type DomainErrorName = Exclude<
  { [K in keyof ErrorsModule]: ErrorsModule[K] extends ErrorClass ? K : never }[keyof ErrorsModule],
  'SkillsMountError'
>;

// A Record over every exported class name: adding an error class to src/errors.ts without
// a row here is a compile error (and test/unit/fuse-errno.test.ts checks it at run time).
const ERRNO_BY_NAME: Record<DomainErrorName, number> = {
  NotFoundError: -errno.ENOENT,
  IntegrityError: -errno.EIO,
  UnavailableError: -errno.EIO,
  ProtocolError: -errno.EIO,
  ReadOnlyError: -errno.EROFS,
  NotADirectoryError: -errno.ENOTDIR,
  IsADirectoryError: -errno.EISDIR,
  // Linux has no ENOATTR; getxattr(2) documents ENODATA (61) for a missing attribute.
  NoAttributeError: -(errno.ENODATA ?? 61),
  // EFBIG ("File too large") rather than EIO: the refusal is permanent and by policy, so
  // the user should see why instead of an I/O error that invites retrying.
  LimitExceededError: -errno.EFBIG,
  ConfigError: -errno.EINVAL,
  // ESTALE ("Stale file handle"): the file changed under a size the kernel still holds; a
  // retry after the attribute timeout gets the new version whole. Logged where it is thrown.
  StaleVersionError: -(errno.ESTALE ?? 116),
  // The server lacks a method the content needs: to the reader, the server failed to
  // deliver what its catalog listed. EIO gets the failure logged with its context.
  NotSupportedError: -errno.EIO,
};

/** Domain error class -> negative errno; exhaustive over src/errors.ts. */
export const errnoTable: ReadonlyMap<ErrorClass, number> = new Map(
  (Object.keys(ERRNO_BY_NAME) as DomainErrorName[]).map((name) => [errors[name], ERRNO_BY_NAME[name]]),
);

/** The errno for a domain error (nearest mapped class), or undefined for anything else. */
export function errnoForDomainError(error: unknown): number | undefined {
  if (!(error instanceof errors.SkillsMountError)) return undefined;
  for (let proto: unknown = Object.getPrototypeOf(error); proto !== null; proto = Object.getPrototypeOf(proto)) {
    const mapped = errnoTable.get((proto as { constructor: ErrorClass }).constructor);
    if (mapped !== undefined) return mapped;
  }
  return undefined;
}
