// entry_table: see entry_table.h. Three open-addressing indexes (linear probing, a power-of-two
// capacity at most half full) over the same entries: directories by inode, entries by (parent,
// name), entries by inode; and a recency list of directories for the limit.
#include "entry_table.h"

#include <stdlib.h>
#include <string.h>

struct ptab {
  void **cells;
  size_t cap, count;
  uint64_t (*hash)(const void *item);
};

struct entry_table {
  struct ptab dirs;  // struct table_dir * by ino
  struct ptab names; // struct table_entry * with attributes, by (parent, name); not "." and ".."
  struct ptab inos;  // struct table_entry * with attributes, by inode (several may share one)
  struct table_dir *newest, *oldest;
  size_t entries, limit, peak;
  uint64_t evicted;
  struct table_lookup *pending_head, *pending_tail;
  size_t pending;
};

// ---- hashing -------------------------------------------------------------------------------

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

static uint64_t name_hash(uint64_t parent, const char *name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) h = (h ^ *c) * 0x100000001b3ull;
  return mix(parent) ^ h;
}

static uint64_t hash_dir(const void *item) { return mix(((const struct table_dir *)item)->ino); }
static uint64_t hash_name(const void *item) {
  const struct table_entry *e = item;
  return name_hash(e->parent, e->name);
}
static uint64_t hash_ino(const void *item) { return mix((uint64_t)((const struct table_entry *)item)->attrs[A_INO]); }

// ---- a pointer set probed by hash ----------------------------------------------------------

static int ptab_grow(struct ptab *t) {
  size_t cap = t->cap ? t->cap * 2 : 64;
  void **cells = calloc(cap, sizeof *cells);
  if (cells == NULL) return -1;
  for (size_t i = 0; i < t->cap; i++) {
    if (t->cells[i] == NULL) continue;
    size_t j = t->hash(t->cells[i]) & (cap - 1);
    while (cells[j] != NULL) j = (j + 1) & (cap - 1);
    cells[j] = t->cells[i];
  }
  free(t->cells);
  t->cells = cells;
  t->cap = cap;
  return 0;
}

static int ptab_add(struct ptab *t, void *item) {
  if ((t->count + 1) * 2 > t->cap && ptab_grow(t) != 0) return -1;
  size_t mask = t->cap - 1, i = t->hash(item) & mask;
  while (t->cells[i] != NULL) i = (i + 1) & mask;
  t->cells[i] = item;
  t->count++;
  return 0;
}

/** Removes `item` (by identity; absent is fine), shifting back the cells its probe sequence covered. */
static void ptab_remove(struct ptab *t, const void *item) {
  if (t->cap == 0) return;
  size_t mask = t->cap - 1, hole = t->hash(item) & mask;
  while (t->cells[hole] != NULL && t->cells[hole] != item) hole = (hole + 1) & mask;
  if (t->cells[hole] == NULL) return;
  t->cells[hole] = NULL;
  t->count--;
  for (size_t i = (hole + 1) & mask; t->cells[i] != NULL; i = (i + 1) & mask) {
    size_t home = t->hash(t->cells[i]) & mask;
    // Move the cell back when the hole lies on its way from home (cyclically) to where it is.
    if (((i - home) & mask) >= ((i - hole) & mask)) {
      t->cells[hole] = t->cells[i];
      t->cells[i] = NULL;
      hole = i;
    }
  }
}

// ---- entries and directories -----------------------------------------------------------------

static int is_dot(const char *name) { return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')); }
static int has_attrs(const struct table_entry *e) { return e->attrs[A_MODE] != 0; }

static struct table_dir *dir_find(const struct entry_table *t, uint64_t ino) {
  if (t->dirs.cap == 0) return NULL;
  size_t mask = t->dirs.cap - 1;
  for (size_t i = mix(ino) & mask; t->dirs.cells[i] != NULL; i = (i + 1) & mask) {
    struct table_dir *d = t->dirs.cells[i];
    if (d->ino == ino) return d;
  }
  return NULL;
}

static struct table_entry *named(const struct entry_table *t, uint64_t parent, const char *name) {
  if (t->names.cap == 0) return NULL;
  size_t mask = t->names.cap - 1;
  for (size_t i = name_hash(parent, name) & mask; t->names.cells[i] != NULL; i = (i + 1) & mask) {
    struct table_entry *e = t->names.cells[i];
    if (e->parent == parent && strcmp(e->name, name) == 0) return e;
  }
  return NULL;
}

static void unlink_dir(struct entry_table *t, struct table_dir *d) {
  if (d->newer) d->newer->older = d->older;
  else t->newest = d->older;
  if (d->older) d->older->newer = d->newer;
  else t->oldest = d->newer;
  d->newer = d->older = NULL;
}

static void touch(struct entry_table *t, struct table_dir *d) {
  if (t->newest == d) return;
  unlink_dir(t, d);
  d->older = t->newest;
  if (t->newest) t->newest->newer = d;
  t->newest = d;
  if (t->oldest == NULL) t->oldest = d;
}

static int index_entry(struct entry_table *t, struct table_entry *e) {
  if (!has_attrs(e)) return 0;
  if (ptab_add(&t->inos, e) != 0) return -1;
  if (!is_dot(e->name) && ptab_add(&t->names, e) != 0) return -1;
  return 0;
}

static void unindex_entry(struct entry_table *t, struct table_entry *e) {
  ptab_remove(&t->inos, e);
  ptab_remove(&t->names, e);
}

static void remove_dir(struct entry_table *t, struct table_dir *d) {
  for (uint32_t i = 0; i < d->count; i++) {
    unindex_entry(t, d->entries[i]);
    free(d->entries[i]->copy);
    free(d->entries[i]);
  }
  t->entries -= d->count;
  free(d->entries);
  unlink_dir(t, d);
  ptab_remove(&t->dirs, d);
  free(d);
}

static struct table_dir *new_dir(struct entry_table *t, uint64_t ino) {
  struct table_dir *d = calloc(1, sizeof *d);
  if (d == NULL) return NULL;
  d->ino = ino;
  if (ptab_add(&t->dirs, d) != 0) {
    free(d);
    return NULL;
  }
  touch(t, d);
  return d;
}

static struct table_entry *append(struct entry_table *t, struct table_dir *d, const char *name, const double *attrs) {
  if (d->count == d->cap) {
    uint32_t cap = d->cap ? d->cap * 2 : 8;
    struct table_entry **entries = realloc(d->entries, cap * sizeof *entries);
    if (entries == NULL) return NULL;
    d->entries = entries;
    d->cap = cap;
  }
  size_t length = strlen(name) + 1;
  struct table_entry *e = malloc(sizeof *e + length);
  if (e == NULL) return NULL;
  e->parent = d->ino;
  e->dir = d;
  e->copy = NULL;
  memcpy(e->attrs, attrs, sizeof e->attrs);
  memcpy(e->name, name, length);
  d->entries[d->count++] = e;
  t->entries++;
  return e;
}

/** `name` in `d` whatever its attributes, or NULL. */
static struct table_entry *entry_in(const struct entry_table *t, const struct table_dir *d, const char *name) {
  struct table_entry *e = is_dot(name) ? NULL : named(t, d->ino, name);
  if (e != NULL) return e;
  // "." and "..", and names listed without attributes, are in no name index.
  for (uint32_t i = 0; i < d->count; i++) {
    if (strcmp(d->entries[i]->name, name) == 0) return d->entries[i];
  }
  return NULL;
}

/** Drops least recently used directories other than `keep` while over the limit; then `keep` too. */
static void evict(struct entry_table *t, struct table_dir *keep) {
  while (t->entries > t->limit && t->oldest != NULL && t->oldest != keep) {
    remove_dir(t, t->oldest);
    t->evicted++;
  }
  // Only one directory is left and it alone is over the limit: it is not kept either.
  if (t->entries > t->limit && keep != NULL) {
    remove_dir(t, keep);
    t->evicted++;
  }
}

// ---- the table ---------------------------------------------------------------------------------

struct entry_table *table_new(void) {
  struct entry_table *t = calloc(1, sizeof *t);
  if (t == NULL) return NULL;
  t->dirs.hash = hash_dir;
  t->names.hash = hash_name;
  t->inos.hash = hash_ino;
  return t;
}

void table_free(struct entry_table *t) {
  if (t == NULL) return;
  while (t->oldest != NULL) remove_dir(t, t->oldest);
  for (struct table_lookup *l = t->pending_head, *next; l != NULL; l = next) {
    next = l->next;
    free(l);
  }
  free(t->dirs.cells);
  free(t->names.cells);
  free(t->inos.cells);
  free(t);
}

void table_set_limit(struct entry_table *t, size_t entries) {
  t->limit = entries;
  evict(t, NULL);
}

int table_put(struct entry_table *t, uint64_t dir, int whole, uint32_t count, const char *const *names, const double *attrs) {
  return table_put_copies(t, dir, whole, count, names, attrs, NULL, NULL);
}

/** Gives `e` the copy (or none), replacing what it had; -1 when out of memory. */
static int set_copy(struct table_entry *e, const char *copy, const unsigned char *digest) {
  free(e->copy);
  e->copy = NULL;
  if (copy == NULL) return 0;
  if ((e->copy = strdup(copy)) == NULL) return -1;
  memcpy(e->digest, digest, TABLE_DIGEST_BYTES);
  return 0;
}

int table_put_copies(struct entry_table *t, uint64_t dir, int whole, uint32_t count, const char *const *names, const double *attrs, const char *const *copies, const unsigned char *digests) {
  if (t->limit == 0) return 0;
  struct table_dir *d = dir_find(t, dir);
  if (d != NULL && whole) {
    remove_dir(t, d);
    d = NULL;
  }
  if (d == NULL && (d = new_dir(t, dir)) == NULL) return -1;
  touch(t, d);
  for (uint32_t i = 0; i < count; i++) {
    const double *fields = attrs + (size_t)i * A_FIELDS;
    struct table_entry *e = whole ? NULL : entry_in(t, d, names[i]);
    if (e != NULL) {
      // The same name again (a newer answer): re-indexed, since its inode may be another.
      unindex_entry(t, e);
      memcpy(e->attrs, fields, sizeof e->attrs);
    } else {
      // A name the complete listing did not have: it is complete no more.
      if (!whole && !is_dot(names[i])) d->whole = 0;
      if ((e = append(t, d, names[i], fields)) == NULL) goto failed;
    }
    // Only a file with attributes is opened: the kernel opens what it looked up.
    const char *copy = copies != NULL && has_attrs(e) ? copies[i] : NULL;
    if (set_copy(e, copy, copy != NULL ? digests + (size_t)i * TABLE_DIGEST_BYTES : NULL) != 0) goto failed;
    if (index_entry(t, e) != 0) goto failed;
  }
  if (whole) d->whole = 1;
  evict(t, d);
  if (t->entries > t->peak) t->peak = t->entries;
  return 0;
failed:
  remove_dir(t, d);
  return -1;
}

int table_drop(struct entry_table *t, uint64_t dir) {
  struct table_dir *d = dir_find(t, dir);
  if (d == NULL) return 0;
  remove_dir(t, d);
  return 1;
}

const struct table_entry *table_find(struct entry_table *t, uint64_t parent, const char *name) {
  struct table_entry *e = named(t, parent, name);
  if (e != NULL) touch(t, e->dir);
  return e;
}

const struct table_entry *table_find_ino(struct entry_table *t, uint64_t ino) {
  if (t->inos.cap == 0) return NULL;
  size_t mask = t->inos.cap - 1;
  for (size_t i = mix(ino) & mask; t->inos.cells[i] != NULL; i = (i + 1) & mask) {
    struct table_entry *e = t->inos.cells[i];
    if ((uint64_t)e->attrs[A_INO] == ino) {
      touch(t, e->dir);
      return e;
    }
  }
  return NULL;
}

const struct table_dir *table_listing(struct entry_table *t, uint64_t dir) {
  struct table_dir *d = dir_find(t, dir);
  if (d == NULL || !d->whole) return NULL;
  touch(t, d);
  return d;
}

int table_counts_lookup(const struct table_entry *e) { return has_attrs(e) && !is_dot(e->name); }

struct table_lookup *table_lookup_new(const struct table_entry *e) {
  size_t length = strlen(e->name) + 1;
  struct table_lookup *l = malloc(sizeof *l + length);
  if (l == NULL) return NULL;
  l->next = NULL;
  l->parent = e->parent;
  l->times = 1;
  memcpy(l->attrs, e->attrs, sizeof l->attrs);
  memcpy(l->name, e->name, length);
  return l;
}

size_t table_looked_up(struct entry_table *t, struct table_lookup *l) {
  struct table_lookup *last = t->pending_tail;
  // The same name again (a stat loop): one record counting both.
  if (last != NULL && last->parent == l->parent && last->attrs[A_INO] == l->attrs[A_INO] && strcmp(last->name, l->name) == 0) {
    last->times += l->times;
    free(l);
    return t->pending;
  }
  l->next = NULL;
  if (last != NULL) last->next = l;
  else t->pending_head = l;
  t->pending_tail = l;
  return ++t->pending;
}

struct table_lookup *table_take_lookups(struct entry_table *t) {
  struct table_lookup *head = t->pending_head;
  t->pending_head = t->pending_tail = NULL;
  t->pending = 0;
  return head;
}

void table_stats(const struct entry_table *t, struct table_stats *out) {
  out->directories = t->dirs.count;
  out->entries = t->entries;
  out->limit = t->limit;
  out->peak_entries = t->peak;
  out->pending = t->pending;
  out->evicted_directories = t->evicted;
}
