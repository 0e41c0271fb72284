// entry_table: the names and attributes JavaScript pushed for the addon to answer LOOKUP, GETATTR
// and READDIR(PLUS) without a trip to JS. A dumb, bounded store: directories by inode, each with
// the entries JS gave (in listing order), found by (parent, name) and by inode; least recently
// used directories dropped over the entry limit. No libfuse, no Node-API: table_replies.c replies.
// Not thread-safe: every call is made with the caller's lock held.
#ifndef SKILLS_ENTRY_TABLE_H
#define SKILLS_ENTRY_TABLE_H

#include <stddef.h>
#include <stdint.h>

// Field order of the Float64Array JS passes for a node's attributes (replyEntry, replyDirectory,
// tablePut). A directory reply reads each entry's timeouts from its fields too (A_ENTRY_S, A_ATTR_S).
enum { A_INO, A_MODE, A_NLINK, A_UID, A_GID, A_SIZE, A_MTIME_MS, A_ENTRY_S, A_ATTR_S, A_FIELDS };

struct table_dir;

/** Bytes of a SHA-256 digest. */
#define TABLE_DIGEST_BYTES 32

/** One name in a pushed directory. Mode 0: listed only (READDIR shows it; LOOKUP/GETATTR go to JS). */
struct table_entry {
  uint64_t parent;
  struct table_dir *dir;
  double attrs[A_FIELDS];
  // A file JS allowed the addon to open itself: the path of a copy of its version (on local disk),
  // to be read whole and hashed to `digest` on every open (never trusted as it is); NULL: none.
  char *copy;
  unsigned char digest[TABLE_DIGEST_BYTES];
  char name[];
};

struct table_dir {
  uint64_t ino;
  int whole; // the entries are the complete listing, "." and ".." first: READDIR(PLUS) is answered here
  uint32_t count, cap;
  struct table_entry **entries;
  struct table_dir *newer, *older; // recency list
};

/** A lookup the addon answered (the kernel counts it), kept until JS takes it. */
struct table_lookup {
  struct table_lookup *next;
  uint64_t parent;
  uint64_t times;
  double attrs[A_FIELDS];
  char name[];
};

struct table_stats {
  size_t directories, entries, limit, peak_entries, pending;
  uint64_t evicted_directories;
};

struct entry_table;

struct entry_table *table_new(void);
void table_free(struct entry_table *t);
/** At most `entries` names kept (0: none; what is over is dropped, least recently used first). */
void table_set_limit(struct entry_table *t, size_t entries);
/**
 * Names (and their attributes, A_FIELDS each) in directory `dir`. whole: they are the complete
 * listing and replace what was kept; otherwise each name is added or updated. 0, or -1 when out
 * of memory (the directory is then dropped: a missing entry only sends the request to JS).
 */
int table_put(struct entry_table *t, uint64_t dir, int whole, uint32_t count, const char *const *names, const double *attrs);
/**
 * The same, where name i may come with the path of a copy of its version (copies[i], NULL: none)
 * and that version's digest (digests + i * TABLE_DIGEST_BYTES). copies NULL: none has one.
 */
int table_put_copies(struct entry_table *t, uint64_t dir, int whole, uint32_t count, const char *const *names, const double *attrs, const char *const *copies, const unsigned char *digests);
/** Drops the directory's entries; 1 if there were any. */
int table_drop(struct entry_table *t, uint64_t dir);
/** The entry named `name` in `parent` with attributes, or NULL. Marks the directory used. */
const struct table_entry *table_find(struct entry_table *t, uint64_t parent, const char *name);
/** An entry with inode `ino` and attributes (any: one inode has one version's attributes), or NULL. */
const struct table_entry *table_find_ino(struct entry_table *t, uint64_t ino);
/** The directory's complete listing, or NULL. Marks it used. */
const struct table_dir *table_listing(struct entry_table *t, uint64_t dir);
/** Whether the kernel counts a lookup for `e` when a READDIRPLUS gives it (attributes, not "." or ".."). */
int table_counts_lookup(const struct table_entry *e);
/**
 * A record of one lookup of `e`, made before the reply (NULL when out of memory: then let JS
 * answer), so that once the kernel has the reply, table_looked_up cannot fail.
 */
struct table_lookup *table_lookup_new(const struct table_entry *e);
/** The kernel holds the lookup `l` records: kept (or merged into the last one) for JS; returns how many wait. */
size_t table_looked_up(struct entry_table *t, struct table_lookup *l);
/** Hands every waiting lookup over, oldest first (the caller frees each); NULL when none. */
struct table_lookup *table_take_lookups(struct entry_table *t);
void table_stats(const struct entry_table *t, struct table_stats *out);

#endif
