// Public surface of the FUSE edge: the only importer of fuse-native. The CLI mounts a
// FilesystemCore with mountFilesystem and unmounts through the returned handle.

export { MountError, buildMountOptions, mountFilesystem, prepareMountpoint } from './mount.js';
export type { MountHandle, MountOptions } from './mount.js';
export type { LogLine } from './fuse-operations.js';
