// skills_fuse: a thin Node-API addon over libfuse 3's low-level API. It decodes each kernel
// request, hands it to JavaScript without waiting, and encodes the reply JavaScript sends
// later. No policy lives here: what to answer, cache or invalidate is decided in TypeScript
// (src/fuse/lowlevel/). The C guarantees only that every request is answered exactly once.
//
// Threads: the session loop (reads /dev/fuse, never blocks on JS), the notifier (kernel
// invalidations and deferred interrupt replies: a notify issued from a request handler, or
// while the kernel waits on a request of the same inode, would deadlock), and the JS thread.
//
// Two replies are prepared by JS in advance rather than computed here: the open of an inode whose
// version JS has pinned, and reads of its handles from the very bytes JS pinned (see "counted
// opens" below), so a warm open, and a cold file's reads after its open, cost no hop to JS.
// Likewise names and attributes JS pushed (entry_table.c): LOOKUP, GETATTR and READDIR(PLUS) of
// what it pushed are answered from them, through the same encoders as JS's replies.
#define FUSE_USE_VERSION 312
#define NAPI_VERSION 8
#include <fuse_lowlevel.h>
#include <node_api.h>

#include "entry_table.h"
#include "verified_copy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

enum op {
  OP_INIT = 1,
  OP_LOOKUP,
  OP_FORGET,
  OP_GETATTR,
  OP_OPEN,
  OP_READ,
  OP_RELEASE,
  OP_OPENDIR,
  OP_READDIR,
  OP_READDIRPLUS,
  OP_RELEASEDIR,
  OP_STATFS,
  OP_GETXATTR,
  OP_LISTXATTR,
  OP_EXIT,
  OP_DRAINED, // no reply: the last kernel handle of a retired counted entry was released
  OP_NOTIFIED, // no reply: the notifier reached a barrier JS queued (fh = its token)
  OP_LOOKUPS, // no reply: lookups the addon answered are waiting for JS (tableLookups takes them)
};

// The attribute fields (A_INO ... A_FIELDS) are entry_table.h's: the table keeps them as JS gave them.

// Lookups the addon answered wait for JS (which takes them before any request it handles);
// every this many, JS is also told to take them, so they cannot pile up while JS is idle.
#define LOOKUPS_NOTICE 1024

struct request {
  int op;
  double id;
  napi_ref ref; // OP_DRAINED: the bytes' reference of the entry that went, to delete on the JS thread
  uint64_t ino;
  uint64_t fh;
  int64_t off;
  uint64_t size;
  uint64_t nlookup;
  char *name;
  unsigned capable, want; // OP_INIT
};

// An inode whose opens are answered here with JS's fh and flags, and whose handles are counted;
// or (in the copies set) one whose version the addon read from a local copy itself.
struct counted {
  uint64_t ino; // 0: an empty cell
  uint64_t fh;
  uint32_t opens;
  uint32_t flags;
  uint32_t gen; // names this entry to JS (an inode's later entry has another)
  int retired;  // JS let go of the version: new opens go to JS; the last release is forwarded
  // The version's bytes, when JS handed them over: reads of counted handles are answered from
  // them. `ref` keeps them alive (deleted on the JS thread once the entry is gone); never written.
  const uint8_t *bytes;
  size_t length;
  napi_ref ref;
};

/** Counted inodes: open addressing by ino, linear probing, capacity a power of 2. */
struct counted_set {
  struct counted *cells;
  size_t count, cap;
};

// The fh of a handle on a copy the addon read: JS's handles are below 2^53, so this bit tells them apart.
#define COPY_FH (1ull << 62)

struct slot {
  fuse_req_t req;
  uint32_t gen;
  int live;
};

enum job_kind { JOB_INVAL_ENTRY, JOB_INVAL_INODE, JOB_INTERRUPT, JOB_BARRIER };
struct job {
  enum job_kind kind;
  uint64_t ino;
  int64_t off, len;
  double id;
  char *name;
  struct job *next;
};

struct session {
  struct fuse_session *se;
  napi_threadsafe_function tsfn;
  pthread_t loop_thread, notifier_thread;
  int wake_fd;
  int threads_started;
  atomic_int refs; // the JS external and the tsfn: freed when both are gone
  pthread_mutex_t lock; // slots, outstanding, tearing
  struct slot *slots;
  uint32_t nslots, *free_list, nfree;
  uint64_t outstanding;
  int tearing;
  int closed;
  pthread_mutex_t jobs_lock;
  pthread_cond_t jobs_cond;
  struct job *jobs_head, *jobs_tail;
  int jobs_stop;
  uint64_t notifications;
  unsigned want_on, want_off, max_background;
  pthread_mutex_t counted_lock; // both sets, the copies' bytes and bounds, and the tallies
  struct counted_set counted;   // JS's prepared answers
  // Versions the addon read from the local copies JS pushed with their names (entry_table.h), each
  // kept while a kernel handle holds it. Bounded by JS's copyLimits (0: the addon opens nothing).
  struct counted_set copies;
  size_t copy_bytes, copy_limit_bytes, copy_file_limit_bytes;
  uint32_t next_gen;
  uint64_t opens_answered, releases_answered, reads_answered, copy_opens, copy_refusals;
  // The names and attributes JS pushed. A reply from them is sent with the lock held, so JS's
  // tableDrop (made before it queues the kernel's invalidation) waits for it: the kernel gets
  // such a reply before it is told to drop it.
  pthread_mutex_t table_lock;
  struct entry_table *table; // NULL when unmounted (or out of memory at mount)
  uint64_t lookups_answered, getattrs_answered, readdirs_answered;
};

static void fill_stat(struct stat *st, const double *a);
static void fill_entry(struct fuse_entry_param *e, const double *a, double entry_timeout, double attr_timeout);

// ---- libfuse's log: stderr, and the last message kept for a mount error --------------------

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_log[512];

static void log_func(enum fuse_log_level level, const char *fmt, va_list ap) {
  (void)level;
  char line[512];
  vsnprintf(line, sizeof line, fmt, ap);
  size_t n = strlen(line);
  while (n > 0 && line[n - 1] == '\n') line[--n] = '\0';
  pthread_mutex_lock(&log_lock);
  memcpy(last_log, line, n + 1);
  pthread_mutex_unlock(&log_lock);
  fprintf(stderr, "skills-mount: libfuse: %s\n", line);
}

// ---- request slots: an id JS can hold that is valid until answered once -------------------

static double slot_put(struct session *s, fuse_req_t req) {
  pthread_mutex_lock(&s->lock);
  if (s->tearing) {
    pthread_mutex_unlock(&s->lock);
    return -1;
  }
  if (s->nfree == 0) {
    uint32_t grown = s->nslots ? s->nslots * 2 : 256;
    struct slot *slots = realloc(s->slots, grown * sizeof *slots);
    uint32_t *free_list = realloc(s->free_list, grown * sizeof *free_list);
    if (slots == NULL || free_list == NULL) {
      if (slots) s->slots = slots;
      if (free_list) s->free_list = free_list;
      pthread_mutex_unlock(&s->lock);
      return -1;
    }
    s->slots = slots;
    s->free_list = free_list;
    for (uint32_t i = s->nslots; i < grown; i++) {
      s->slots[i] = (struct slot){0};
      s->free_list[s->nfree++] = grown - 1 - (i - s->nslots);
    }
    s->nslots = grown;
  }
  uint32_t index = s->free_list[--s->nfree];
  struct slot *slot = &s->slots[index];
  slot->gen = (slot->gen + 1) & 0x1FFFFF; // id stays below 2^53
  slot->req = req;
  slot->live = 1;
  s->outstanding++;
  double id = (double)(((uint64_t)slot->gen << 32) | index);
  pthread_mutex_unlock(&s->lock);
  return id;
}

/** The request behind `id`, taken out so nobody answers it again; NULL if already answered. */
static fuse_req_t slot_take(struct session *s, double id) {
  if (!(id >= 0)) return NULL;
  uint64_t raw = (uint64_t)id;
  uint32_t index = (uint32_t)(raw & 0xFFFFFFFFu), gen = (uint32_t)(raw >> 32);
  fuse_req_t req = NULL;
  pthread_mutex_lock(&s->lock);
  if (index < s->nslots && s->slots[index].live && s->slots[index].gen == gen) {
    req = s->slots[index].req;
    s->slots[index].live = 0;
    s->free_list[s->nfree++] = index;
    s->outstanding--;
  }
  pthread_mutex_unlock(&s->lock);
  return req;
}

// ---- the notifier thread --------------------------------------------------------------------

static void job_push(struct session *s, struct job *job) {
  pthread_mutex_lock(&s->jobs_lock);
  if (s->jobs_stop) {
    pthread_mutex_unlock(&s->jobs_lock);
    free(job->name);
    free(job);
    return;
  }
  job->next = NULL;
  if (s->jobs_tail) s->jobs_tail->next = job;
  else s->jobs_head = job;
  s->jobs_tail = job;
  pthread_cond_signal(&s->jobs_cond);
  pthread_mutex_unlock(&s->jobs_lock);
}

static void *notifier_main(void *arg) {
  struct session *s = arg;
  for (;;) {
    pthread_mutex_lock(&s->jobs_lock);
    while (s->jobs_head == NULL && !s->jobs_stop) pthread_cond_wait(&s->jobs_cond, &s->jobs_lock);
    struct job *job = s->jobs_head;
    if (job == NULL) {
      pthread_mutex_unlock(&s->jobs_lock);
      return NULL;
    }
    s->jobs_head = job->next;
    if (s->jobs_head == NULL) s->jobs_tail = NULL;
    pthread_mutex_unlock(&s->jobs_lock);
    switch (job->kind) {
    case JOB_INVAL_ENTRY:
      // ENOENT: the kernel holds no such entry; nothing to do.
      fuse_lowlevel_notify_inval_entry(s->se, job->ino, job->name, strlen(job->name));
      break;
    case JOB_INVAL_INODE:
      fuse_lowlevel_notify_inval_inode(s->se, job->ino, job->off, job->len);
      break;
    case JOB_INTERRUPT: {
      fuse_req_t req = slot_take(s, job->id);
      if (req) fuse_reply_err(req, EINTR);
      break;
    }
    case JOB_BARRIER: {
      // Every notification queued before it has been handed to the kernel: tell JS.
      struct request *r = calloc(1, sizeof *r);
      if (r == NULL) break; // JS gives up waiting on its own
      r->op = OP_NOTIFIED;
      r->id = -1;
      r->fh = (uint64_t)job->id;
      if (napi_call_threadsafe_function(s->tsfn, r, napi_tsfn_nonblocking) != napi_ok) free(r);
      break;
    }
    }
    pthread_mutex_lock(&s->jobs_lock);
    if (job->kind != JOB_BARRIER) s->notifications++;
    pthread_mutex_unlock(&s->jobs_lock);
    free(job->name);
    free(job);
  }
}

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
static struct counted *counted_find(struct counted_set *set, uint64_t ino) {
  if (set->cap == 0 || ino == 0) return NULL;
  struct counted *c = &set->cells[counted_cell(set, ino)];
  return c->ino == ino ? c : NULL;
}

/** A new entry for `ino` (not present), or NULL when out of memory. Call with counted_lock held. */
static struct counted *counted_add(struct session *s, struct counted_set *set, uint64_t ino) {
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
static void counted_remove(struct counted_set *set, struct counted *c) {
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
static int counted_open(struct session *s, uint64_t ino, struct fuse_file_info *fi) {
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
static int counted_release(struct session *s, uint64_t ino, uint64_t fh, uint32_t *drained, napi_ref *ref) {
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
static int counted_read(struct session *s, fuse_req_t req, uint64_t ino, uint64_t fh, off_t off, size_t size) {
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

static int copy_release(struct session *s, uint64_t ino, uint64_t fh) {
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
static int copy_open(struct session *s, fuse_req_t req, uint64_t ino) {
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
static void copy_read_reply(struct session *s, fuse_req_t req, uint64_t ino, uint64_t fh, off_t off, size_t size) {
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

// ---- directory replies: one encoder, for JS's replyDirectory and the table's listings --------

/** Where a directory reply takes entry i (0: the one at the first offset) from. */
struct dirent_source {
  uint32_t count;
  /** Its name (NULL: stop before it), valid until the next call. */
  const char *(*name)(void *context, uint32_t i);
  /** Its A_FIELDS attributes, timeouts included; mode 0: the name only (no lookup counted). */
  const double *(*fields)(void *context, uint32_t i);
  void *context;
};

/**
 * Packs a READDIR (plus: READDIRPLUS) reply into `buffer`: entries from `first` on, the kernel's
 * next offset of entry i being first + i + 1, as many as fit in max_bytes. Returns how many;
 * *used: the bytes.
 */
static uint32_t pack_dirents(fuse_req_t req, char *buffer, size_t max_bytes, int plus, off_t first, const struct dirent_source *source, size_t *used) {
  uint32_t added = 0;
  *used = 0;
  for (; added < source->count; added++) {
    const char *name = source->name(source->context, added);
    if (name == NULL) break;
    const double *fields = source->fields(source->context, added);
    off_t next = first + (off_t)added + 1;
    size_t needed;
    if (plus) {
      struct fuse_entry_param e;
      fill_entry(&e, fields, fields[A_ENTRY_S], fields[A_ATTR_S]);
      needed = fuse_add_direntry_plus(req, buffer + *used, max_bytes - *used, name, &e, next);
    } else {
      struct stat st;
      fill_stat(&st, fields);
      needed = fuse_add_direntry(req, buffer + *used, max_bytes - *used, name, &st, next);
    }
    if (needed > max_bytes - *used) break;
    *used += needed;
  }
  return added;
}

// ---- pushed names and attributes: LOOKUP, GETATTR, READDIR(PLUS) answered from the table -------
// JS pushes (tablePut) what it resolved and drops it (tableDrop) before it tells the kernel of a
// change; what is not in the table goes to JS. The kernel counts each lookup it is given (a
// LOOKUP, an entry of a READDIRPLUS) and later forgets it, and those counts are JS's: each lookup
// answered here is recorded once the kernel has the reply, for JS to take (tableLookups) before
// it handles any request, FORGET included, so a FORGET never finds a lookup JS has not counted.

static void post_notice(struct session *s, int op) {
  struct request *r = calloc(1, sizeof *r);
  if (r == NULL) return; // JS takes the lookups at its next request anyway
  r->op = op;
  r->id = -1;
  if (napi_call_threadsafe_function(s->tsfn, r, napi_tsfn_nonblocking) != napi_ok) free(r);
}

/** Keeps a lookup the kernel got; tells JS every LOOKUPS_NOTICE of them. Call with table_lock held. */
static int keep_lookup(struct session *s, struct table_lookup *l) {
  return table_looked_up(s->table, l) % LOOKUPS_NOTICE == 0;
}

/** A LOOKUP answered from the table (1), or 0: not pushed, for JS. */
static int table_lookup_reply(struct session *s, fuse_req_t req, fuse_ino_t parent, const char *name) {
  pthread_mutex_lock(&s->table_lock);
  const struct table_entry *e = s->table ? table_find(s->table, parent, name) : NULL;
  // Made before the reply, so that keeping it once the kernel has the reply cannot fail.
  struct table_lookup *l = e ? table_lookup_new(e) : NULL;
  if (l == NULL) {
    pthread_mutex_unlock(&s->table_lock);
    return 0;
  }
  struct fuse_entry_param p;
  fill_entry(&p, e->attrs, e->attrs[A_ENTRY_S], e->attrs[A_ATTR_S]);
  int notice = 0;
  // An interrupted lookup (-ENOENT) is no lookup: the kernel counts only what it got.
  if (fuse_reply_entry(req, &p) == 0) notice = keep_lookup(s, l);
  else free(l);
  s->lookups_answered++;
  pthread_mutex_unlock(&s->table_lock);
  if (notice) post_notice(s, OP_LOOKUPS);
  return 1;
}

/** A GETATTR answered from the table (1), or 0. An inode is one version: its attributes never change. */
static int table_getattr_reply(struct session *s, fuse_req_t req, fuse_ino_t ino) {
  pthread_mutex_lock(&s->table_lock);
  const struct table_entry *e = s->table ? table_find_ino(s->table, ino) : NULL;
  if (e != NULL) {
    struct stat st;
    fill_stat(&st, e->attrs);
    fuse_reply_attr(req, &st, e->attrs[A_ATTR_S]);
    s->getattrs_answered++;
  }
  pthread_mutex_unlock(&s->table_lock);
  return e != NULL;
}

static const char *listed_name(void *context, uint32_t i) { return ((struct table_entry *const *)context)[i]->name; }
static const double *listed_fields(void *context, uint32_t i) { return ((struct table_entry *const *)context)[i]->attrs; }

/** A READDIR(PLUS) of a directory pushed whole, answered from the table (1), or 0. */
static int table_readdir_reply(struct session *s, fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, int plus) {
  pthread_mutex_lock(&s->table_lock);
  const struct table_dir *d = s->table ? table_listing(s->table, ino) : NULL;
  char *buffer = d ? malloc(size ? size : 1) : NULL;
  if (buffer == NULL) {
    pthread_mutex_unlock(&s->table_lock);
    return 0;
  }
  off_t first = off < 0 ? 0 : off > (off_t)d->count ? (off_t)d->count : off;
  struct dirent_source source = {(uint32_t)(d->count - first), listed_name, listed_fields, d->entries + first};
  size_t used;
  uint32_t added = pack_dirents(req, buffer, size, plus, first, &source, &used);
  // READDIRPLUS: each entry given with attributes (not "." or "..") is a lookup the kernel counts.
  struct table_lookup *looked = NULL, **tail = &looked;
  int complete = 1;
  for (uint32_t i = 0; plus && i < added && complete; i++) {
    const struct table_entry *e = d->entries[first + i];
    if (!table_counts_lookup(e)) continue;
    if ((*tail = table_lookup_new(e)) == NULL) complete = 0;
    else tail = &(*tail)->next;
  }
  int notice = 0;
  if (complete) {
    int sent = fuse_reply_buf(req, buffer, used) == 0;
    s->readdirs_answered++;
    for (struct table_lookup *l = looked, *next; l != NULL; l = next) {
      next = l->next;
      if (sent) notice |= keep_lookup(s, l);
      else free(l);
    }
  } else {
    for (struct table_lookup *l = looked, *next; l != NULL; l = next) {
      next = l->next;
      free(l);
    }
  }
  pthread_mutex_unlock(&s->table_lock);
  free(buffer);
  if (notice) post_notice(s, OP_LOOKUPS);
  return complete;
}

// ---- requests: decoded here, answered from JS -----------------------------------------------

static void on_interrupt(fuse_req_t req, void *data) {
  // Called with libfuse's request lock held, possibly inside fuse_req_interrupt_func: a reply
  // here could free the request under that lock, so the notifier thread answers it.
  struct session *s = fuse_req_userdata(req);
  struct job *job = calloc(1, sizeof *job);
  if (job == NULL) return;
  job->kind = JOB_INTERRUPT;
  memcpy(&job->id, &data, sizeof job->id);
  job_push(s, job);
}

static void post(struct session *s, struct request *r) {
  if (napi_call_threadsafe_function(s->tsfn, r, napi_tsfn_nonblocking) != napi_ok) {
    fuse_req_t req = slot_take(s, r->id);
    if (req) fuse_reply_err(req, EIO);
    free(r->name);
    free(r);
  }
}

static void forward(fuse_req_t req, int op, fuse_ino_t ino, const char *name, uint64_t fh, int64_t off, uint64_t size) {
  struct session *s = fuse_req_userdata(req);
  struct request *r = calloc(1, sizeof *r);
  if (r == NULL || (name != NULL && (r->name = strdup(name)) == NULL)) {
    if (r) free(r);
    fuse_reply_err(req, ENOMEM);
    return;
  }
  r->id = slot_put(s, req);
  if (r->id < 0) {
    // Tearing down (or out of memory): answered here, never handed to JS.
    free(r->name);
    free(r);
    fuse_reply_err(req, ECONNABORTED);
    return;
  }
  r->op = op;
  r->ino = ino;
  r->fh = fh;
  r->off = off;
  r->size = size;
  void *data;
  memcpy(&data, &r->id, sizeof data);
  fuse_req_interrupt_func(req, on_interrupt, data);
  post(s, r);
}

static void ll_init(void *userdata, struct fuse_conn_info *conn) {
  struct session *s = userdata;
  conn->want &= ~(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
  conn->want |= s->want_on & conn->capable;
  conn->want &= ~s->want_off;
  if (s->max_background) {
    conn->max_background = s->max_background;
    conn->congestion_threshold = s->max_background * 3 / 4;
  }
  struct request *r = calloc(1, sizeof *r);
  if (r == NULL) return;
  r->op = OP_INIT;
  r->id = -1;
  r->capable = conn->capable;
  r->want = conn->want;
  napi_call_threadsafe_function(s->tsfn, r, napi_tsfn_nonblocking);
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  if (table_lookup_reply(fuse_req_userdata(req), req, parent, name)) return;
  forward(req, OP_LOOKUP, parent, name, 0, 0, 0);
}
static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)fi;
  if (table_getattr_reply(fuse_req_userdata(req), req, ino)) return;
  forward(req, OP_GETATTR, ino, NULL, 0, 0, 0);
}
static void post_drained(struct session *s, fuse_ino_t ino, uint64_t fh, uint32_t gen, napi_ref ref);

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  struct session *s = fuse_req_userdata(req);
  struct fuse_file_info answer;
  // Only a read-only open can be one of JS's prepared answers; anything else is JS's to refuse.
  if ((fi->flags & O_ACCMODE) == O_RDONLY && (fi->flags & O_TRUNC) == 0 && counted_open(s, ino, &answer)) {
    // -ENOENT: the open was interrupted meanwhile; no release will come for it.
    if (fuse_reply_open(req, &answer) == -ENOENT) {
      uint32_t drained;
      napi_ref ref;
      counted_release(s, ino, answer.fh, &drained, &ref);
      if (drained) post_drained(s, ino, answer.fh, drained, ref);
    }
    return;
  }
  if ((fi->flags & O_ACCMODE) == O_RDONLY && (fi->flags & O_TRUNC) == 0 && copy_open(s, req, ino)) return;
  forward(req, OP_OPEN, ino, NULL, 0, fi->flags, 0);
}
static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  if (fi->fh & COPY_FH) {
    copy_read_reply(fuse_req_userdata(req), req, ino, fi->fh, off, size);
    return;
  }
  if (counted_read(fuse_req_userdata(req), req, ino, fi->fh, off, size)) return;
  forward(req, OP_READ, ino, NULL, fi->fh, off, size);
}
static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  struct session *s = fuse_req_userdata(req);
  uint32_t drained;
  napi_ref ref;
  if (fi->fh & COPY_FH) {
    copy_release(s, ino, fi->fh);
    fuse_reply_err(req, 0);
    return;
  }
  if (counted_release(s, ino, fi->fh, &drained, &ref)) {
    fuse_reply_err(req, 0);
    if (drained) post_drained(s, ino, fi->fh, drained, ref);
    return;
  }
  forward(req, OP_RELEASE, ino, NULL, fi->fh, 0, 0);
}
static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) { forward(req, OP_OPENDIR, ino, NULL, 0, fi->flags, 0); }
static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  if (table_readdir_reply(fuse_req_userdata(req), req, ino, size, off, 0)) return;
  forward(req, OP_READDIR, ino, NULL, fi->fh, off, size);
}
static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi) {
  if (table_readdir_reply(fuse_req_userdata(req), req, ino, size, off, 1)) return;
  forward(req, OP_READDIRPLUS, ino, NULL, fi->fh, off, size);
}
static void ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) { forward(req, OP_RELEASEDIR, ino, NULL, fi->fh, 0, 0); }
static void ll_statfs(fuse_req_t req, fuse_ino_t ino) { forward(req, OP_STATFS, ino, NULL, 0, 0, 0); }
static void ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size) { forward(req, OP_GETXATTR, ino, name, 0, 0, size); }
static void ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) { forward(req, OP_LISTXATTR, ino, NULL, 0, 0, size); }

static void post_forget(struct session *s, fuse_ino_t ino, uint64_t nlookup) {
  struct request *r = calloc(1, sizeof *r);
  if (r == NULL) return;
  r->op = OP_FORGET;
  r->id = -1;
  r->ino = ino;
  r->nlookup = nlookup;
  if (napi_call_threadsafe_function(s->tsfn, r, napi_tsfn_nonblocking) != napi_ok) free(r);
}

static void post_drained(struct session *s, fuse_ino_t ino, uint64_t fh, uint32_t gen, napi_ref ref) {
  struct request *r = calloc(1, sizeof *r);
  if (r == NULL) return; // JS keeps the version until unmount: memory, never a wrong byte
  r->op = OP_DRAINED;
  r->id = -1;
  r->ino = ino;
  r->fh = fh;
  r->off = gen;
  r->ref = ref;
  if (napi_call_threadsafe_function(s->tsfn, r, napi_tsfn_nonblocking) != napi_ok) free(r);
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  post_forget(fuse_req_userdata(req), ino, nlookup);
  fuse_reply_none(req);
}

static void ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets) {
  struct session *s = fuse_req_userdata(req);
  for (size_t i = 0; i < count; i++) post_forget(s, forgets[i].ino, forgets[i].nlookup);
  fuse_reply_none(req);
}

static const struct fuse_lowlevel_ops ops = {
  .init = ll_init,
  .lookup = ll_lookup,
  .forget = ll_forget,
  .forget_multi = ll_forget_multi,
  .getattr = ll_getattr,
  .open = ll_open,
  .read = ll_read,
  .release = ll_release,
  .opendir = ll_opendir,
  .readdir = ll_readdir,
  .readdirplus = ll_readdirplus,
  .releasedir = ll_releasedir,
  .statfs = ll_statfs,
  .getxattr = ll_getxattr,
  .listxattr = ll_listxattr,
};

// ---- the session loop: never blocks on JS; the eventfd wakes it to stop --------------------

static void *loop_main(void *arg) {
  struct session *s = arg;
  struct fuse_buf buf = {0};
  struct pollfd fds[2] = {{.fd = fuse_session_fd(s->se), .events = POLLIN}, {.fd = s->wake_fd, .events = POLLIN}};
  while (!fuse_session_exited(s->se)) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents) break;
    int res = fuse_session_receive_buf(s->se, &buf);
    if (res == -EINTR || res == -EAGAIN) continue;
    if (res <= 0) break; // ENODEV: unmounted from outside
    fuse_session_process_buf(s->se, &buf);
  }
  free(buf.mem);
  struct request *r = calloc(1, sizeof *r);
  if (r) {
    r->op = OP_EXIT;
    r->id = -1;
    if (napi_call_threadsafe_function(s->tsfn, r, napi_tsfn_nonblocking) != napi_ok) free(r);
  }
  return NULL;
}

// ---- Node-API glue ----------------------------------------------------------------------------

#define CHECK(env, call)                                                  \
  do {                                                                    \
    if ((call) != napi_ok) {                                              \
      napi_throw_error((env), "SKILLS_FUSE", "Node-API call failed: " #call); \
      return NULL;                                                        \
    }                                                                     \
  } while (0)

static void session_unref(struct session *s) {
  if (atomic_fetch_sub(&s->refs, 1) != 1) return;
  pthread_mutex_destroy(&s->lock);
  pthread_mutex_destroy(&s->jobs_lock);
  pthread_mutex_destroy(&s->counted_lock);
  pthread_mutex_destroy(&s->table_lock);
  pthread_cond_destroy(&s->jobs_cond);
  table_free(s->table);
  free(s->counted.cells);
  free(s->copies.cells);
  free(s->slots);
  free(s->free_list);
  free(s);
}

static void external_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  session_unref(data);
}

static void tsfn_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  session_unref(data);
}

static napi_value number(napi_env env, double value) {
  napi_value result;
  napi_create_double(env, value, &result);
  return result;
}

static void call_js(napi_env env, napi_value handler, void *context, void *data) {
  struct session *s = context;
  struct request *r = data;
  if (env != NULL && r->ref != NULL) napi_delete_reference(env, r->ref);
  if (env != NULL && handler != NULL) {
    napi_value argv[7], undefined, result;
    napi_get_undefined(env, &undefined);
    argv[0] = number(env, r->op);
    argv[1] = number(env, r->id);
    argv[2] = number(env, (double)r->ino);
    argv[3] = number(env, r->op == OP_INIT ? r->capable : r->op == OP_FORGET ? (double)r->nlookup : (double)r->fh);
    argv[4] = number(env, r->op == OP_INIT ? r->want : (double)r->off);
    argv[5] = number(env, (double)r->size);
    if (r->name) napi_create_string_utf8(env, r->name, NAPI_AUTO_LENGTH, &argv[6]);
    else argv[6] = undefined;
    if (napi_call_function(env, undefined, handler, 7, argv, &result) != napi_ok) {
      // A handler that threw: the request is answered here, and the error reported once.
      napi_value error;
      napi_get_and_clear_last_exception(env, &error);
      fuse_req_t req = slot_take(s, r->id);
      if (req) fuse_reply_err(req, EIO);
      fprintf(stderr, "skills-mount: the FUSE request handler threw (operation %d); answered EIO\n", r->op);
    }
  } else {
    fuse_req_t req = slot_take(s, r->id);
    if (req) fuse_reply_err(req, EIO);
  }
  free(r->name);
  free(r);
}

static struct session *session_arg(napi_env env, napi_value value) {
  void *data = NULL;
  if (napi_get_value_external(env, value, &data) != napi_ok || data == NULL) {
    napi_throw_type_error(env, NULL, "expected a skills_fuse session");
    return NULL;
  }
  return data;
}

// At least `need` arguments into argv (room for `most`; Node-API fills the missing ones with
// undefined), the first a session.
static int get_args_between(napi_env env, napi_callback_info info, size_t need, size_t most, napi_value *argv, struct session **s) {
  size_t argc = most;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < need) {
    napi_throw_type_error(env, NULL, "too few arguments");
    return 0;
  }
  *s = session_arg(env, argv[0]);
  return *s != NULL;
}

static int get_args(napi_env env, napi_callback_info info, size_t want, napi_value *argv, struct session **s) {
  return get_args_between(env, info, want, want, argv, s);
}

static double double_arg(napi_env env, napi_value value) {
  double out = 0;
  napi_get_value_double(env, value, &out);
  return out;
}

static int attrs_arg(napi_env env, napi_value value, double **fields, size_t *count) {
  napi_typedarray_type type;
  size_t length;
  void *data;
  if (napi_get_typedarray_info(env, value, &type, &length, &data, NULL, NULL) != napi_ok || type != napi_float64_array) {
    napi_throw_type_error(env, NULL, "expected a Float64Array of attributes");
    return 0;
  }
  *fields = data;
  *count = length;
  return 1;
}

static void fill_stat(struct stat *st, const double *a) {
  memset(st, 0, sizeof *st);
  st->st_ino = (ino_t)a[A_INO];
  st->st_mode = (mode_t)a[A_MODE];
  st->st_nlink = (nlink_t)a[A_NLINK];
  st->st_uid = (uid_t)a[A_UID];
  st->st_gid = (gid_t)a[A_GID];
  st->st_size = (off_t)a[A_SIZE];
  st->st_blksize = 4096;
  st->st_blocks = (blkcnt_t)((st->st_size + 511) / 512);
  double ms = a[A_MTIME_MS];
  struct timespec t = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6)};
  st->st_mtim = st->st_ctim = st->st_atim = t;
}

static void fill_entry(struct fuse_entry_param *e, const double *a, double entry_timeout, double attr_timeout) {
  memset(e, 0, sizeof *e);
  // Mode 0 marks a name sent without attributes: nodeid 0 makes the kernel count no lookup.
  e->ino = a[A_MODE] == 0 ? 0 : (fuse_ino_t)a[A_INO];
  e->generation = 1;
  fill_stat(&e->attr, a);
  e->entry_timeout = entry_timeout;
  e->attr_timeout = attr_timeout;
}

static napi_value boolean(napi_env env, int value) {
  napi_value result;
  napi_get_boolean(env, value, &result);
  return result;
}

// Marks every descriptor above stderr close-on-exec. libfuse keeps its end of fusermount3's
// _FUSE_COMMFD socket open for auto_unmount without FD_CLOEXEC: a child spawned later (the
// watchdog, a stdio server) would hold it, and fusermount3 would not see this process die.
static void close_on_exec_all(void) {
  DIR *dir = opendir("/proc/self/fd");
  if (dir == NULL) return;
  int own = dirfd(dir);
  for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
    char *end;
    long fd = strtol(entry->d_name, &end, 10);
    if (*end != '\0' || fd <= 2 || fd == own) continue;
    int flags = fcntl((int)fd, F_GETFD);
    if (flags >= 0 && !(flags & FD_CLOEXEC)) fcntl((int)fd, F_SETFD, flags | FD_CLOEXEC);
  }
  closedir(dir);
}

// closeOnExecAll(): the same for a mount this addon did not make (the libfuse 2 fallback's).
static napi_value js_close_on_exec_all(napi_env env, napi_callback_info info) {
  (void)info;
  close_on_exec_all();
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  return undefined;
}

// mount(mountpoint, argv: string[], wantOn, wantOff, maxBackground, handler) -> session
static napi_value js_mount(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value argv[6];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 6) {
    napi_throw_type_error(env, NULL, "mount(mountpoint, args, wantOn, wantOff, maxBackground, handler)");
    return NULL;
  }
  char mountpoint[4096];
  size_t length;
  CHECK(env, napi_get_value_string_utf8(env, argv[0], mountpoint, sizeof mountpoint, &length));
  uint32_t nargs;
  CHECK(env, napi_get_array_length(env, argv[1], &nargs));
  char **fuse_argv = calloc(nargs + 2, sizeof *fuse_argv);
  struct session *s = calloc(1, sizeof *s);
  if (fuse_argv == NULL || s == NULL) {
    free(fuse_argv);
    free(s);
    napi_throw_error(env, "ENOMEM", "out of memory");
    return NULL;
  }
  fuse_argv[0] = strdup("skills-mount");
  for (uint32_t i = 0; i < nargs; i++) {
    napi_value item;
    char buffer[4096];
    napi_get_element(env, argv[1], i, &item);
    napi_get_value_string_utf8(env, item, buffer, sizeof buffer, &length);
    fuse_argv[i + 1] = strdup(buffer);
  }
  s->want_on = (unsigned)double_arg(env, argv[2]);
  s->want_off = (unsigned)double_arg(env, argv[3]);
  s->max_background = (unsigned)double_arg(env, argv[4]);
  atomic_init(&s->refs, 1);
  pthread_mutex_init(&s->lock, NULL);
  pthread_mutex_init(&s->jobs_lock, NULL);
  pthread_mutex_init(&s->counted_lock, NULL);
  pthread_mutex_init(&s->table_lock, NULL);
  pthread_cond_init(&s->jobs_cond, NULL);
  s->wake_fd = -1;
  s->table = table_new(); // NULL: nothing is answered from it; everything goes to JS

  const char *failure = NULL;
  struct fuse_args args = FUSE_ARGS_INIT((int)nargs + 1, fuse_argv);
  pthread_mutex_lock(&log_lock);
  last_log[0] = '\0';
  pthread_mutex_unlock(&log_lock);
  napi_value name;
  napi_create_string_utf8(env, "skills_fuse", NAPI_AUTO_LENGTH, &name);
  if (napi_create_threadsafe_function(env, argv[5], NULL, name, 0, 1, s, tsfn_finalize, s, call_js, &s->tsfn) != napi_ok) {
    failure = "cannot create the request queue";
  } else {
    atomic_fetch_add(&s->refs, 1); // held by the tsfn until its finalizer
    s->se = fuse_session_new(&args, &ops, sizeof ops, s);
    if (s->se == NULL) failure = "libfuse refused the mount options";
    else if (fuse_session_mount(s->se, mountpoint) != 0) failure = "libfuse could not mount";
    else if ((s->wake_fd = eventfd(0, EFD_CLOEXEC)) < 0) failure = "eventfd failed";
    else if (pthread_create(&s->notifier_thread, NULL, notifier_main, s) != 0) failure = "cannot start the notifier thread";
    else if (pthread_create(&s->loop_thread, NULL, loop_main, s) != 0) {
      failure = "cannot start the session thread";
      pthread_mutex_lock(&s->jobs_lock);
      s->jobs_stop = 1;
      pthread_cond_signal(&s->jobs_cond);
      pthread_mutex_unlock(&s->jobs_lock);
      pthread_join(s->notifier_thread, NULL);
      fuse_session_unmount(s->se);
    } else s->threads_started = 1;
  }
  // On the JS thread, so no child can be spawned before this.
  if (failure == NULL) close_on_exec_all();
  fuse_opt_free_args(&args);
  for (uint32_t i = 0; i < nargs + 1; i++) free(fuse_argv[i]);
  free(fuse_argv);
  if (failure != NULL) {
    char message[1024];
    pthread_mutex_lock(&log_lock);
    snprintf(message, sizeof message, "%s%s%s", failure, last_log[0] ? ": " : "", last_log);
    pthread_mutex_unlock(&log_lock);
    if (s->se) fuse_session_destroy(s->se);
    s->se = NULL;
    if (s->wake_fd >= 0) close(s->wake_fd);
    s->closed = 1;
    if (s->tsfn) napi_release_threadsafe_function(s->tsfn, napi_tsfn_abort);
    session_unref(s);
    napi_throw_error(env, "SKILLS_FUSE_MOUNT", message);
    return NULL;
  }
  napi_value external;
  CHECK(env, napi_create_external(env, s, external_finalize, NULL, &external));
  return external;
}

// unmount(session): answers every outstanding request (ECONNABORTED), stops both threads, closes the
// device (the kernel aborts what is left) and detaches the mount. Idempotent.
static napi_value js_unmount(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  struct session *s;
  if (!get_args(env, info, 1, argv, &s)) return NULL;
  if (s->closed) return boolean(env, 0);
  s->closed = 1;
  pthread_mutex_lock(&s->lock);
  s->tearing = 1;
  for (uint32_t i = 0; i < s->nslots; i++) {
    if (!s->slots[i].live) continue;
    fuse_req_t req = s->slots[i].req;
    s->slots[i].live = 0;
    s->free_list[s->nfree++] = i;
    s->outstanding--;
    // As a kernel abort would answer: the reader sees "Software caused connection abort".
    fuse_reply_err(req, ECONNABORTED);
  }
  pthread_mutex_unlock(&s->lock);
  uint64_t one = 1;
  if (write(s->wake_fd, &one, sizeof one) < 0) { /* the loop also stops on ENODEV */ }
  pthread_join(s->loop_thread, NULL);
  pthread_mutex_lock(&s->jobs_lock);
  s->jobs_stop = 1;
  for (struct job *job = s->jobs_head, *next; job != NULL; job = next) {
    next = job->next;
    free(job->name);
    free(job);
  }
  s->jobs_head = s->jobs_tail = NULL;
  pthread_cond_signal(&s->jobs_cond);
  pthread_mutex_unlock(&s->jobs_lock);
  pthread_join(s->notifier_thread, NULL);
  fuse_session_unmount(s->se);
  fuse_session_destroy(s->se);
  s->se = NULL;
  close(s->wake_fd);
  // No session thread is left to read any entry's bytes: their references go.
  pthread_mutex_lock(&s->counted_lock);
  for (size_t i = 0; i < s->counted.cap; i++) {
    if (s->counted.cells[i].ino != 0 && s->counted.cells[i].ref != NULL) napi_delete_reference(env, s->counted.cells[i].ref);
  }
  if (s->counted.cap) memset(s->counted.cells, 0, s->counted.cap * sizeof *s->counted.cells);
  s->counted.count = 0;
  for (size_t i = 0; i < s->copies.cap; i++) {
    if (s->copies.cells[i].ino != 0) free((void *)s->copies.cells[i].bytes);
  }
  if (s->copies.cap) memset(s->copies.cells, 0, s->copies.cap * sizeof *s->copies.cells);
  s->copies.count = 0;
  s->copy_bytes = 0;
  pthread_mutex_unlock(&s->counted_lock);
  // Nobody is left to answer from it, nor a kernel to count lookups.
  pthread_mutex_lock(&s->table_lock);
  table_free(s->table);
  s->table = NULL;
  pthread_mutex_unlock(&s->table_lock);
  napi_release_threadsafe_function(s->tsfn, napi_tsfn_release);
  return boolean(env, 1);
}

#define REPLY_PROLOGUE(count)                          \
  napi_value argv[count];                              \
  struct session *s;                                   \
  if (!get_args(env, info, count, argv, &s)) return NULL; \
  if (s->closed) return boolean(env, 0);               \
  fuse_req_t req = slot_take(s, double_arg(env, argv[1])); \
  if (req == NULL) return boolean(env, 0)

// The request a reply names, for replies whose argv[2] is a Float64Array of at least
// `fields` numbers; NULL when already answered (*thrown set when an exception is pending).
static fuse_req_t take_with_fields(napi_env env, napi_callback_info info, size_t argc, napi_value *argv, double **a, size_t fields, int *thrown) {
  struct session *s;
  size_t n;
  *thrown = 1;
  if (!get_args(env, info, argc, argv, &s) || !attrs_arg(env, argv[2], a, &n)) return NULL;
  if (n < fields) {
    napi_throw_range_error(env, NULL, "too few fields");
    return NULL;
  }
  *thrown = 0;
  if (s->closed) return NULL;
  return slot_take(s, double_arg(env, argv[1]));
}

// replyErr(session, id, errno)
static napi_value js_reply_err(napi_env env, napi_callback_info info) {
  REPLY_PROLOGUE(3);
  fuse_reply_err(req, (int)double_arg(env, argv[2]));
  return boolean(env, 1);
}

// replyEntry(session, id, attrs, entryTimeout, attrTimeout)
static napi_value js_reply_entry(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  double *a;
  int thrown;
  fuse_req_t req = take_with_fields(env, info, 5, argv, &a, A_FIELDS, &thrown);
  if (req == NULL) return thrown ? NULL : boolean(env, 0);
  struct fuse_entry_param e;
  fill_entry(&e, a, double_arg(env, argv[3]), double_arg(env, argv[4]));
  fuse_reply_entry(req, &e);
  return boolean(env, 1);
}

// replyAttr(session, id, attrs, attrTimeout)
static napi_value js_reply_attr(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  double *a;
  int thrown;
  fuse_req_t req = take_with_fields(env, info, 4, argv, &a, A_FIELDS, &thrown);
  if (req == NULL) return thrown ? NULL : boolean(env, 0);
  struct stat st;
  fill_stat(&st, a);
  fuse_reply_attr(req, &st, double_arg(env, argv[3]));
  return boolean(env, 1);
}

// replyOpen(session, id, fh, flags) with flags bit 0 keep_cache, 1 direct_io, 2 cache_readdir
static napi_value js_reply_open(napi_env env, napi_callback_info info) {
  REPLY_PROLOGUE(4);
  struct fuse_file_info fi;
  memset(&fi, 0, sizeof fi);
  fi.fh = (uint64_t)double_arg(env, argv[2]);
  unsigned flags = (unsigned)double_arg(env, argv[3]);
  fi.keep_cache = (flags & 1) != 0;
  fi.direct_io = (flags & 2) != 0;
  fi.cache_readdir = (flags & 4) != 0;
  // -ENOENT: the open was interrupted meanwhile; no release will come, so JS must not wait for one.
  return boolean(env, fuse_reply_open(req, &fi) != -ENOENT);
}

// replyOpenCounted(session, id, ino, fh, flags, answerLater[, bytes]) -> the gen of the inode's entry that
// counts this handle (made now if there was none: JS then holds one reference for that gen until
// retireOpens returns 0 or OP_DRAINED names it), or -1 when this open is not counted (already
// answered, unmounted, or out of memory: answered ENOMEM). answerLater: answer later opens here
// (false: count this handle only, as for a version JS is letting go of). bytes: the version's
// bytes, which the entry keeps (a reference) to answer reads of its handles; never written to.
static napi_value js_reply_open_counted(napi_env env, napi_callback_info info) {
  napi_value argv[7];
  struct session *s;
  if (!get_args_between(env, info, 6, 7, argv, &s)) return NULL;
  const uint8_t *bytes = NULL;
  size_t length = 0;
  napi_valuetype kind;
  napi_typeof(env, argv[6], &kind);
  int with_bytes = kind != napi_undefined;
  if (with_bytes) {
    napi_typedarray_type type;
    void *data;
    if (napi_get_typedarray_info(env, argv[6], &type, &length, &data, NULL, NULL) != napi_ok || type != napi_uint8_array) {
      napi_throw_type_error(env, NULL, "bytes: expected a Uint8Array");
      return NULL;
    }
    bytes = data;
  }
  if (s->closed) return number(env, -1);
  fuse_req_t req = slot_take(s, double_arg(env, argv[1]));
  if (req == NULL) return number(env, -1);
  uint64_t ino = (uint64_t)double_arg(env, argv[2]);
  uint64_t fh = (uint64_t)double_arg(env, argv[3]);
  unsigned flags = (unsigned)double_arg(env, argv[4]);
  bool answer_later;
  napi_get_value_bool(env, argv[5], &answer_later);
  pthread_mutex_lock(&s->counted_lock);
  struct counted *c = counted_find(&s->counted, ino);
  if (c == NULL && (c = counted_add(s, &s->counted, ino)) != NULL) {
    c->fh = fh;
    c->flags = flags;
    c->retired = 1;
  }
  // JS keeps one version per inode alive while its entry lives, so the fh always matches.
  int counted = c != NULL && c->fh == fh;
  uint32_t gen = 0;
  if (counted) {
    c->opens++;
    if (answer_later) c->retired = 0;
    gen = c->gen;
    if (with_bytes && c->ref == NULL && napi_create_reference(env, argv[6], 1, &c->ref) == napi_ok) {
      c->bytes = bytes;
      c->length = length;
    }
  }
  pthread_mutex_unlock(&s->counted_lock);
  if (!counted) {
    fuse_reply_err(req, ENOMEM);
    return number(env, -1);
  }
  struct fuse_file_info fi;
  memset(&fi, 0, sizeof fi);
  fi.fh = fh;
  fi.keep_cache = (flags & 1) != 0;
  // -ENOENT: the open was interrupted meanwhile and no release will come: uncount it here.
  // The entry (and JS's reference for its gen) stands; drained, JS hears of it as for a release.
  if (fuse_reply_open(req, &fi) == -ENOENT) {
    uint32_t drained;
    napi_ref ref;
    counted_release(s, ino, fh, &drained, &ref);
    if (drained) post_drained(s, ino, fh, drained, ref);
  }
  return number(env, gen);
}

// retireOpens(session, ino) -> kernel handles still open on the inode's entry. 0: the entry is
// gone (or there was none); more: new opens reach JS again, and OP_DRAINED comes with the last release.
static napi_value js_retire_opens(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  struct session *s;
  if (!get_args(env, info, 2, argv, &s)) return NULL;
  uint64_t ino = (uint64_t)double_arg(env, argv[1]);
  pthread_mutex_lock(&s->counted_lock);
  struct counted *c = counted_find(&s->counted, ino);
  uint32_t open = 0;
  napi_ref ref = NULL;
  if (c != NULL) {
    open = s->closed ? 0 : c->opens;
    if (open == 0) {
      ref = c->ref;
      counted_remove(&s->counted, c);
    } else {
      c->retired = 1;
    }
  }
  pthread_mutex_unlock(&s->counted_lock);
  // Out of the table first: no session thread can read the bytes once their reference goes.
  if (ref != NULL) napi_delete_reference(env, ref);
  return number(env, open);
}

// replyBuf(session, id, bytes)
static napi_value js_reply_buf(napi_env env, napi_callback_info info) {
  REPLY_PROLOGUE(3);
  void *data = NULL;
  size_t length = 0;
  napi_typedarray_type type;
  if (napi_get_typedarray_info(env, argv[2], &type, &length, &data, NULL, NULL) != napi_ok || type != napi_uint8_array) {
    fuse_reply_err(req, EIO);
    napi_throw_type_error(env, NULL, "expected a Uint8Array");
    return NULL;
  }
  fuse_reply_buf(req, data, length);
  return boolean(env, 1);
}

// replyXattrSize(session, id, size): the answer to a getxattr/listxattr size probe
static napi_value js_reply_xattr_size(napi_env env, napi_callback_info info) {
  REPLY_PROLOGUE(3);
  fuse_reply_xattr(req, (size_t)double_arg(env, argv[2]));
  return boolean(env, 1);
}

// replyStatfs(session, id, Float64Array[bsize, frsize, blocks, bfree, bavail, files, ffree, favail, fsid, flag, namemax])
static napi_value js_reply_statfs(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  double *a;
  int thrown;
  fuse_req_t req = take_with_fields(env, info, 3, argv, &a, 11, &thrown);
  if (req == NULL) return thrown ? NULL : boolean(env, 0);
  struct statvfs st;
  memset(&st, 0, sizeof st);
  st.f_bsize = (unsigned long)a[0];
  st.f_frsize = (unsigned long)a[1];
  st.f_blocks = (fsblkcnt_t)a[2];
  st.f_bfree = (fsblkcnt_t)a[3];
  st.f_bavail = (fsblkcnt_t)a[4];
  st.f_files = (fsfilcnt_t)a[5];
  st.f_ffree = (fsfilcnt_t)a[6];
  st.f_favail = (fsfilcnt_t)a[7];
  st.f_fsid = (unsigned long)a[8];
  st.f_flag = (unsigned long)a[9];
  st.f_namemax = (unsigned long)a[10];
  fuse_reply_statfs(req, &st);
  return boolean(env, 1);
}

struct js_names {
  napi_env env;
  napi_value names;
  const double *attrs;
  char name[1024];
};

static const char *js_name(void *context, uint32_t i) {
  struct js_names *c = context;
  napi_value item;
  size_t length;
  if (napi_get_element(c->env, c->names, i, &item) != napi_ok || napi_get_value_string_utf8(c->env, item, c->name, sizeof c->name, &length) != napi_ok) return NULL;
  return c->name;
}

static const double *js_fields(void *context, uint32_t i) { return ((struct js_names *)context)->attrs + (size_t)i * A_FIELDS; }

// replyDirectory(session, id, plus, maxBytes, firstOffset, names: string[], attrs: Float64Array
// (A_FIELDS per name, timeouts included)) -> how many entries fit (those, and only those,
// count as looked up when plus is set).
static napi_value js_reply_directory(napi_env env, napi_callback_info info) {
  napi_value argv[7];
  struct session *s;
  double *a;
  size_t n;
  if (!get_args(env, info, 7, argv, &s) || !attrs_arg(env, argv[6], &a, &n)) return NULL;
  if (s->closed) return number(env, -1);
  uint32_t count;
  if (napi_get_array_length(env, argv[5], &count) != napi_ok || (size_t)count * A_FIELDS > n) {
    napi_throw_range_error(env, NULL, "names and attributes disagree");
    return NULL;
  }
  fuse_req_t req = slot_take(s, double_arg(env, argv[1]));
  if (req == NULL) return number(env, -1);
  bool plus;
  napi_get_value_bool(env, argv[2], &plus);
  size_t max_bytes = (size_t)double_arg(env, argv[3]);
  double first = double_arg(env, argv[4]);
  char *buffer = malloc(max_bytes ? max_bytes : 1);
  if (buffer == NULL) {
    fuse_reply_err(req, ENOMEM);
    return number(env, 0);
  }
  struct js_names names = {.env = env, .names = argv[5], .attrs = a};
  struct dirent_source source = {count, js_name, js_fields, &names};
  size_t used;
  uint32_t added = pack_dirents(req, buffer, max_bytes, plus, (off_t)first, &source, &used);
  fuse_reply_buf(req, buffer, used);
  free(buffer);
  return number(env, added);
}

// tableLimit(session, entries): the most names the table keeps (0: none; the least recently used
// directories go first).
static napi_value js_table_limit(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  struct session *s;
  if (!get_args(env, info, 2, argv, &s)) return NULL;
  double entries = double_arg(env, argv[1]);
  pthread_mutex_lock(&s->table_lock);
  if (s->table) table_set_limit(s->table, entries > 0 ? (size_t)entries : 0);
  int set = s->table != NULL;
  pthread_mutex_unlock(&s->table_lock);
  return boolean(env, set);
}

/** Copies the string at `array`[i] into a new allocation (*out; NULL for undefined or null when `optional`); 0 on failure. */
static int string_element(napi_env env, napi_value array, uint32_t i, int optional, char **out) {
  napi_value item;
  napi_valuetype kind;
  size_t length;
  *out = NULL;
  if (napi_get_element(env, array, i, &item) != napi_ok || napi_typeof(env, item, &kind) != napi_ok) return 0;
  if (optional && (kind == napi_undefined || kind == napi_null)) return 1;
  return napi_get_value_string_utf8(env, item, NULL, 0, &length) == napi_ok && (*out = malloc(length + 1)) != NULL &&
         napi_get_value_string_utf8(env, item, *out, length + 1, &length) == napi_ok;
}

// tablePut(session, dir, whole, names: string[], attrs: Float64Array (A_FIELDS per name,
// timeouts included; mode 0: listed only)[, copies: (string | undefined)[], digests: Uint8Array
// (32 bytes per name)]) -> false when nothing was kept (unmounted, out of memory). whole: the
// complete listing, "." and ".." first, replacing what the table held. copies: per name, the path
// of a local copy of the file's version the addon may open, read whole and hash to its digest.
static napi_value js_table_put(napi_env env, napi_callback_info info) {
  napi_value argv[7];
  struct session *s;
  double *a;
  size_t n;
  if (!get_args_between(env, info, 5, 7, argv, &s) || !attrs_arg(env, argv[4], &a, &n)) return NULL;
  uint32_t count;
  if (napi_get_array_length(env, argv[3], &count) != napi_ok || (size_t)count * A_FIELDS > n) {
    napi_throw_range_error(env, NULL, "names and attributes disagree");
    return NULL;
  }
  napi_valuetype copies_kind;
  napi_typeof(env, argv[5], &copies_kind);
  int with_copies = copies_kind != napi_undefined;
  const unsigned char *digests = NULL;
  if (with_copies) {
    uint32_t copies_count;
    napi_typedarray_type type;
    size_t digest_bytes;
    void *data;
    if (napi_get_array_length(env, argv[5], &copies_count) != napi_ok || copies_count != count ||
        napi_get_typedarray_info(env, argv[6], &type, &digest_bytes, &data, NULL, NULL) != napi_ok || type != napi_uint8_array ||
        digest_bytes != (size_t)count * TABLE_DIGEST_BYTES) {
      napi_throw_range_error(env, NULL, "names, copies and digests disagree");
      return NULL;
    }
    digests = data;
  }
  if (s->closed) return boolean(env, 0);
  bool whole;
  napi_get_value_bool(env, argv[2], &whole);
  char **names = calloc(count ? count : 1, sizeof *names);
  char **copies = with_copies ? calloc(count ? count : 1, sizeof *copies) : NULL;
  int ok = names != NULL && (!with_copies || copies != NULL);
  for (uint32_t i = 0; ok && i < count; i++) {
    ok = string_element(env, argv[3], i, 0, &names[i]) && (!with_copies || string_element(env, argv[5], i, 1, &copies[i]));
  }
  if (ok) {
    pthread_mutex_lock(&s->table_lock);
    ok = s->table != NULL &&
         table_put_copies(s->table, (uint64_t)double_arg(env, argv[1]), whole, count, (const char *const *)names, a, (const char *const *)copies, digests) == 0;
    pthread_mutex_unlock(&s->table_lock);
  }
  for (uint32_t i = 0; i < count; i++) {
    if (names != NULL) free(names[i]);
    if (copies != NULL) free(copies[i]);
  }
  free(names);
  free(copies);
  return boolean(env, ok);
}

// copyLimits(session, fileBytes, totalBytes) -> whether the addon can open copies (it can hash and
// is mounted): the largest copy it reads, and the bytes its open copies may hold together (0: none).
static napi_value js_copy_limits(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  struct session *s;
  if (!get_args(env, info, 3, argv, &s)) return NULL;
  double file = double_arg(env, argv[1]), total = double_arg(env, argv[2]);
  int able = !s->closed && copy_hashing_available();
  pthread_mutex_lock(&s->counted_lock);
  s->copy_file_limit_bytes = able && file > 0 ? (size_t)file : 0;
  s->copy_limit_bytes = able && total > 0 ? (size_t)total : 0;
  pthread_mutex_unlock(&s->counted_lock);
  return boolean(env, able);
}

// tableDrop(session, dir) -> whether the table held names in it. Made before the kernel is told
// of a change: a reply from them either reached the kernel already or is not sent.
static napi_value js_table_drop(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  struct session *s;
  if (!get_args(env, info, 2, argv, &s)) return NULL;
  pthread_mutex_lock(&s->table_lock);
  int dropped = s->table != NULL && table_drop(s->table, (uint64_t)double_arg(env, argv[1]));
  pthread_mutex_unlock(&s->table_lock);
  return boolean(env, dropped);
}

// tableLookups(session) -> undefined, or the lookups answered from the table since the last call,
// oldest first: { names: string[], fields: Float64Array } with (parent, times, A_FIELDS
// attributes) per name.
static napi_value js_table_lookups(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  struct session *s;
  if (!get_args(env, info, 1, argv, &s)) return NULL;
  pthread_mutex_lock(&s->table_lock);
  struct table_lookup *head = s->table ? table_take_lookups(s->table) : NULL;
  pthread_mutex_unlock(&s->table_lock);
  napi_value result;
  if (head == NULL) {
    napi_get_undefined(env, &result);
    return result;
  }
  uint32_t count = 0;
  for (struct table_lookup *l = head; l != NULL; l = l->next) count++;
  const size_t per = 2 + A_FIELDS;
  napi_value names, buffer, fields;
  void *data;
  napi_create_object(env, &result);
  napi_create_array_with_length(env, count, &names);
  napi_status status = napi_create_arraybuffer(env, (size_t)count * per * sizeof(double), &data, &buffer);
  if (status == napi_ok) status = napi_create_typedarray(env, napi_float64_array, (size_t)count * per, buffer, 0, &fields);
  uint32_t i = 0;
  for (struct table_lookup *l = head, *next; l != NULL; l = next, i++) {
    next = l->next;
    if (status == napi_ok) {
      double *out = (double *)data + (size_t)i * per;
      out[0] = (double)l->parent;
      out[1] = (double)l->times;
      memcpy(out + 2, l->attrs, sizeof l->attrs);
      napi_value name;
      napi_create_string_utf8(env, l->name, NAPI_AUTO_LENGTH, &name);
      napi_set_element(env, names, i, name);
    }
    free(l);
  }
  if (status != napi_ok) {
    napi_throw_error(env, "ENOMEM", "cannot hand the lookups over");
    return NULL;
  }
  napi_set_named_property(env, result, "names", names);
  napi_set_named_property(env, result, "fields", fields);
  return result;
}

// notifyInvalEntry(session, parent, name) / notifyInvalInode(session, ino, offset, length):
// queued for the notifier thread; never called from a request handler.
static napi_value js_notify_inval_entry(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  struct session *s;
  if (!get_args(env, info, 3, argv, &s)) return NULL;
  if (s->closed) return boolean(env, 0);
  char name[1024];
  size_t length;
  if (napi_get_value_string_utf8(env, argv[2], name, sizeof name, &length) != napi_ok) return NULL;
  struct job *job = calloc(1, sizeof *job);
  if (job == NULL || (job->name = strdup(name)) == NULL) {
    free(job);
    return boolean(env, 0);
  }
  job->kind = JOB_INVAL_ENTRY;
  job->ino = (uint64_t)double_arg(env, argv[1]);
  job_push(s, job);
  return boolean(env, 1);
}

// notifyBarrier(session, token): OP_NOTIFIED with fh = token once the notifier has sent every
// notification queued before it.
static napi_value js_notify_barrier(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  struct session *s;
  if (!get_args(env, info, 2, argv, &s)) return NULL;
  if (s->closed) return boolean(env, 0);
  struct job *job = calloc(1, sizeof *job);
  if (job == NULL) return boolean(env, 0);
  job->kind = JOB_BARRIER;
  job->id = double_arg(env, argv[1]);
  job_push(s, job);
  return boolean(env, 1);
}

static napi_value js_notify_inval_inode(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  struct session *s;
  if (!get_args(env, info, 4, argv, &s)) return NULL;
  if (s->closed) return boolean(env, 0);
  struct job *job = calloc(1, sizeof *job);
  if (job == NULL) return boolean(env, 0);
  job->kind = JOB_INVAL_INODE;
  job->ino = (uint64_t)double_arg(env, argv[1]);
  job->off = (int64_t)double_arg(env, argv[2]);
  job->len = (int64_t)double_arg(env, argv[3]);
  job_push(s, job);
  return boolean(env, 1);
}

// stats(session) -> { outstanding, notifications, pendingNotifications, the counted opens' and the
// table's counts }
static napi_value js_stats(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  struct session *s;
  if (!get_args(env, info, 1, argv, &s)) return NULL;
  napi_value result;
  napi_create_object(env, &result);
  pthread_mutex_lock(&s->lock);
  double outstanding = (double)s->outstanding;
  pthread_mutex_unlock(&s->lock);
  pthread_mutex_lock(&s->jobs_lock);
  double notifications = (double)s->notifications, pending = 0;
  for (struct job *job = s->jobs_head; job != NULL; job = job->next) pending++;
  pthread_mutex_unlock(&s->jobs_lock);
  napi_set_named_property(env, result, "outstanding", number(env, outstanding));
  napi_set_named_property(env, result, "notifications", number(env, notifications));
  napi_set_named_property(env, result, "pendingNotifications", number(env, pending));
  pthread_mutex_lock(&s->counted_lock);
  double counted = (double)s->counted.count, opens = (double)s->opens_answered, releases = (double)s->releases_answered, reads = (double)s->reads_answered;
  double copy_opens = (double)s->copy_opens, copy_refusals = (double)s->copy_refusals, copy_inodes = (double)s->copies.count, copy_bytes = (double)s->copy_bytes;
  pthread_mutex_unlock(&s->counted_lock);
  napi_set_named_property(env, result, "copyOpensAnswered", number(env, copy_opens));
  napi_set_named_property(env, result, "copyRefusals", number(env, copy_refusals));
  napi_set_named_property(env, result, "copyInodes", number(env, copy_inodes));
  napi_set_named_property(env, result, "copyBytes", number(env, copy_bytes));
  napi_set_named_property(env, result, "countedInodes", number(env, counted));
  napi_set_named_property(env, result, "opensAnswered", number(env, opens));
  napi_set_named_property(env, result, "releasesAnswered", number(env, releases));
  napi_set_named_property(env, result, "readsAnswered", number(env, reads));
  pthread_mutex_lock(&s->table_lock);
  struct table_stats table = {0};
  if (s->table) table_stats(s->table, &table);
  double lookups = (double)s->lookups_answered, getattrs = (double)s->getattrs_answered, readdirs = (double)s->readdirs_answered;
  pthread_mutex_unlock(&s->table_lock);
  napi_set_named_property(env, result, "lookupsAnswered", number(env, lookups));
  napi_set_named_property(env, result, "getattrsAnswered", number(env, getattrs));
  napi_set_named_property(env, result, "readdirsAnswered", number(env, readdirs));
  napi_set_named_property(env, result, "tableDirectories", number(env, (double)table.directories));
  napi_set_named_property(env, result, "tableEntries", number(env, (double)table.entries));
  napi_set_named_property(env, result, "tableLimit", number(env, (double)table.limit));
  napi_set_named_property(env, result, "tablePeakEntries", number(env, (double)table.peak_entries));
  napi_set_named_property(env, result, "tableEvictions", number(env, (double)table.evicted_directories));
  napi_set_named_property(env, result, "lookupsPending", number(env, (double)table.pending));
  return result;
}

static napi_value init_module(napi_env env, napi_value exports) {
  fuse_set_log_func(log_func);
  const struct {
    const char *name;
    napi_callback fn;
  } functions[] = {
    {"mount", js_mount},
    {"unmount", js_unmount},
    {"replyErr", js_reply_err},
    {"replyEntry", js_reply_entry},
    {"replyAttr", js_reply_attr},
    {"replyOpen", js_reply_open},
    {"replyOpenCounted", js_reply_open_counted},
    {"retireOpens", js_retire_opens},
    {"replyBuf", js_reply_buf},
    {"replyXattrSize", js_reply_xattr_size},
    {"replyStatfs", js_reply_statfs},
    {"replyDirectory", js_reply_directory},
    {"notifyInvalEntry", js_notify_inval_entry},
    {"notifyInvalInode", js_notify_inval_inode},
    {"notifyBarrier", js_notify_barrier},
    {"tableLimit", js_table_limit},
    {"tablePut", js_table_put},
    {"tableDrop", js_table_drop},
    {"tableLookups", js_table_lookups},
    {"copyLimits", js_copy_limits},
    {"stats", js_stats},
    {"closeOnExecAll", js_close_on_exec_all},
  };
  for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
    napi_value fn;
    napi_create_function(env, functions[i].name, NAPI_AUTO_LENGTH, functions[i].fn, NULL, &fn);
    napi_set_named_property(env, exports, functions[i].name, fn);
  }
  napi_value capabilities;
  napi_create_object(env, &capabilities);
  const struct {
    const char *name;
    unsigned value;
  } caps[] = {
    {"ASYNC_READ", FUSE_CAP_ASYNC_READ},
    {"AUTO_INVAL_DATA", FUSE_CAP_AUTO_INVAL_DATA},
    {"READDIRPLUS", FUSE_CAP_READDIRPLUS},
    {"READDIRPLUS_AUTO", FUSE_CAP_READDIRPLUS_AUTO},
    {"NO_OPEN_SUPPORT", FUSE_CAP_NO_OPEN_SUPPORT},
    {"NO_OPENDIR_SUPPORT", FUSE_CAP_NO_OPENDIR_SUPPORT},
    {"PARALLEL_DIROPS", FUSE_CAP_PARALLEL_DIROPS},
    {"EXPLICIT_INVAL_DATA", FUSE_CAP_EXPLICIT_INVAL_DATA},
    {"EXPORT_SUPPORT", FUSE_CAP_EXPORT_SUPPORT},
    {"POSIX_LOCKS", FUSE_CAP_POSIX_LOCKS},
    {"FLOCK_LOCKS", FUSE_CAP_FLOCK_LOCKS},
    {"WRITEBACK_CACHE", FUSE_CAP_WRITEBACK_CACHE},
  };
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) napi_set_named_property(env, capabilities, caps[i].name, number(env, caps[i].value));
  napi_set_named_property(env, exports, "capabilities", capabilities);
  napi_value ops_object;
  napi_create_object(env, &ops_object);
  const char *op_names[] = {NULL, "INIT", "LOOKUP", "FORGET", "GETATTR", "OPEN", "READ", "RELEASE", "OPENDIR", "READDIR", "READDIRPLUS", "RELEASEDIR", "STATFS", "GETXATTR", "LISTXATTR", "EXIT", "DRAINED", "NOTIFIED", "LOOKUPS"};
  for (int i = 1; i <= OP_LOOKUPS; i++) napi_set_named_property(env, ops_object, op_names[i], number(env, i));
  napi_set_named_property(env, exports, "ops", ops_object);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init_module)
