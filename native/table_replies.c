// table_replies.c: LOOKUP, GETATTR and READDIR(PLUS) answered from the names and attributes JS
// pushed (entry_table.c keeps them), through the same encoders as JS's replies (session.c). Every
// reply from the table is sent with table_lock held (session.h gives the lock order).
#include "session.h"

#include <stdlib.h>

// ---- pushed names and attributes: LOOKUP, GETATTR, READDIR(PLUS) answered from the table -------
// JS pushes (tablePut) what it resolved and drops it (tableDrop) before it tells the kernel of a
// change; what is not in the table goes to JS. The kernel counts each lookup it is given (a
// LOOKUP, an entry of a READDIRPLUS) and later forgets it, and those counts are JS's: each lookup
// answered here is recorded once the kernel has the reply, for JS to take (tableLookups) before
// it handles any request, FORGET included, so a FORGET never finds a lookup JS has not counted.

/** Keeps a lookup the kernel got; tells JS every LOOKUPS_NOTICE of them. Call with table_lock held. */
static int keep_lookup(struct session *s, struct table_lookup *l) {
  return table_looked_up(s->table, l) % LOOKUPS_NOTICE == 0;
}

/** A LOOKUP answered from the table (1), or 0: not pushed, for JS. */
int table_lookup_reply(struct session *s, fuse_req_t req, fuse_ino_t parent, const char *name) {
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
int table_getattr_reply(struct session *s, fuse_req_t req, fuse_ino_t ino) {
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
int table_readdir_reply(struct session *s, fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, int plus) {
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
