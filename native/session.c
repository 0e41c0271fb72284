// session.c: one mounted session's machinery with no policy in it: libfuse's log, the request slots
// (an id JS can hold until the request is answered once), the notifier thread, the session loop,
// and the encoders every reply path shares (attributes, directory entries). Lock order: session.h.
#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// ---- libfuse's log: stderr, and the last message kept for a mount error --------------------

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_log[512];

void log_func(enum fuse_log_level level, const char *fmt, va_list ap) {
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

void log_forget_last(void) {
  pthread_mutex_lock(&log_lock);
  last_log[0] = '\0';
  pthread_mutex_unlock(&log_lock);
}

void log_describe_failure(char *message, size_t size, const char *failure) {
  pthread_mutex_lock(&log_lock);
  snprintf(message, size, "%s%s%s", failure, last_log[0] ? ": " : "", last_log);
  pthread_mutex_unlock(&log_lock);
}

// ---- request slots: an id JS can hold that is valid until answered once -------------------

double slot_put(struct session *s, fuse_req_t req) {
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
fuse_req_t slot_take(struct session *s, double id) {
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

void job_push(struct session *s, struct job *job) {
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

void *notifier_main(void *arg) {
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
// ---- the session loop: never blocks on JS; the eventfd wakes it to stop --------------------

void *loop_main(void *arg) {
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
// ---- reply encoders: attributes, and one directory encoder for JS's replyDirectory and the table's listings

void fill_stat(struct stat *st, const double *a) {
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

void fill_entry(struct fuse_entry_param *e, const double *a, double entry_timeout, double attr_timeout) {
  memset(e, 0, sizeof *e);
  // Mode 0 marks a name sent without attributes: nodeid 0 makes the kernel count no lookup.
  e->ino = a[A_MODE] == 0 ? 0 : (fuse_ino_t)a[A_INO];
  e->generation = 1;
  fill_stat(&e->attr, a);
  e->entry_timeout = entry_timeout;
  e->attr_timeout = attr_timeout;
}

/**
 * Packs a READDIR (plus: READDIRPLUS) reply into `buffer`: entries from `first` on, the kernel's
 * next offset of entry i being first + i + 1, as many as fit in max_bytes. Returns how many;
 * *used: the bytes.
 */
uint32_t pack_dirents(fuse_req_t req, char *buffer, size_t max_bytes, int plus, off_t first, const struct dirent_source *source, size_t *used) {
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
// ---- descriptors and the session's life ---------------------------------------------------------

// Marks every descriptor above stderr close-on-exec. libfuse keeps its end of fusermount3's
// _FUSE_COMMFD socket open for auto_unmount without FD_CLOEXEC: a child spawned later (the
// watchdog, a stdio server) would hold it, and fusermount3 would not see this process die.
void close_on_exec_all(void) {
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

void session_unref(struct session *s) {
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

// A notice for JS with no request behind it (e.g. OP_LOOKUPS: the table answered lookups it
// should hear of); dropped when memory is short, since JS takes them at its next request anyway.
void post_notice(struct session *s, int op) {
  struct request *r = calloc(1, sizeof *r);
  if (r == NULL) return;
  r->op = op;
  r->id = -1;
  if (napi_call_threadsafe_function(s->tsfn, r, napi_tsfn_nonblocking) != napi_ok) free(r);
}
