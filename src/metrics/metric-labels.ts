// The fixed words metric labels may take: FUSE operations, errno names, MCP methods and
// outcomes, verification reasons. Anything else becomes "other", so no server and no caller
// can grow the number of series; server labels are bounded by the configuration instead.
import { constants } from 'node:os';
import { DIRECTORY_READ_METHOD, SKILLS_GET_METHOD, SKILLS_LIST_METHOD } from '../protocol/skills-wire.js';
import { REQUEST_OUTCOMES } from '../mcp/request-observer.js';

/** The label value for anything outside its enumeration. */
export const OTHER = 'other';

/** FUSE operation labels: the libfuse 3 addon's requests, and the callbacks the libfuse 2 edge removed in 0.2.0 reported (fgetattr, access, the writes), kept so those label values stay valid. */
export const FUSE_OPERATIONS: readonly string[] = [
  'init',
  'lookup',
  'forget',
  'getattr',
  'fgetattr',
  'access',
  'open',
  'read',
  'release',
  'opendir',
  'readdir',
  'readdirplus',
  'releasedir',
  'statfs',
  'getxattr',
  'listxattr',
  'exit',
  'write',
  'create',
  'truncate',
  'ftruncate',
  'unlink',
  'mkdir',
  'rmdir',
  'rename',
  'link',
  'symlink',
  'chmod',
  'chown',
  'utimens',
  'setxattr',
  'removexattr',
  'mknod',
];

/** The errno names a FUSE answer is reported by; 0 is "OK". */
const ERRNO_NAMES: readonly string[] = [
  'ENOENT',
  'EIO',
  'EROFS',
  'EACCES',
  'EPERM',
  'ERANGE',
  'ENOTSUP',
  'ENOTDIR',
  'EISDIR',
  'ENODATA',
  'EFBIG',
  'EINVAL',
  'ESTALE',
  'ETIMEDOUT',
  'EINTR',
  'ENOTCONN',
  'EAGAIN',
  'EBADF',
  'ENOSYS',
  'ENOMEM',
  'ENAMETOOLONG',
  'ENOTEMPTY',
  'EEXIST',
  'EXDEV',
];

/** The MCP methods skills-mount sends as requests (the handshake and the 2026-07-28 listen stream are not counted). */
export const MCP_METHODS: readonly string[] = [SKILLS_LIST_METHOD, SKILLS_GET_METHOD, 'resources/read', DIRECTORY_READ_METHOD, 'resources/subscribe'];

export const MCP_OUTCOMES: readonly string[] = REQUEST_OUTCOMES;

export const VERIFICATION_REASONS: readonly string[] = ['size', 'digest', 'frontmatter', 'gone'];

/** Every state a server connection can be in, for the state-set gauge. */
export const SERVER_STATES: readonly string[] = ['connecting', 'connected', 'degraded', 'failed', 'incompatible', 'needs-login', 'closed'];

/** `value` when it is one of `allowed`, else "other". */
export function bounded(value: string, allowed: ReadonlySet<string>): string {
  return allowed.has(value) ? value : OTHER;
}

/** errno (positive, as the FUSE observer reports it) -> its name: "OK" for 0, "other" outside ERRNO_NAMES. */
export const errnoName: (errno: number) => string = (() => {
  const byNumber = new Map<number, string>([[0, 'OK']]);
  const numbers = constants.errno as Record<string, number | undefined>;
  // The first name wins where two share a number (ENOTSUP and EOPNOTSUPP on Linux).
  for (const name of ERRNO_NAMES) {
    const value = numbers[name];
    if (value !== undefined && !byNumber.has(value)) byNumber.set(value, name);
  }
  return (errno: number) => byNumber.get(Math.abs(errno)) ?? OTHER;
})();
