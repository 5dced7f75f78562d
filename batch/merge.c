/*
 * merge.c -- batch directories across machines (batch.h): the shard of
 * an item id (`fuseplan batch --shard K/N`), and the merge of several
 * shard directories into one dataset (`fuseplan batch merge`).
 *
 * A merge checks every id first and writes nothing when two item records
 * of one id differ (but for their timing fields); then it copies the files byte
 * for byte (a plan stays the same .gz bytes), each atomically, the item record
 * last (its commit, as in a batch), so an interrupted merge leaves OUT with
 * whole items only, and a rerun completes it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch/batch.h"
#include "model/io.h"

int32_t fp_batch_shard_of(const char *id, int32_t n) {
  uint64_t v = 0;
  for (int i = 0; i < 16 && id[i]; i++) {
    char c = id[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                   : 0;
    v = v << 4 | (uint64_t)d;
  }
  return n > 0 ? (int32_t)(v % (uint64_t)n) + 1 : 1;
}

/* The bytes of the file at path, as they are (no decompression), into
 * *data (free()); FP_EIO when it cannot be read, FP_ENOMEM. */
static fp_status read_raw(const char *path, char **data, size_t *len,
                          fp_error *err) {
  FILE *f = fopen(path, "rb");
  size_t cap = 1 << 16;
  *data = NULL;
  *len = 0;
  if (!f)
    return fp_error_set(err, FP_EIO, "%s: %s", path, strerror(errno));
  char *buf = malloc(cap);
  for (size_t k; buf && (k = fread(buf + *len, 1, cap - *len, f)) > 0;) {
    *len += k;
    char *grown = *len == cap ? realloc(buf, cap *= 2) : buf;
    if (!grown)
      free(buf);
    buf = grown;
  }
  bool bad = ferror(f);
  fclose(f);
  if (!buf)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  if (bad) {
    free(buf);
    return fp_error_set(err, FP_EIO, "%s: read error", path);
  }
  *data = buf;
  return FP_OK;
}

/* Whether the item records at a and b are the same but for their timing
 * fields (fp_batch_records_same). */
static bool same_record(const char *a, const char *b) {
  char *x = NULL, *y = NULL;
  size_t nx = 0, ny = 0;
  bool same = fp_file_read_all(a, &x, &nx, NULL) == FP_OK &&
              fp_file_read_all(b, &y, &ny, NULL) == FP_OK &&
              fp_batch_records_same(x, nx, y, ny);
  free(x);
  free(y);
  return same;
}

/* Copies file DIR/<rel> to OUT/<rel> byte for byte and atomically (a
 * temporary name in OUT/tmp, then rename); a missing source is no file
 * to copy. */
static fp_status copy_file(const char *dir, const char *out, const char *rel,
                           fp_error *err) {
  char src[4200], dst[4200], tmp[4300], *data = NULL;
  size_t len = 0;
  snprintf(src, sizeof src, "%s/%s", dir, rel);
  snprintf(dst, sizeof dst, "%s/%s", out, rel);
  FILE *probe = fopen(src, "rb");
  if (!probe)
    return FP_OK;
  fclose(probe);
  fp_status st = read_raw(src, &data, &len, err);
  const char *base = strrchr(rel, '/');
  snprintf(tmp, sizeof tmp, "%s/tmp/%s.merge", out, base ? base + 1 : rel);
  if (st == FP_OK)
    st = fp_file_write_atomic(tmp, data, len, err); /* no .gz: raw */
  if (st == FP_OK && rename(tmp, dst) != 0)
    st = fp_error_set(err, FP_EIO, "%s: %s", dst, strerror(errno));
  free(data);
  return st;
}

/* One item record found in one directory. */
typedef struct found {
  char id[65];
  int32_t dir; /* index into dirs; n_dirs: OUT itself */
} found;

static int cmp_found(const void *a, const void *b) {
  const found *x = a, *y = b;
  int c = strcmp(x->id, y->id);
  return c ? c : (x->dir > y->dir) - (x->dir < y->dir);
}

/* Whether item id of dir is valid (fp_batch_record_load); a warning
 * when it is not. */
static bool valid_item(const char *dir, const char *id, fp_batch_warn_fn warn,
                       void *ctx) {
  char msg[FP_ERROR_MSG_MAX + 32];
  fp_error e;
  fp_batch_record *rec = malloc(sizeof *rec);
  fp_error_clear(&e);
  bool ok = rec && fp_batch_record_load(dir, id, rec, &e) == FP_OK;
  free(rec);
  if (!ok && warn) {
    snprintf(msg, sizeof msg, "%s: not merged", rec ? e.msg : "out of memory");
    warn(msg, ctx);
  }
  return ok;
}

/* Every valid item (fp_batch_record_load) of dirs[0..n) and of OUT (as
 * dir n), sorted by id, into *all (free()); a bad one is left out with a
 * warning. */
static fp_status find_all(const char *const *dirs, int32_t n, const char *out,
                          fp_batch_warn_fn warn, void *ctx, found **all,
                          int32_t *n_all, fp_error *err) {
  fp_status st = FP_OK;
  size_t cap = 0;
  *all = NULL;
  *n_all = 0;
  for (int32_t d = 0; d <= n && st == FP_OK; d++) {
    char **ids = NULL;
    int32_t k = 0;
    st = fp_batch_list_ids(d < n ? dirs[d] : out, &ids, &k, err);
    if (st == FP_OK && (size_t)(*n_all + k) > cap) {
      cap = (size_t)(*n_all + k) * 2;
      found *grown = realloc(*all, cap * sizeof *grown);
      if (!grown)
        st = fp_error_set(err, FP_ENOMEM, "out of memory");
      else
        *all = grown;
    }
    for (int32_t i = 0; i < k; i++) {
      if (st == FP_OK && valid_item(d < n ? dirs[d] : out, ids[i], warn, ctx)) {
        snprintf((*all)[*n_all].id, 65, "%s", ids[i]);
        (*all)[(*n_all)++].dir = d;
      }
      free(ids[i]);
    }
    free(ids);
  }
  if (st == FP_OK && *n_all)
    qsort(*all, (size_t)*n_all, sizeof **all, cmp_found);
  return st;
}

/* FP_EINPUT when two records of one id differ. */
static fp_status check_collisions(const char *const *dirs, int32_t n,
                                  const char *out, const found *all,
                                  int32_t n_all, fp_error *err) {
  char a[4200], b[4200];
  for (int32_t i = 1; i < n_all; i++) {
    const found *p = &all[i - 1], *q = &all[i];
    if (strcmp(p->id, q->id) != 0)
      continue;
    const char *da = p->dir < n ? dirs[p->dir] : out;
    const char *db = q->dir < n ? dirs[q->dir] : out;
    snprintf(a, sizeof a, "%s/items/%s.json", da, p->id);
    snprintf(b, sizeof b, "%s/items/%s.json", db, q->id);
    if (!same_record(a, b))
      return fp_error_set(err, FP_EINPUT,
                          "item %s differs between %s and %s: refusing to "
                          "merge",
                          p->id, da, db);
  }
  return FP_OK;
}

/* Copies one item (plan, labels, then its record) from dir to out. */
static fp_status copy_item(const char *dir, const char *out, const char *id,
                           fp_error *err) {
  static const char *const sub[] = {"plans", "labels", "labels", "items"};
  static const char *const ext[] = {".json.gz", ".pairs.csv", ".nodes.csv",
                                    ".json"};
  fp_status st = FP_OK;
  char name[200];
  for (size_t i = 0; i < sizeof sub / sizeof *sub && st == FP_OK; i++) {
    snprintf(name, sizeof name, "%s/%s%s", sub[i], id, ext[i]);
    st = copy_file(dir, out, name, err);
  }
  return st;
}

fp_status fp_batch_merge(const char *const *dirs, int32_t n_dirs,
                         const char *out, fp_batch_warn_fn warn, void *ctx,
                         fp_error *err) {
  found *all = NULL;
  int32_t n_all = 0;
  fp_status st = find_all(dirs, n_dirs, out, warn, ctx, &all, &n_all, err);
  if (st == FP_OK)
    st = check_collisions(dirs, n_dirs, out, all, n_all, err);
  /* The first record of each id, unless OUT (the last) already has it. */
  for (int32_t i = 0; st == FP_OK && i < n_all; i++) {
    bool first = i == 0 || strcmp(all[i - 1].id, all[i].id) != 0;
    bool in_out = false;
    for (int32_t j = i; j < n_all && strcmp(all[j].id, all[i].id) == 0; j++)
      in_out |= all[j].dir == n_dirs;
    if (first && !in_out)
      st = copy_item(dirs[all[i].dir], out, all[i].id, err);
  }
  free(all);
  if (st == FP_OK)
    st = fp_batch_assemble(out, warn, ctx, NULL, NULL, err);
  return st;
}
