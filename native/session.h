// session.h: what the addon's files share: one mounted session (its threads, locks, request
// slots, the notifier's queue, the counted and copy sets, the entry table) and the functions each
// file offers the others. No Node-API calls are made outside binding.c, none on the JS thread outside it.
//
// The addon answers a kernel request in one of four places, tried in this order by the dispatch
// (forward.c): the table of names and attributes JS pushed (table_replies.c over entry_table.c),
// the opens JS prepared (counted_opens.c), the local copies JS named (counted_opens.c over
// verified_copy.c), and otherwise JS itself (forward.c hands it over; binding.c carries JS's reply).
//
// Threads: the session loop (session.c; reads /dev/fuse and runs every ll_* handler, never blocks
// on JS), the notifier (session.c; kernel invalidations and deferred interrupt replies: a notify
// issued from a request handler, or while the kernel waits on a request of the same inode, would
// deadlock), and the JS thread (binding.c).
//
// Lock order. Each lock protects the fields its comment in struct session names. A thread may take
// a lock only while it holds none of ours, or only the ones listed above it:
//   1. table_lock    the entry table, its tallies. Replies from the table are sent with it held, so
//                    that tableDrop (made before JS queues the kernel's invalidation) waits for them.
//   2. counted_lock  the counted and copy sets, the copies' bytes and bounds, their tallies. Taken
//                    under table_lock only by copy_open; replies from the sets' bytes are sent with it held.
// Leaves, never held while another lock of ours is taken: lock (the request slots, outstanding,
// tearing; js_unmount answers what is left in flight with it held), jobs_lock (the notifier's
// queue), log_lock (libfuse's last message).
// libfuse's own locks come after all of ours: a fuse_reply_* may be sent with any of ours held.
// libfuse calls on_interrupt with its request lock held: it takes jobs_lock and nothing else, and
// nothing of ours calls libfuse with jobs_lock held. No lock of ours is held across a notify (the
// notifier holds none while it calls libfuse), across a post to JS (napi_call_threadsafe_function,
// nonblocking) or across disk I/O (copy_open reads and hashes a copy with no lock held).
#ifndef SKILLS_SESSION_H
#define SKILLS_SESSION_H

#define FUSE_USE_VERSION 312
#define NAPI_VERSION 8
#include <fuse_lowlevel.h>
#include <node_api.h>

#include "entry_table.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>


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
  uint64_t stored_opens; // opens whose bytes went to the page cache before the reply (notify_store)
  // The names and attributes JS pushed. A reply from them is sent with the lock held, so JS's
  // tableDrop (made before it queues the kernel's invalidation) waits for it: the kernel gets
  // such a reply before it is told to drop it.
  pthread_mutex_t table_lock;
  struct entry_table *table; // NULL when unmounted (or out of memory at mount)
  uint64_t lookups_answered, getattrs_answered, readdirs_answered;
};

/** Where a directory reply takes entry i (0: the one at the first offset) from. */
struct dirent_source {
  uint32_t count;
  /** Its name (NULL: stop before it), valid until the next call. */
  const char *(*name)(void *context, uint32_t i);
  /** Its A_FIELDS attributes, timeouts included; mode 0: the name only (no lookup counted). */
  const double *(*fields)(void *context, uint32_t i);
  void *context;
};

// ---- session.c: the session loop, the notifier, request slots, the reply encoders ----------------

/** libfuse's log function: stderr, the last message kept for a mount error. */
void log_func(enum fuse_log_level level, const char *fmt, va_list ap);
/** Forgets libfuse's last message (before a mount). */
void log_forget_last(void);
/** Writes "`failure`: libfuse's last message" (or `failure` alone) into `message`. */
void log_describe_failure(char *message, size_t size, const char *failure);
/** An id JS can hold for `req`, valid until answered once; -1 when tearing down or out of memory. */
double slot_put(struct session *s, fuse_req_t req);
/** The request behind `id`, taken out so nobody answers it again; NULL if already answered. */
fuse_req_t slot_take(struct session *s, double id);
/** Queues a job for the notifier thread (freed there, or here once it stopped). */
void job_push(struct session *s, struct job *job);
/** The notifier thread. */
void *notifier_main(void *arg);
/** The session loop thread. */
void *loop_main(void *arg);
/** A stat from A_FIELDS attributes. */
void fill_stat(struct stat *st, const double *a);
/** An entry reply from A_FIELDS attributes (mode 0: a name without attributes, no lookup counted). */
void fill_entry(struct fuse_entry_param *e, const double *a, double entry_timeout, double attr_timeout);
/** Packs a READDIR(PLUS) reply from `source` into `buffer`; returns how many entries fit, *used the bytes. */
uint32_t pack_dirents(fuse_req_t req, char *buffer, size_t max_bytes, int plus, off_t first, const struct dirent_source *source, size_t *used);
/** Marks every descriptor above stderr close-on-exec. */
void close_on_exec_all(void);
/** Drops one of the session's two references (the JS external, the tsfn); frees it at the last. */
void session_unref(struct session *s);

// ---- forward.c: the dispatch, and requests handed to JS ---------------------------------------

/** libfuse's low-level operations: each tries the addon's own answers, then forwards to JS. */
extern const struct fuse_lowlevel_ops request_ops;
/** Hands a request to JS (answered later through a slot); answers it here when that cannot be done. */
void forward(fuse_req_t req, int op, fuse_ino_t ino, const char *name, uint64_t fh, int64_t off, uint64_t size);
/** Tells JS something that needs no reply (OP_LOOKUPS). */
void post_notice(struct session *s, int op);
/** Tells JS the last kernel handle of a retired counted entry was released (gen, the bytes' reference). */
void post_drained(struct session *s, fuse_ino_t ino, uint64_t fh, uint32_t gen, napi_ref ref);

// ---- counted_opens.c: opens JS prepared, and opens of verified local copies -------------------

/** The entry of `ino`, or NULL. Call with counted_lock held. */
struct counted *counted_find(struct counted_set *set, uint64_t ino);
/** A new entry for `ino` (not present), or NULL when out of memory. Call with counted_lock held. */
struct counted *counted_add(struct session *s, struct counted_set *set, uint64_t ino);
/** Removes an entry. Call with counted_lock held. */
void counted_remove(struct counted_set *set, struct counted *c);
/** An open of `ino` answered here, when JS prepared one: fills `fi`, counts the handle. */
int counted_open(struct session *s, uint64_t ino, struct fuse_file_info *fi);
/** A release of a counted handle (1), or not one of ours (0); *drained and *ref: set when the entry went with it. */
int counted_release(struct session *s, uint64_t ino, uint64_t fh, uint32_t *drained, napi_ref *ref);
/** A read of a counted handle whose bytes JS handed over, answered here (1); 0: not one of those. */
int counted_read(struct session *s, fuse_req_t req, uint64_t ino, uint64_t fh, off_t off, size_t size);
/** An open of `ino` answered from a local copy (1), or 0: JS's. */
int copy_open(struct session *s, fuse_req_t req, uint64_t ino);
/** Releases a handle on a copy: 1 if it was one. */
int copy_release(struct session *s, uint64_t ino, uint64_t fh);
/** A read of a handle on a copy, answered from its bytes. */
void copy_read_reply(struct session *s, fuse_req_t req, uint64_t ino, uint64_t fh, off_t off, size_t size);

// ---- table_replies.c: LOOKUP, GETATTR, READDIR(PLUS) answered from the names JS pushed -----------

/** A LOOKUP answered from the table (1), or 0: not pushed, for JS. */
int table_lookup_reply(struct session *s, fuse_req_t req, fuse_ino_t parent, const char *name);
/** A GETATTR answered from the table (1), or 0. */
int table_getattr_reply(struct session *s, fuse_req_t req, fuse_ino_t ino);
/** A READDIR(PLUS) of a directory pushed whole, answered from the table (1), or 0. */
int table_readdir_reply(struct session *s, fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, int plus);

#endif
