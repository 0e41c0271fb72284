// The FUSE layer's public surface, what code outside src/fuse imports: mounting a
// FilesystemCore (the daemon), and the mount table (the CLI's status and unmount).

export { MountError } from './mount-error.js';
export { checkUserAllowOther, chooseBackend, mountFilesystem, prepareMountpoint, userAllowOther } from './mount.js';
export { FUSE_DEVICE, NO_FUSE_ENV, deviceState, fuseUnavailable, probeAddon, systemProbes } from './platform.js';
export type { AddonReport, DeviceState, PlatformProbes } from './platform.js';
export type { FuseBackend, MountHandle, MountOptions } from './mount.js';
export type { OperationObserver } from './operation-observer.js';
export { MOUNT_TYPE, canonicalMountpoint, detachMount, findMount, mountOf, readMountTable, skillsMounts } from './mount-table.js';
export type { DetachOptions, MountTableEntry } from './mount-table.js';
export type { Log } from '../log.js';
