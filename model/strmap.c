/*
 * strmap.c -- string hash map and string arena (see strmap.h).
 */
#include "model/strmap.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a: simple, and good enough for identifier-like keys. */
static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 1099511628211ull;
  }
  return h ^ (h >> 29);
}

void fp_strmap_init(fp_strmap *m) {
  memset(m, 0, sizeof *m);
}

void fp_strmap_free(fp_strmap *m) {
  free(m->slots);
  fp_strmap_init(m);
}

static size_t find_slot(const fp_strmap *m, const char *key, uint64_t h) {
  size_t i = (size_t)h & (m->cap - 1);
  const fp_strmap_slot *s;
  while ((s = &m->slots[i])->key && (s->hash != h || strcmp(s->key, key) != 0))
    i = (i + 1) & (m->cap - 1);
  return i;
}

int32_t fp_strmap_get(const fp_strmap *m, const char *key) {
  if (m->cap == 0)
    return -1;
  const fp_strmap_slot *s = &m->slots[find_slot(m, key, hash_str(key))];
  return s->key ? s->val : -1;
}

/* Rehashes into a table of `cap` slots by the stored hashes (no string is
 * read).  Returns -1 when out of memory (the old table is kept). */
static int grow(fp_strmap *m, size_t cap) {
  fp_strmap_slot *slots = calloc(cap, sizeof *slots);
  if (!slots)
    return -1;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->slots[i].key)
      continue;
    size_t j = (size_t)m->slots[i].hash & (cap - 1);
    while (slots[j].key)
      j = (j + 1) & (cap - 1);
    slots[j] = m->slots[i];
  }
  free(m->slots);
  m->slots = slots;
  m->cap = cap;
  return 0;
}

int fp_strmap_put(fp_strmap *m, const char *key, int32_t val) {
  if ((m->count + 1) * 2 > m->cap && grow(m, m->cap ? m->cap * 2 : 64) != 0)
    return -1;
  uint64_t h = hash_str(key);
  fp_strmap_slot *s = &m->slots[find_slot(m, key, h)];
  if (s->key)
    return 1;
  *s = (fp_strmap_slot){h, key, val};
  m->count++;
  return 0;
}

/* ---- arena ------------------------------------------------------------ */

#define ARENA_BLOCK 65536

struct fp_arena_block {
  fp_arena_block *next;
  size_t used, cap;
  char data[];
};

void fp_arena_init(fp_arena *a) {
  a->head = NULL;
}

void fp_arena_free(fp_arena *a) {
  fp_arena_block *b = a->head;
  while (b) {
    fp_arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
}

char *fp_arena_strdup(fp_arena *a, const char *s) {
  size_t n = strlen(s) + 1;
  fp_arena_block *b = a->head;
  if (!b || b->cap - b->used < n) {
    size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
    b = malloc(sizeof *b + cap);
    if (!b)
      return NULL;
    b->next = a->head;
    b->used = 0;
    b->cap = cap;
    a->head = b;
  }
  char *p = b->data + b->used;
  memcpy(p, s, n);
  b->used += n;
  return p;
}
