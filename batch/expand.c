/*
 * expand.c -- the items of a batch command (expand.h): manifest lines
 * and paths expanded into graph files, cuts and peak limits.
 */
#include "config.h"

#include <errno.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "batch/expand.h"
#include "model/io.h"
#include "model/json.h"
#include "solver/window/cut.h"

struct fp_batch_items {
  fp_batch_item *v;
  int32_t n, cap;
  char **strs; /* the items' strings, each shared by a file's items */
  int32_t n_strs, cap_strs;
  char version[32];
  fp_batch_warn_fn warn;
  void *warn_ctx;
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
  for (int32_t i = 0; i < L->n_strs; i++)
    free(L->strs[i]);
  free(L->strs);
  free(L->v);
  free(L);
}

void fp_batch_items_on_warning(fp_batch_items *L, fp_batch_warn_fn fn,
                               void *ctx) {
  L->warn = fn;
  L->warn_ctx = ctx;
}

/* Passes a one-line warning to L's callback, if any. */
static void warn(const fp_batch_items *L, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void warn(const fp_batch_items *L, const char *fmt, ...) {
  char msg[FP_ERROR_MSG_MAX];
  va_list ap;
  if (!L->warn)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  L->warn(msg, L->warn_ctx);
}

/* A copy of s owned by L ("" is not copied); NULL out of memory. */
static const char *keep(fp_batch_items *L, const char *s) {
  if (!s[0])
    return "";
  if (L->n_strs == L->cap_strs) {
    int32_t cap = L->cap_strs ? 2 * L->cap_strs : 64;
    char **v = realloc(L->strs, (size_t)cap * sizeof *v);
    if (!v)
      return NULL;
    L->strs = v;
    L->cap_strs = cap;
  }
  char *copy = strdup(s);
  if (copy)
    L->strs[L->n_strs++] = copy;
  return copy;
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
    it->peak = spec->peaks[i];
    it->load_error = load_error;
    fp_batch_item_finish(it, L->version);
  }
  return FP_OK;
}

/* The items of the cuts of graph file `path` (loaded whole: a graph
 * that does not load is one error item). */
static fp_status cut_items(fp_batch_items *L, const fp_batch_spec *spec,
                           const fp_batch_item *proto, const char *path,
                           fp_error *err) {
  fp_graph *g = NULL;
  fp_cut *cuts = malloc(((size_t)spec->cut_count + 1) * sizeof *cuts);
  int32_t n = 0;
  fp_status st = FP_OK;
  fp_error e;
  fp_error_clear(&e);
  if (!cuts)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  if (fp_graph_load_file(path, &g, &e) != FP_OK) {
    const char *msg = keep(L, e.msg);
    st = msg ? add_items(L, spec, proto, (fp_cut){0, 0}, msg, err)
             : fp_error_set(err, FP_ENOMEM, "out of memory");
  } else if (fp_cut_choose(g, spec->cut_lo, spec->cut_hi, spec->cut_count,
                           spec->cut_seed, cuts, &n, &e) == FP_OK)
    for (int32_t i = 0; i < n && st == FP_OK; i++)
      st = add_items(L, spec, proto, cuts[i], "", err);
  fp_graph_destroy(g);
  free(cuts);
  return st;
}

/* The items of one graph file: its whole graph, or its cuts.  A path
 * that is not a regular file (a FIFO, a socket, a device) is skipped
 * with a warning, unopened: reading it could wait for ever or never
 * end. */
static fp_status graph_items(fp_batch_items *L, const fp_batch_spec *spec,
                             fp_batch_item *proto, const char *path,
                             const char *where, fp_error *err) {
  char inductor[4096];
  struct stat sb;
  fp_error e;
  fp_error_clear(&e);
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    warn(L, "%s: '%s' is not a regular file: skipped", where, path);
    return FP_OK;
  }
  inductor_beside(path, inductor, sizeof inductor);
  proto->source = keep(L, path);
  proto->inductor = keep(L, inductor);
  if (!proto->source || !proto->inductor)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  if (fp_batch_graph_sha256(path, proto->graph_sha256, &e) != FP_OK) {
    fp_sha256_hex(path, strlen(path), proto->graph_sha256); /* an error item */
    const char *msg = keep(L, e.msg);
    return msg ? add_items(L, spec, proto, (fp_cut){0, 0}, msg, err)
               : fp_error_set(err, FP_ENOMEM, "out of memory");
  }
  if (!spec->cut)
    return add_items(L, spec, proto, (fp_cut){0, 0}, "", err);
  return cut_items(L, spec, proto, path, err);
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
        st = graph_items(L, spec, proto, gl.gl_pathv[i], where, err);
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
      st = graph_items(L, spec, proto, gl.gl_pathv[i], where, err);
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
    st = graph_items(L, spec, proto, path, where, err);
  free(proto);
  return st;
}

/* A manifest being read: what each line needs. */
typedef struct manifest {
  fp_batch_items *L;
  const char *file, *base;
  fp_batch_resolve_fn resolve;
  void *ctx;
  fp_batch_line ln;
  fp_batch_spec spec;
} manifest;

/* Manifest line number `line` (k bytes at s) into M->L. */
static fp_status manifest_line(manifest *M, const char *s, size_t k, int line,
                               fp_error *err) {
  char where[4200];
  size_t skip = 0;
  while (skip < k && strchr(" \t\r", s[skip]))
    skip++;
  if (skip == k || s[skip] == '#') /* blank lines and comments */
    return FP_OK;
  snprintf(where, sizeof where, "%s:%d", M->file, line);
  fp_status st = fp_batch_line_parse(s, k, where, &M->ln, err);
  if (st == FP_OK) {
    memset(&M->spec, 0, sizeof M->spec);
    st = M->resolve(&M->ln, where, &M->spec, M->ctx, err);
  }
  if (st == FP_OK)
    st = fp_batch_items_add_path(M->L, &M->spec, M->ln.graph, M->base, where,
                                 err);
  return st;
}

/* Appends k bytes at s to the line being read (*line, *len of *cap);
 * FP_ELIMIT past FP_BATCH_MAX_LINE. */
static fp_status line_append(char **line, size_t *len, size_t *cap,
                             const char *s, size_t k, const char *where,
                             fp_error *err) {
  if (*len + k > FP_BATCH_MAX_LINE)
    return fp_error_set(err, FP_ELIMIT, "%s: longer than %d bytes", where,
                        FP_BATCH_MAX_LINE);
  if (*len + k + 1 > *cap) {
    size_t want = (*len + k + 1) * 2;
    char *grown = realloc(*line, want);
    if (!grown)
      return fp_error_set(err, FP_ENOMEM, "out of memory");
    *line = grown;
    *cap = want;
  }
  memcpy(*line + *len, s, k);
  *len += k;
  return FP_OK;
}

/* Every line of the open manifest z through manifest_line, read in
 * chunks: one line is held at a time, never the file. */
static fp_status read_lines(manifest *M, gzFile z, fp_error *err) {
  enum { CHUNK = 1 << 16 };
  char *chunk = malloc(CHUNK), *line = NULL, where[4200];
  size_t len = 0, cap = 0;
  uint64_t total = 0, limit = fp_max_input_bytes();
  int k, n = 0, zerr;
  fp_status st = chunk ? FP_OK : fp_error_set(err, FP_ENOMEM, "out of memory");
  while (st == FP_OK && (k = gzread(z, chunk, CHUNK)) > 0) {
    if ((total += (uint64_t)k) > limit)
      st = fp_error_set(err, FP_ELIMIT, "%s: larger than %llu bytes", M->file,
                        (unsigned long long)limit);
    for (const char *s = chunk, *end = chunk + k; st == FP_OK && s < end;) {
      const char *nl = memchr(s, '\n', (size_t)(end - s));
      size_t seg = (size_t)((nl ? nl : end) - s);
      snprintf(where, sizeof where, "%s:%d", M->file, n + 1);
      st = line_append(&line, &len, &cap, s, seg, where, err);
      if (st == FP_OK && nl) {
        st = manifest_line(M, line, len, ++n, err);
        len = 0;
      }
      s += seg + (nl ? 1 : 0);
    }
  }
  const char *why = gzerror(z, &zerr);
  if (st == FP_OK && zerr != Z_OK && zerr != Z_STREAM_END)
    st = fp_error_set(err, FP_EIO, "%s: read error: %s", M->file,
                      zerr == Z_ERRNO ? strerror(errno) : why);
  if (st == FP_OK && len)
    st = manifest_line(M, line, len, ++n, err);
  free(chunk);
  free(line);
  return st;
}

fp_status fp_batch_items_add_manifest(fp_batch_items *L, const char *file,
                                      fp_batch_resolve_fn resolve, void *ctx,
                                      fp_error *err) {
  char base[4096];
  /* Paths in the manifest are relative to its directory. */
  snprintf(base, sizeof base, "%s", file);
  char *slash = strrchr(base, '/');
  if (slash)
    *slash = '\0';
  manifest *M = calloc(1, sizeof *M);
  if (!M)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  M->L = L;
  M->file = file;
  M->base = slash ? base : NULL;
  M->resolve = resolve;
  M->ctx = ctx;
  gzFile z = gzopen(file, "rb");
  fp_status st = z ? read_lines(M, z, err)
                   : fp_error_set(err, FP_EIO, "%s: cannot open: %s", file,
                                  strerror(errno));
  if (z)
    gzclose(z);
  free(M);
  return st;
}
