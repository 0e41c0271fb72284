// forward.c: the dispatch and the forward to JS. Each libfuse handler (ll_*) tries the addon's own
// answers first (table_replies.c, counted_opens.c) and otherwise hands the request to JS through
// the threadsafe function without waiting: JS answers it later through its slot (binding.c). Also
// the notices JS gets that need no reply (FORGET, DRAINED, LOOKUPS, INIT). Lock order: session.h.
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

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

void forward(fuse_req_t req, int op, fuse_ino_t ino, const char *name, uint64_t fh, int64_t off, uint64_t size) {
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
  // The protocol the kernel speaks, for --verbose and doctor's reader: major in the high 16 bits.
  r->size = ((uint64_t)conn->proto_major << 16) | conn->proto_minor;
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

void post_drained(struct session *s, fuse_ino_t ino, uint64_t fh, uint32_t gen, napi_ref ref) {
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

const struct fuse_lowlevel_ops request_ops = {
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

