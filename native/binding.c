// binding.c: the Node-API binding of skills_fuse, a thin addon over libfuse 3's low-level API. It
// decodes each kernel request, hands it to JavaScript without waiting, and encodes the reply
// JavaScript sends later. No policy lives here: what to answer, cache or invalidate is decided in
// TypeScript (src/fuse/lowlevel/). The C guarantees only that every request is answered exactly once.
// This file: the functions JS calls (mount, unmount, the replies, the table, counted opens,
// notifications, stats), the threadsafe function's callback that delivers each request to JS's
// handler, and the module's exports; the only file that uses a napi_env. Where each request is
// answered, the threads and the lock order: session.h.
#include "notify_socket.h"
#include "session.h"
#include "verified_copy.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

// ---- Node-API glue ----------------------------------------------------------------------------

#define CHECK(env, call)                                                  \
  do {                                                                    \
    if ((call) != napi_ok) {                                              \
      napi_throw_error((env), "SKILLS_FUSE", "Node-API call failed: " #call); \
      return NULL;                                                        \
    }                                                                     \
  } while (0)

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


static napi_value boolean(napi_env env, int value) {
  napi_value result;
  napi_get_boolean(env, value, &result);
  return result;
}


// closeOnExecAll(): the same for a mount this addon did not make (the libfuse 2 fallback's).
static napi_value js_close_on_exec_all(napi_env env, napi_callback_info info) {
  (void)info;
  close_on_exec_all();
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  return undefined;
}

// notifyService(socketPath, message) -> 0 or an errno value: one sd_notify datagram.
static napi_value js_notify_service(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char path[128];
  char message[4096];
  size_t path_length = 0, message_length = 0;
  if (argc < 2 || napi_get_value_string_utf8(env, argv[0], path, sizeof path, &path_length) != napi_ok ||
      napi_get_value_string_utf8(env, argv[1], message, sizeof message, &message_length) != napi_ok) {
    napi_throw_type_error(env, NULL, "notifyService(socketPath, message) takes two strings");
    return NULL;
  }
  // A longer one was cut by the copy: refused rather than sent cut.
  if (path_length >= sizeof path - 1 || message_length >= sizeof message - 1) return number(env, EMSGSIZE);
  return number(env, notify_socket_send(path, message, message_length));
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
  log_forget_last();
  napi_value name;
  napi_create_string_utf8(env, "skills_fuse", NAPI_AUTO_LENGTH, &name);
  if (napi_create_threadsafe_function(env, argv[5], NULL, name, 0, 1, s, tsfn_finalize, s, call_js, &s->tsfn) != napi_ok) {
    failure = "cannot create the request queue";
  } else {
    atomic_fetch_add(&s->refs, 1); // held by the tsfn until its finalizer
    s->se = fuse_session_new(&args, &request_ops, sizeof request_ops, s);
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
    log_describe_failure(message, sizeof message, failure);
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

// replyOpenCounted(session, id, ino, fh, flags, answerLater[, bytes[, storeBytes]]) -> the gen of the
// inode's entry that counts this handle (made now if there was none: JS then holds one reference
// for that gen until retireOpens returns 0 or OP_DRAINED names it), or -1 when this open is not
// counted (already answered, unmounted, or out of memory: answered ENOMEM). answerLater: answer
// later opens here (false: count this handle only, as for a version JS is letting go of). bytes:
// the version's bytes, which the entry keeps (a reference) to answer reads of its handles; never
// written to. storeBytes: how many leading bytes of them to put in the kernel's page cache of the
// inode (notify_store) before the reply, so the reader's first reads need no round trip. This runs
// on the JS thread, not the session thread, and the kernel holds no lock of the inode during an open.
static napi_value js_reply_open_counted(napi_env env, napi_callback_info info) {
  napi_value argv[8];
  struct session *s;
  if (!get_args_between(env, info, 6, 8, argv, &s)) return NULL;
  const uint8_t *bytes = NULL;
  size_t length = 0;
  napi_valuetype kind;
  napi_typeof(env, argv[6], &kind);
  int with_bytes = kind != napi_undefined;
  size_t store = 0;
  napi_typeof(env, argv[7], &kind);
  if (kind != napi_undefined) {
    double wanted = double_arg(env, argv[7]);
    store = wanted > 0 ? (size_t)wanted : 0;
  }
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
  if (store > length) store = length;
  if (store > 0 && (flags & 1) != 0) {
    // Best effort: a refusal (the kernel forgot the inode, memory) leaves the reads to READ.
    struct fuse_bufvec page_bytes = FUSE_BUFVEC_INIT(store);
    page_bytes.buf[0].mem = (void *)bytes;
    if (fuse_lowlevel_notify_store(s->se, ino, 0, &page_bytes, 0) == 0) {
      pthread_mutex_lock(&s->counted_lock);
      s->stored_opens++;
      pthread_mutex_unlock(&s->counted_lock);
    }
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

// notifyInvalEntry(session, parent, name), notifyInvalInode(session, ino, offset, length) and
// notifyBarrier(session, token): each one job queued for the notifier thread (never sent from a
// request handler); a barrier comes back as OP_NOTIFIED with fh = token once every job queued
// before it was sent. False when the session is closed or memory is short.
static napi_value queue_notification(napi_env env, napi_callback_info info, size_t argc, enum job_kind kind) {
  napi_value argv[4];
  struct session *s;
  if (!get_args(env, info, argc, argv, &s)) return NULL;
  if (s->closed) return boolean(env, 0);
  char name[1024];
  if (kind == JOB_INVAL_ENTRY) {
    size_t length;
    if (napi_get_value_string_utf8(env, argv[2], name, sizeof name, &length) != napi_ok) return NULL;
  }
  struct job *job = calloc(1, sizeof *job);
  if (job == NULL) return boolean(env, 0);
  job->kind = kind;
  if (kind == JOB_BARRIER) {
    job->id = double_arg(env, argv[1]);
  } else {
    job->ino = (uint64_t)double_arg(env, argv[1]);
  }
  if (kind == JOB_INVAL_INODE) {
    job->off = (int64_t)double_arg(env, argv[2]);
    job->len = (int64_t)double_arg(env, argv[3]);
  }
  if (kind == JOB_INVAL_ENTRY && (job->name = strdup(name)) == NULL) {
    free(job);
    return boolean(env, 0);
  }
  job_push(s, job);
  return boolean(env, 1);
}

static napi_value js_notify_inval_entry(napi_env env, napi_callback_info info) {
  return queue_notification(env, info, 3, JOB_INVAL_ENTRY);
}

static napi_value js_notify_inval_inode(napi_env env, napi_callback_info info) {
  return queue_notification(env, info, 4, JOB_INVAL_INODE);
}

static napi_value js_notify_barrier(napi_env env, napi_callback_info info) {
  return queue_notification(env, info, 2, JOB_BARRIER);
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
  double stored = (double)s->stored_opens;
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
  napi_set_named_property(env, result, "storedOpens", number(env, stored));
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
    {"notifyService", js_notify_service},
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
