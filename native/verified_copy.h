// verified_copy: a local copy of a file's version (the disk cache's) read whole and hashed before
// a byte of it is served, on every open (SEP-2640, Cache integrity: a stored digest or a
// modification time is not verification). No libfuse, no Node-API; JS decides which copies.
#ifndef SKILLS_VERIFIED_COPY_H
#define SKILLS_VERIFIED_COPY_H

#include <stddef.h>

#define COPY_DIGEST_BYTES 32

enum copy_result {
  COPY_OK,      // *bytes holds exactly `size` bytes that hash to the digest (the caller frees them)
  COPY_MISSING, // no such file: JS looks for it, and fetches it again
  COPY_REFUSED, // not a regular file, another size, other bytes, or unreadable: JS reads it, logs and discards it
  COPY_NO_MEMORY,
};

/** Whether this process can hash (Node's OpenSSL exports SHA256); without it no copy is ever read. */
int copy_hashing_available(void);
/**
 * Reads the regular file at `path` (no link followed, a FIFO never waited on) whole: exactly
 * `size` bytes, then its end; checks their SHA-256 against `digest`. Marks the file used (its
 * mtime: the disk cache's recency) once the bytes verified.
 */
enum copy_result copy_read(const char *path, size_t size, const unsigned char digest[COPY_DIGEST_BYTES], unsigned char **bytes);

#endif
