// verified_copy: see verified_copy.h.
#define _GNU_SOURCE
#include "verified_copy.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef unsigned char *(*sha256_fn)(const unsigned char *data, size_t length, unsigned char *digest);

static sha256_fn sha256;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

// Node links OpenSSL in and exports its symbols for addons: found at run time rather than linked,
// so a Node built without them only loses this path.
static void find_sha256(void) { sha256 = (sha256_fn)dlsym(RTLD_DEFAULT, "SHA256"); }

int copy_hashing_available(void) {
  pthread_once(&sha256_once, find_sha256);
  return sha256 != NULL;
}

static enum copy_result read_whole(int fd, size_t size, unsigned char **bytes) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 || (size_t)st.st_size != size) return COPY_REFUSED;
  unsigned char *buffer = malloc(size ? size : 1);
  if (buffer == NULL) return COPY_NO_MEMORY;
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(fd, buffer + done, size - done, (off_t)done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += (size_t)n;
  }
  unsigned char extra;
  ssize_t tail;
  do tail = pread(fd, &extra, 1, (off_t)size);
  while (tail < 0 && errno == EINTR);
  // Shorter or longer than it was a moment ago: being written by someone, never served.
  if (done != size || tail != 0) {
    free(buffer);
    return COPY_REFUSED;
  }
  *bytes = buffer;
  return COPY_OK;
}

enum copy_result copy_read(const char *path, size_t size, const unsigned char digest[COPY_DIGEST_BYTES], unsigned char **bytes) {
  *bytes = NULL;
  if (!copy_hashing_available()) return COPY_REFUSED;
  int fd;
  do fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno == ENOENT || errno == ENOTDIR ? COPY_MISSING : COPY_REFUSED;
  unsigned char *buffer = NULL;
  enum copy_result result = read_whole(fd, size, &buffer);
  if (result == COPY_OK) {
    unsigned char actual[COPY_DIGEST_BYTES];
    sha256(buffer, size, actual);
    if (memcmp(actual, digest, COPY_DIGEST_BYTES) != 0) {
      free(buffer);
      result = COPY_REFUSED;
    } else {
      // Recency is a hint: a copy whose mtime cannot be set is still served.
      (void)futimens(fd, NULL);
      *bytes = buffer;
    }
  }
  close(fd);
  return result;
}
