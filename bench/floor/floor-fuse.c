// The benchmark's floor for one FUSE round trip: a libfuse 3 low-level daemon in plain C that
// answers from a fixed table, in one session thread like the addon's: the root (inode 1) and one
// directory in it (inode 2, named on the command line), timeouts 0, the mount options and modes
// skills-mount uses. Built by bench/workloads/round-trip.mjs at bench time, never committed built.
//   floor-fuse MOUNTPOINT NAME     (prints "mounted" on stderr; SIGTERM/SIGINT unmount)
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *child_name;

static void fill(struct stat *st, fuse_ino_t ino) {
  memset(st, 0, sizeof *st);
  st->st_ino = ino;
  st->st_mode = S_IFDIR | 0500;
  st->st_nlink = 2;
  st->st_uid = getuid();
  st->st_gid = getgid();
  st->st_blksize = 4096;
}

static void floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name) {
  if (parent != 1 || strcmp(name, child_name) != 0) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  struct fuse_entry_param e;
  memset(&e, 0, sizeof e);
  e.ino = 2;
  e.generation = 1;
  fill(&e.attr, 2);
  fuse_reply_entry(req, &e); // timeouts 0, as --metadata-ttl 0 gives them
}

static void floor_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi) {
  (void)fi;
  if (ino != 1 && ino != 2) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  struct stat st;
  fill(&st, ino);
  fuse_reply_attr(req, &st, 0);
}

static void floor_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  (void)ino;
  (void)nlookup;
  fuse_reply_none(req);
}

static const struct fuse_lowlevel_ops ops = {.lookup = floor_lookup, .getattr = floor_getattr, .forget = floor_forget};

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: floor-fuse MOUNTPOINT NAME\n");
    return 2;
  }
  child_name = argv[2];
  char *fuse_argv[] = {argv[0], "-o", "ro,nosuid,nodev,noexec,default_permissions,fsname=skills-bench-floor,subtype=skills-bench-floor", NULL};
  struct fuse_args args = FUSE_ARGS_INIT(3, fuse_argv);
  struct fuse_session *se = fuse_session_new(&args, &ops, sizeof ops, NULL);
  if (se == NULL) return 1;
  int status = 1;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, argv[1]) == 0) {
      fprintf(stderr, "mounted %s\n", argv[1]);
      status = fuse_session_loop(se) == 0 ? 0 : 1;
      fuse_session_unmount(se);
    }
    fuse_remove_signal_handlers(se);
  }
  fuse_session_destroy(se);
  return status;
}
