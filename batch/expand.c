/*
 * expand.c -- the items of a batch command (expand.h): manifest lines
 * and paths expanded into graph files, cuts and peak limits.
 */
#include "config.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch/expand.h"
#include "model/io.h"
#include "model/json.h"
#include "solver/cut.h"

struct fp_batch_items {
  fp_batch_item *v;
  int32_t n, cap;
  char version[32];
};

fp_batch_items *fp_batch_items_create(const char *version) {
  fp_batch_items *L = calloc(1, sizeof *L);
  if (L)
    snprintf(L->version, sizeof L->version, "%s", version);
  return L;
}

void fp_batch_items_destroy(fp_batch_items *L) {
  if (!L)
    return;
  free(L->v);
  free(L);
}

const fp_batch_item *fp_batch_items_get(const fp_batch_items *L, int32_t *n) {
  *n = L->n;
  return L->v;
}

void fp_batch_items_keep_shard(fp_batch_items *L, int32_t k, int32_t n) {
  int32_t kept = 0;
  for (int32_t i = 0; i < L->n; i++)
    if (fp_batch_shard_of(L->v[i].id, n) == k)
      L->v[kept++] = L->v[i];
  L->n = kept;
}

/* Whether path names a graph file (not a plan). */
static bool graph_name(const char *path) {
  return (fp_path_has_suffix(path, ".json") ||
          fp_path_has_suffix(path, ".json.gz")) &&
         !strstr(path, ".plan.json");
}

/* The compiler's plan beside graph `path`, when there is one. */
static void inductor_beside(const char *path, char *out, size_t n) {
  char stem[4096];
  struct stat sb;
  snprintf(stem, sizeof stem, "%s", path);
  char *dot = strstr(stem, ".json");
  out[0] = '\0';
  if (!dot)
    return;
  *dot = '\0';
  static const char *const ext[] = {".inductor.plan.json.gz",
                                    ".inductor.plan.json"};
  size_t k = strlen(stem);
  for (int i = 0; i < 2 && !out[0] && k + strlen(ext[i]) < n; i++) {
    memcpy(out, stem, k);
    memcpy(out + k, ext[i], strlen(ext[i]) + 1);
    if (stat(out, &sb) != 0)
      out[0] = '\0';
  }
}

/* A new slot at the end of L; NULL (err set) past the most items or out
 * of memory. */
static fp_batch_item *new_item(fp_batch_items *L, fp_error *err) {
  if (L->n == FP_BATCH_MAX_ITEMS) {
    fp_error_set(err, FP_EINPUT, "more than %d items", FP_BATCH_MAX_ITEMS);
    return NULL;
  }
  if (L->n == L->cap) {
    int32_t cap = L->cap ? 2 * L->cap : 64;
    fp_batch_item *v = realloc(L->v, (size_t)cap * sizeof *v);
    if (!v) {
      fp_error_set(err, FP_ENOMEM, "out of memory");
      return NULL;
    }
    L->v = v;
    L->cap = cap;
  }
  return &L->v[L->n++];
}

/* Adds one item per peak limit of spec for `proto` (its graph) and cut
 * c; `load_error` makes them error items. */
static fp_status add_items(fp_batch_items *L, const fp_batch_spec *spec,
                           const fp_batch_item *proto, fp_cut c,
                           const char *load_error, fp_error *err) {
  for (int32_t i = 0; i < spec->n_peaks; i++) {
    fp_batch_item *it = new_item(L, err);
    if (!it)
      return err ? err->code : FP_ENOMEM;
    *it = *proto;
    it->cut = c;
    it->peak_kind = spec->peak_kind[i];
    it->peak_value = spec->peak_value[i];
    snprintf(it->load_error, sizeof it->load_error, "%s", load_error);
    fp_batch_item_finish(it, L->version);
  }
  return FP_OK;
}

/* The items of one graph file: its whole graph, or its cuts. */
static fp_status graph_items(fp_batch_items *L, const fp_batch_spec *spec,
                             fp_batch_item *proto, const char *path,
                             fp_error *err) {
  fp_error e;
  fp_error_clear(&e);
  snprintf(proto->source, sizeof proto->source, "%s", path);
  inductor_beside(path, proto->inductor, sizeof proto->inductor);
  if (fp_batch_graph_sha256(path, proto->graph_sha256, &e) != FP_OK) {
    fp_sha256_hex(path, strlen(path), proto->graph_sha256); /* an error item */
    return add_items(L, spec, proto, (fp_cut){0, 0}, e.msg, err);
  }
  if (!spec->cut)
    return add_items(L, spec, proto, (fp_cut){0, 0}, "", err);
  fp_graph *g = NULL;
  fp_cut *cuts = malloc(((size_t)spec->cut_count + 1) * sizeof *cuts);
  int32_t n = 0;
  fp_status st = FP_OK;
  if (!cuts)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  if (fp_graph_load_file(path, &g, &e) != FP_OK)
    st = add_items(L, spec, proto, (fp_cut){0, 0}, e.msg, err);
  else if (fp_cut_choose(g, spec->cut_lo, spec->cut_hi, spec->cut_count,
                         spec->cut_seed, cuts, &n, &e) == FP_OK)
    for (int32_t i = 0; i < n && st == FP_OK; i++)
      st = add_items(L, spec, proto, cuts[i], "", err);
  fp_graph_destroy(g);
  free(cuts);
  return st;
}

static int cmp_path(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The graph files of directory `dir`, sorted, each through graph_items. */
static fp_status dir_items(fp_batch_items *L, const fp_batch_spec *spec,
                           fp_batch_item *proto, const char *dir,
                           const char *where, fp_error *err) {
  char pattern[4200];
  glob_t gl;
  fp_status st = FP_OK;
  int found = 0;
  snprintf(pattern, sizeof pattern, "%s/*.json*", dir);
  if (glob(pattern, 0, NULL, &gl) == 0) {
    qsort(gl.gl_pathv, gl.gl_pathc, sizeof *gl.gl_pathv, cmp_path);
    for (size_t i = 0; i < gl.gl_pathc && st == FP_OK; i++)
      if (graph_name(gl.gl_pathv[i]) && ++found)
        st = graph_items(L, spec, proto, gl.gl_pathv[i], err);
    globfree(&gl);
  }
  if (st == FP_OK && !found)
    return fp_error_set(err, FP_EINPUT, "%s: no graph file in directory '%s'",
                        where, dir);
  return st;
}

/* The items of a glob's matches. */
static fp_status glob_items(fp_batch_items *L, const fp_batch_spec *spec,
                            fp_batch_item *proto, const char *path,
                            const char *arg, const char *where, fp_error *err) {
  glob_t gl;
  struct stat sb;
  fp_status st = FP_OK;
  if (glob(path, 0, NULL, &gl) != 0)
    return fp_error_set(err, FP_EINPUT, "%s: '%s': no file matches", where,
                        arg);
  for (size_t i = 0; i < gl.gl_pathc && st == FP_OK; i++)
    if (stat(gl.gl_pathv[i], &sb) == 0 && S_ISDIR(sb.st_mode))
      st = dir_items(L, spec, proto, gl.gl_pathv[i], where, err);
    else if (graph_name(gl.gl_pathv[i]))
      st = graph_items(L, spec, proto, gl.gl_pathv[i], err);
  globfree(&gl);
  return st;
}

fp_status fp_batch_items_add_path(fp_batch_items *L, const fp_batch_spec *spec,
                                  const char *arg, const char *base,
                                  const char *where, fp_error *err) {
  char path[4200];
  struct stat sb;
  fp_batch_item *proto = malloc(sizeof *proto);
  fp_status st = FP_OK;
  if (!proto)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  *proto = spec->proto;
  if (base && arg[0] != '/')
    snprintf(path, sizeof path, "%s/%s", base, arg);
  else
    snprintf(path, sizeof path, "%s", arg);
  if (strpbrk(path, "*?["))
    st = glob_items(L, spec, proto, path, arg, where, err);
  else if (stat(path, &sb) != 0)
    st = fp_error_set(err, FP_EINPUT, "%s: '%s': no such file or directory",
                      where, arg);
  else if (S_ISDIR(sb.st_mode))
    st = dir_items(L, spec, proto, path, where, err);
  else
    st = graph_items(L, spec, proto, path, err);
  free(proto);
  return st;
}

/* One manifest line (k bytes at s, number `line`) into L. */
static fp_status manifest_line(fp_batch_items *L, const char *s, size_t k,
                               const char *where, const char *base,
                               fp_batch_resolve_fn resolve, void *ctx,
                               fp_batch_line *ln, fp_batch_spec *spec,
                               fp_error *err) {
  fp_status st = fp_batch_line_parse(s, k, where, ln, err);
  if (st == FP_OK) {
    memset(spec, 0, sizeof *spec);
    st = resolve(ln, where, spec, ctx, err);
  }
  if (st == FP_OK)
    st = fp_batch_items_add_path(L, spec, ln->graph, base, where, err);
  return st;
}

fp_status fp_batch_items_add_manifest(fp_batch_items *L, const char *file,
                                      fp_batch_resolve_fn resolve, void *ctx,
                                      fp_error *err) {
  char *text = NULL, base[4096], where[4200];
  size_t len = 0;
  fp_status st = fp_file_read_all(file, &text, &len, err);
  if (st != FP_OK)
    return st;
  /* Paths in the manifest are relative to its directory. */
  snprintf(base, sizeof base, "%s", file);
  char *slash = strrchr(base, '/');
  if (slash)
    *slash = '\0';
  int line = 0;
  fp_batch_line *ln = malloc(sizeof *ln);
  fp_batch_spec *spec = malloc(sizeof *spec);
  if (!ln || !spec)
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  for (char *s = text, *nl; st == FP_OK && s && *s; s = nl ? nl + 1 : NULL) {
    nl = strchr(s, '\n');
    size_t k = nl ? (size_t)(nl - s) : strlen(s);
    line++;
    size_t skip = strspn(s, " \t\r");
    if (skip >= k || s[skip] == '#') /* blank lines and comments */
      continue;
    snprintf(where, sizeof where, "%s:%d", file, line);
    st = manifest_line(L, s, k, where, slash ? base : NULL, resolve, ctx, ln,
                       spec, err);
  }
  free(ln);
  free(spec);
  free(text);
  return st;
}
