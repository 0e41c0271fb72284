// The permission bits of what this project writes, named once: the read-only trees it publishes
// for others to read (link's entry objects, snapshots) and the private files only this user reads.
// Knows nothing of what the files hold.

/** A file of a published read-only tree: anyone may read it, nobody may write it. */
export const READ_ONLY_FILE_MODE = 0o444;
/** An executable file of a published read-only tree (a granted script). */
export const READ_ONLY_EXEC_MODE = 0o555;
/** A folder of a published read-only tree: nothing in it can be added, renamed or removed. */
export const READ_ONLY_DIRECTORY_MODE = 0o555;
/** A folder anyone may read but only this user change: a published tree's while it is built, and the folder trees are published in. */
export const OWNER_WRITABLE_DIRECTORY_MODE = 0o755;
/** A private file this user alone reads and writes (caches, stores, locks, temp files). */
export const PRIVATE_FILE_MODE = 0o600;
/** A private file kept read-only once written (an entry's record). */
export const PRIVATE_READ_ONLY_FILE_MODE = 0o400;
/** A private folder: this user alone lists, reads and changes it; also what a read-only folder is opened to before it is removed. */
export const PRIVATE_DIRECTORY_MODE = 0o700;
