// counted_opens.c: two of the addon's own answers to OPEN, READ and RELEASE. Counted opens: the
// replies JS prepared for an inode whose version it pinned, the handles counted here. Local copies:
// a file's version read from the copy JS named, hashed before a byte is served (verified_copy.c).
// Both sets live under counted_lock (session.h gives the lock order).
#include "session.h"
#include "verified_copy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

// ---- counted opens: replies JS prepared, handles counted here ------------------------------
// JS, having pinned an inode's version (one per inode), answers its first open with
// replyOpenCounted: from then on opens of that inode are answered here with the same fh and
// flags, and each kernel handle is counted until its release, which is answered here too.
// retireOpens (JS lets go of the version) sends new opens to JS again; a handle still open then
// keeps the entry until its release, which is forwarded as OP_DRAINED so JS releases the
// version at that moment. JS holds one reference for the entry's whole life.

static size_t counted_cell(const struct counted_set *set, uint64_t ino) {
  size_t mask = set->cap - 1;
  size_t i = (size_t)(ino * 0x9E3779B97F4A7C15ull) & mask;
  while (set->cells[i].ino != 0 && set->cells[i].ino != ino) i = (i + 1) & mask;
  return i;
}

/** The entry of `ino`, or NULL. Call with counted_lock held. */
struct counted *counted_find(struct counted_set *set, uint64_t ino) {
  if (set->cap == 0 || ino == 0) return NULL;
  struct counted *c = &set->cells[counted_cell(set, ino)];
  return c->ino == ino ? c : NULL;
}

/** A new entry for `ino` (not present), or NULL when out of memory. Call with counted_lock held. */
struct counted *counted_add(struct session *s, struct counted_set *set, uint64_t ino) {
  if ((set->count + 1) * 2 > set->cap) {
    size_t cap = set->cap ? set->cap * 2 : 256;
    struct counted *old = set->cells, *cells = calloc(cap, sizeof *cells);
    if (cells == NULL) return NULL;
    size_t old_cap = set->cap;
    set->cells = cells;
    set->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
      if (old[i].ino != 0) set->cells[counted_cell(set, old[i].ino)] = old[i];
    }
    free(old);
  }
  struct counted *c = &set->cells[counted_cell(set, ino)];
  if (++s->next_gen == 0) s->next_gen = 1;
  *c = (struct counted){.ino = ino, .gen = s->next_gen};
  set->count++;
  return c;
}

/** Removes an entry, shifting back the cells its probe sequence covered. Call with counted_lock held. */
void counted_remove(struct counted_set *set, struct counted *c) {
  size_t mask = set->cap - 1;
  size_t hole = (size_t)(c - set->cells);
  set->cells[hole].ino = 0;
  set->count--;
  for (size_t i = (hole + 1) & mask; set->cells[i].ino != 0; i = (i + 1) & mask) {
    size_t home = (size_t)(set->cells[i].ino * 0x9E3779B97F4A7C15ull) & mask;
    // Move the cell back when the hole lies on its way from home (cyclically) to where it is.
    if (((i - home) & mask) >= ((i - hole) & mask)) {
      set->cells[hole] = set->cells[i];
      set->cells[i].ino = 0;
      hole = i;
    }
  }
}

/** An open of `ino` answered here, when JS prepared one: fills `fi`, counts the handle. */
int counted_open(struct session *s, uint64_t ino, struct fuse_file_info *fi) {
  pthread_mutex_lock(&s->counted_lock);
  struct counted *c = counted_find(&s->counted, ino);
  int answered = c != NULL && !c->retired;
  if (answered) {
    c->opens++;
    memset(fi, 0, sizeof *fi);
    fi->fh = c->fh;
    fi->keep_cache = (c->flags & 1) != 0;
    s->opens_answered++;
  }
  pthread_mutex_unlock(&s->counted_lock);
  return answered;
}

/**
 * A release of a counted handle (1), or not one of ours (0). *drained is set to the entry's gen
 * when it was the last handle of a retired entry: the entry is gone (its bytes' reference handed
 * out in *ref) and JS must be told.
 */
int counted_release(struct session *s, uint64_t ino, uint64_t fh, uint32_t *drained, napi_ref *ref) {
  pthread_mutex_lock(&s->counted_lock);
  struct counted *c = counted_find(&s->counted, ino);
  int ours = c != NULL && c->fh == fh && c->opens > 0;
  *drained = 0;
  *ref = NULL;
  if (ours) {
    c->opens--;
    s->releases_answered++;
    if (c->opens == 0 && c->retired) {
      *drained = c->gen;
      *ref = c->ref;
      counted_remove(&s->counted, c);
    }
  }
  pthread_mutex_unlock(&s->counted_lock);
  return ours;
}

/** A read of a counted handle whose bytes JS handed over, answered here (1); 0: not one of those. */
int counted_read(struct session *s, fuse_req_t req, uint64_t ino, uint64_t fh, off_t off, size_t size) {
  pthread_mutex_lock(&s->counted_lock);
  struct counted *c = counted_find(&s->counted, ino);
  int ours = c != NULL && c->fh == fh && c->ref != NULL;
  if (ours) {
    size_t from = off <= 0 ? 0 : (size_t)off > c->length ? c->length : (size_t)off;
    size_t n = c->length - from < size ? c->length - from : size;
    // Under the lock: the entry (and so the reference keeping the bytes) cannot go meanwhile.
    fuse_reply_buf(req, (const char *)c->bytes + from, n);
    s->reads_answered++;
  }
  pthread_mutex_unlock(&s->counted_lock);
  return ours;
}

// ---- opens of local copies: read, hashed and answered here, on every open ----------------------
// JS pushes with a file's name the path of a local copy of its version and the version's digest,
// for the files its policy lets the addon open (pushed-names.ts). An open of such an inode with no
// answer JS prepared reads the copy whole and checks its SHA-256 before a byte is served (on every
// open: the copy is on a disk the user's other programs can write), then answers it, its reads
// and its release here; handles open together share the bytes, freed at the last release. A copy
// that does not verify is JS's: the open goes there, which reads it, logs why and discards it.

/** Releases a handle on a copy: 1 if it was one. Call with counted_lock held. */
static int copy_release_locked(struct session *s, uint64_t ino, uint64_t fh) {
  struct counted *c = counted_find(&s->copies, ino);
  if (c == NULL || c->fh != fh || c->opens == 0) return 0;
  s->releases_answered++;
  if (--c->opens == 0) {
    free((void *)c->bytes);
    s->copy_bytes -= c->length;
    counted_remove(&s->copies, c);
  }
  return 1;
}

int copy_release(struct session *s, uint64_t ino, uint64_t fh) {
  pthread_mutex_lock(&s->counted_lock);
  int ours = copy_release_locked(s, ino, fh);
  pthread_mutex_unlock(&s->counted_lock);
  return ours;
}

/** Answers the open (the handle counted already); uncounts it when the open was interrupted meanwhile. */
static void copy_reply_open(struct session *s, fuse_req_t req, uint64_t ino, uint64_t fh) {
  struct fuse_file_info fi;
  memset(&fi, 0, sizeof fi);
  fi.fh = fh;
  fi.keep_cache = 1; // one inode is one version: its bytes never change
  if (fuse_reply_open(req, &fi) == -ENOENT) copy_release(s, ino, fh);
}

/** An open of `ino` answered from a local copy (1), or 0: JS's (no copy pushed, over the bounds, or it did not verify). */
int copy_open(struct session *s, fuse_req_t req, uint64_t ino) {
  char *path = NULL;
  unsigned char digest[TABLE_DIGEST_BYTES];
  size_t size = 0;
  uint64_t shared = 0;
  pthread_mutex_lock(&s->table_lock);
  const struct table_entry *e = s->table ? table_find_ino(s->table, ino) : NULL;
  if (e != NULL && e->copy != NULL) {
    pthread_mutex_lock(&s->counted_lock);
    struct counted *c = counted_find(&s->copies, ino);
    size = (size_t)e->attrs[A_SIZE];
    if (c != NULL) {
      // Still named in the table (no change dropped it): a handle open on the same version shares its bytes.
      c->opens++;
      shared = c->fh;
      s->copy_opens++;
    } else if (size <= s->copy_file_limit_bytes && s->copy_bytes + size <= s->copy_limit_bytes) {
      memcpy(digest, e->digest, sizeof digest);
      path = strdup(e->copy);
    }
    pthread_mutex_unlock(&s->counted_lock);
  }
  pthread_mutex_unlock(&s->table_lock);
  if (shared) {
    copy_reply_open(s, req, ino, shared);
    return 1;
  }
  if (path == NULL) return 0;
  // Read and hashed with no lock held: JS's table calls never wait on the disk.
  unsigned char *bytes;
  enum copy_result result = copy_read(path, size, digest, &bytes);
  free(path);
  pthread_mutex_lock(&s->counted_lock);
  // Only this thread adds copies: none appeared for `ino` meanwhile.
  struct counted *c = result == COPY_OK ? counted_add(s, &s->copies, ino) : NULL;
  uint64_t fh = 0;
  if (c != NULL) {
    fh = COPY_FH | c->gen;
    c->fh = fh;
    c->opens = 1;
    c->bytes = bytes;
    c->length = size;
    s->copy_bytes += size;
    s->copy_opens++;
  } else {
    if (result != COPY_NO_MEMORY) s->copy_refusals++;
    free(bytes);
  }
  pthread_mutex_unlock(&s->counted_lock);
  if (c == NULL) return 0;
  copy_reply_open(s, req, ino, fh);
  return 1;
}

/** A read of a handle on a copy, answered from its bytes. */
void copy_read_reply(struct session *s, fuse_req_t req, uint64_t ino, uint64_t fh, off_t off, size_t size) {
  pthread_mutex_lock(&s->counted_lock);
  struct counted *c = counted_find(&s->copies, ino);
  if (c != NULL && c->fh == fh) {
    size_t from = off <= 0 ? 0 : (size_t)off > c->length ? c->length : (size_t)off;
    size_t n = c->length - from < size ? c->length - from : size;
    fuse_reply_buf(req, (const char *)c->bytes + from, n);
    s->reads_answered++;
  } else {
    fuse_reply_err(req, EBADF); // the kernel reads only handles it holds
  }
  pthread_mutex_unlock(&s->counted_lock);
}
