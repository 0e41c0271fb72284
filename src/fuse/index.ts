// The FUSE layer's public surface, what code outside src/fuse imports: mounting a
// FilesystemCore (the daemon), and the mount table (the CLI's status and unmount).

export { MountError } from './mount-error.js';
export { buildMountOptions, checkUserAllowOther, chooseBackend, mountFilesystem, prepareMountpoint } from './mount.js';
export type { FuseBackend, MountHandle, MountOptions } from './mount.js';
export type { OperationObserver } from './operation-observer.js';
export { MOUNT_TYPE, canonicalMountpoint, detachMount, findMount, readMountTable, skillsMounts } from './mount-table.js';
export type { DetachOptions, MountTableEntry } from './mount-table.js';
export type { Log } from '../log.js';
