/*
 * strmap.h -- internal: a string -> int32 hash map for name lookup.
 *
 * Keys are not copied: they must outlive the map (the graph keeps its names
 * in an arena).  Open addressing, linear probing, power-of-two capacity kept
 * at most half full.  A slot holds the key's 64-bit hash next to its value,
 * so a probe costs one cache line and a string is compared only when the
 * hashes match: name lookup dominated loading million-node graphs.
 */
#ifndef FP_STRMAP_H
#define FP_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct fp_strmap_slot {
  uint64_t hash;
  const char *key; /* NULL = empty slot */
  int32_t val;
} fp_strmap_slot;

typedef struct fp_strmap {
  fp_strmap_slot *slots;
  size_t cap; /* 0 or a power of two */
  size_t count;
} fp_strmap;

/* Zeroes the map (no allocation). */
void fp_strmap_init(fp_strmap *m);
/* Frees the map's table (not the keys).  Safe on an initialized map. */
void fp_strmap_free(fp_strmap *m);
/* Returns the value for `key`, or -1. */
int32_t fp_strmap_get(const fp_strmap *m, const char *key);
/* Inserts key -> val.  Returns 0 on success, 1 when the key is already
 * present (the map is unchanged), -1 when out of memory. */
int fp_strmap_put(fp_strmap *m, const char *key, int32_t val);

/* A bump allocator for strings: many small copies, one free. */
typedef struct fp_arena_block fp_arena_block;
typedef struct fp_arena {
  fp_arena_block *head;
} fp_arena;

void fp_arena_init(fp_arena *a);
void fp_arena_free(fp_arena *a);
/* Copies the NUL-terminated `s` into the arena; NULL when out of memory. */
char *fp_arena_strdup(fp_arena *a, const char *s);

#endif /* FP_STRMAP_H */
