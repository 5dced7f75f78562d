/*
 * batch_json.c -- manifest lines and item records of a batch dataset
 * (batch_json.h), read with cJSON and written with the exact writers of
 * json_util.c (byte counts as raw integers).
 */
#include "batch/batch_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/json_util.h"

/* ---- manifest lines ------------------------------------------------------ */

/* Copies a scalar (string or number literal) into out[n]; -1 when it is
 * neither or does not fit. */
static int scalar_text(const cJSON *v, char *out, size_t n) {
  int k;
  if (cJSON_IsString(v))
    k = snprintf(out, n, "%s", v->valuestring);
  else if (cJSON_IsNumber(v) && fp_json_integral(v) && v->valuedouble < 1e17)
    k = snprintf(out, n, "%.0f", v->valuedouble); /* digits, no exponent */
  else if (cJSON_IsNumber(v))
    k = snprintf(out, n, "%.17g", v->valuedouble);
  else
    return -1;
  return k < 0 || (size_t)k >= n ? -1 : 0;
}

/* A scalar, or a list of scalars joined with commas; -1 otherwise. */
static int list_text(const cJSON *v, char *out, size_t n) {
  if (!cJSON_IsArray(v))
    return scalar_text(v, out, n);
  size_t len = 0;
  out[0] = '\0';
  const cJSON *e;
  cJSON_ArrayForEach(e, v) {
    if (len && len + 1 < n)
      out[len++] = ',';
    if (len >= n || scalar_text(e, out + len, n - len) != 0)
      return -1;
    len += strlen(out + len);
  }
  return len ? 0 : -1;
}

/* The cut object: nodes, count, seed. */
static fp_status parse_cut(const cJSON *cut, const char *where,
                           fp_batch_line *out, fp_error *err) {
  if (!cJSON_IsObject(cut))
    return fp_error_set(err, FP_EINPUT, "%s: cut: expected an object", where);
  const cJSON *v;
  cJSON_ArrayForEach(v, cut) {
    char *dst = strcmp(v->string, "nodes") == 0   ? out->cut_nodes
                : strcmp(v->string, "count") == 0 ? out->cut_count
                : strcmp(v->string, "seed") == 0  ? out->cut_seed
                                                  : NULL;
    if (!dst)
      return fp_error_set(err, FP_EINPUT,
                          "%s: cut: unknown key '%s' (nodes, count, seed)",
                          where, v->string);
    if (scalar_text(v, dst, sizeof out->cut_nodes) != 0)
      return fp_error_set(err, FP_EINPUT,
                          "%s: cut.%s: expected a string "
                          "or a number",
                          where, v->string);
  }
  if (!out->cut_nodes[0] || !out->cut_count[0])
    return fp_error_set(err, FP_EINPUT, "%s: cut: needs nodes and count",
                        where);
  return FP_OK;
}

/* Where key `k` of a manifest line goes, and its room; NULL if unknown. */
static char *line_field(fp_batch_line *o, const char *k, size_t *n,
                        bool *list) {
  struct {
    const char *key;
    char *dst;
    size_t n;
    bool list;
  } f[] = {{"graph", o->graph, sizeof o->graph, false},
           {"peak_limit", o->peak_limit, sizeof o->peak_limit, true},
           {"objective", o->objective, sizeof o->objective, false},
           {"traffic_limit", o->traffic_limit, sizeof o->traffic_limit, false},
           {"time_limit", o->time_limit, sizeof o->time_limit, false},
           {"gap", o->gap, sizeof o->gap, false},
           {"gap2", o->gap2, sizeof o->gap2, false},
           {"method", o->method, sizeof o->method, false},
           {"seed", o->seed, sizeof o->seed, false},
           {"compare", o->compare, sizeof o->compare, true}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    if (strcmp(f[i].key, k) == 0) {
      *n = f[i].n;
      *list = f[i].list;
      return f[i].dst;
    }
  return NULL;
}

fp_status fp_batch_line_parse(const char *text, size_t len, const char *where,
                              fp_batch_line *out, fp_error *err) {
  fp_json_doc doc;
  memset(out, 0, sizeof *out);
  fp_status st = fp_json_parse(text, len, where, &doc, err);
  if (st == FP_OK && !cJSON_IsObject(doc.root))
    st = fp_error_set(err, FP_EINPUT, "%s: expected a JSON object", where);
  const cJSON *v;
  if (st == FP_OK)
    cJSON_ArrayForEach(v, doc.root) {
      size_t n;
      bool list;
      char *dst = line_field(out, v->string, &n, &list);
      if (strcmp(v->string, "cut") == 0)
        st = parse_cut(v, where, out, err);
      else if (!dst)
        st = fp_error_set(err, FP_EINPUT,
                          "%s: unknown key '%s' (graph, peak_limit, "
                          "objective, traffic_limit, time_limit, gap, "
                          "gap2, method, seed, compare, cut)",
                          where, v->string);
      else if ((list ? list_text(v, dst, n) : scalar_text(v, dst, n)) != 0)
        st = fp_error_set(err, FP_EINPUT,
                          "%s: %s: expected a string or a number%s", where,
                          v->string, list ? ", or a list of them" : "");
      if (st != FP_OK)
        break;
    }
  if (st == FP_OK && !out->graph[0])
    st = fp_error_set(err, FP_EINPUT, "%s: missing key 'graph'", where);
  fp_json_release(&doc);
  return st;
}

/* ---- item records -------------------------------------------------------- */

void fp_batch_record_init(fp_batch_record *r) {
  memset(r, 0, sizeof *r);
  r->cut_first = r->cut_count = r->nodes = -1;
  r->peak_limit_bytes = r->traffic_limit_bytes = -1;
  r->traffic_bytes = r->peak_bytes = r->kernels = -1;
  r->bound = r->gap = r->time_s = NAN;
  r->proven = -1;
  r->signal = -1;
}

static void put_key(fp_jbuf *b, const char *key) {
  fp_jbuf_printf(b, "%s\"%s\": ", b->len > 1 ? ", " : "", key);
}

static void put_str(fp_jbuf *b, const char *key, const char *v) {
  put_key(b, key);
  if (v[0])
    fp_jbuf_str(b, v);
  else
    fp_jbuf_puts(b, "null");
}

static void put_int(fp_jbuf *b, const char *key, int64_t v) {
  put_key(b, key);
  if (v >= 0)
    fp_jbuf_u64(b, (uint64_t)v);
  else
    fp_jbuf_puts(b, "null");
}

static void put_num(fp_jbuf *b, const char *key, double v) {
  put_key(b, key);
  fp_jbuf_double(b, v);
}

/* "greedy-lowmem" + "_gap" -> "greedy_lowmem_gap". */
static void column(char *out, size_t n, const char *method, const char *what) {
  snprintf(out, n, "%s_%s", method, what);
  for (char *c = out; *c; c++)
    if (*c == '-')
      *c = '_';
}

/* The compared methods' columns. */
static void put_compare(fp_jbuf *b, const fp_batch_record *r) {
  char key[96];
  put_key(b, "compare");
  fp_jbuf_puts(b, "[");
  for (int32_t i = 0; i < r->n_compare; i++) {
    fp_jbuf_puts(b, i ? ", " : "");
    fp_jbuf_str(b, r->compare[i].method);
  }
  fp_jbuf_puts(b, "]");
  for (int32_t i = 0; i < r->n_compare; i++) {
    const fp_batch_compare *c = &r->compare[i];
    column(key, sizeof key, c->method, "traffic_bytes");
    put_int(b, key, c->present ? (int64_t)c->traffic_bytes : -1);
    column(key, sizeof key, c->method, "peak_bytes");
    put_int(b, key, c->present ? (int64_t)c->peak_bytes : -1);
    column(key, sizeof key, c->method, "kernels");
    put_int(b, key, c->present ? c->kernels : -1);
    column(key, sizeof key, c->method, "gap");
    put_num(b, key,
            c->present && r->traffic_bytes > 0
                ? ((double)c->traffic_bytes - (double)r->traffic_bytes) /
                      (double)r->traffic_bytes
                : NAN);
  }
}

char *fp_batch_record_to_json(const fp_batch_record *r, fp_error *err) {
  fp_jbuf b = {0};
  fp_jbuf_puts(&b, "{");
  put_str(&b, "id", r->id);
  put_str(&b, "graph", r->graph);
  put_str(&b, "source", r->source);
  put_str(&b, "graph_sha256", r->graph_sha256);
  put_int(&b, "cut_first", r->cut_first);
  put_int(&b, "cut_count", r->cut_count);
  put_int(&b, "nodes", r->nodes);
  put_str(&b, "objective", r->objective);
  put_str(&b, "peak_limit", r->peak_limit);
  put_int(&b, "peak_limit_bytes", r->peak_limit_bytes);
  put_int(&b, "traffic_limit_bytes", r->traffic_limit_bytes);
  put_str(&b, "method", r->method);
  put_str(&b, "status", r->status);
  put_int(&b, "traffic_bytes", r->traffic_bytes);
  put_int(&b, "peak_bytes", r->peak_bytes);
  put_int(&b, "kernels", r->kernels);
  put_num(&b, "bound", r->bound);
  put_num(&b, "gap", r->gap);
  put_int(&b, "proven", r->proven);
  put_key(&b, "gold");
  fp_jbuf_puts(&b, r->gold ? "true" : "false");
  put_num(&b, "time_s", r->time_s);
  put_str(&b, "fuseplan_version", r->fuseplan_version);
  put_str(&b, "glpk_version", r->glpk_version);
  put_str(&b, "plan", r->plan);
  put_str(&b, "labels", r->labels);
  put_str(&b, "error", r->error);
  put_int(&b, "signal", r->signal);
  put_compare(&b, r);
  fp_jbuf_puts(&b, "}\n");
  if (b.oom) {
    free(b.s);
    fp_error_set(err, FP_ENOMEM, "out of memory");
    return NULL;
  }
  return b.s;
}

/* ---- reading records back ------------------------------------------------ */

static void get_str(const cJSON *o, const char *key, char *out, size_t n) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (cJSON_IsString(v))
    snprintf(out, n, "%s", v->valuestring);
}

static int64_t get_int(const cJSON *o, const char *key) {
  uint64_t u;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return fp_json_u64(v, &u) ? (int64_t)u : -1;
}

static double get_num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The compared methods of a record. */
static void get_compare(const cJSON *o, fp_batch_record *r) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "compare"), *m;
  char key[96];
  cJSON_ArrayForEach(m, list) {
    if (!cJSON_IsString(m) || r->n_compare >= FP_BATCH_MAX_COMPARE)
      continue;
    fp_batch_compare *c = &r->compare[r->n_compare++];
    snprintf(c->method, sizeof c->method, "%s", m->valuestring);
    column(key, sizeof key, c->method, "traffic_bytes");
    int64_t t = get_int(o, key);
    column(key, sizeof key, c->method, "peak_bytes");
    int64_t p = get_int(o, key);
    column(key, sizeof key, c->method, "kernels");
    c->kernels = get_int(o, key);
    c->present = t >= 0 && p >= 0;
    c->traffic_bytes = t >= 0 ? (uint64_t)t : 0;
    c->peak_bytes = p >= 0 ? (uint64_t)p : 0;
  }
}

fp_status fp_batch_record_parse(const char *text, size_t len,
                                const char *source, fp_batch_record *r,
                                fp_error *err) {
  fp_json_doc doc;
  fp_batch_record_init(r);
  fp_status st = fp_json_parse(text, len, source, &doc, err);
  if (st != FP_OK) {
    fp_json_release(&doc); /* it may hold a partial tree */
    return st;
  }
  const cJSON *o = doc.root,
              *gold = cJSON_GetObjectItemCaseSensitive(o, "gold");
  get_str(o, "id", r->id, sizeof r->id);
  get_str(o, "status", r->status, sizeof r->status);
  if (!cJSON_IsObject(o) || strlen(r->id) != 64 || !r->status[0]) {
    fp_json_release(&doc);
    return fp_error_set(err, FP_EINPUT, "%s: not an item record", source);
  }
  get_str(o, "graph", r->graph, sizeof r->graph);
  get_str(o, "source", r->source, sizeof r->source);
  get_str(o, "graph_sha256", r->graph_sha256, sizeof r->graph_sha256);
  get_str(o, "objective", r->objective, sizeof r->objective);
  get_str(o, "peak_limit", r->peak_limit, sizeof r->peak_limit);
  get_str(o, "method", r->method, sizeof r->method);
  get_str(o, "fuseplan_version", r->fuseplan_version,
          sizeof r->fuseplan_version);
  get_str(o, "glpk_version", r->glpk_version, sizeof r->glpk_version);
  get_str(o, "plan", r->plan, sizeof r->plan);
  get_str(o, "labels", r->labels, sizeof r->labels);
  get_str(o, "error", r->error, sizeof r->error);
  r->cut_first = get_int(o, "cut_first");
  r->cut_count = get_int(o, "cut_count");
  r->nodes = get_int(o, "nodes");
  r->peak_limit_bytes = get_int(o, "peak_limit_bytes");
  r->traffic_limit_bytes = get_int(o, "traffic_limit_bytes");
  r->traffic_bytes = get_int(o, "traffic_bytes");
  r->peak_bytes = get_int(o, "peak_bytes");
  r->kernels = get_int(o, "kernels");
  r->bound = get_num(o, "bound");
  r->gap = get_num(o, "gap");
  r->proven = get_int(o, "proven");
  r->gold = cJSON_IsTrue(gold);
  r->time_s = get_num(o, "time_s");
  r->signal = get_int(o, "signal");
  get_compare(o, r);
  fp_json_release(&doc);
  return FP_OK;
}

/* ---- comparing records and checking plans -------------------------------- */

/* The fields of a record that time a run: they differ between two runs of
 * one item and nothing else may (docs/cluster.md, "timing columns
 * aside"). */
static const char *const timing_fields[] = {"time_s"};

static bool is_timing(const char *key) {
  for (size_t i = 0; i < sizeof timing_fields / sizeof *timing_fields; i++)
    if (strcmp(key, timing_fields[i]) == 0)
      return true;
  return false;
}

/* The members of object a (not timing ones) are in b with equal values. */
static bool members_in(const cJSON *a, const cJSON *b) {
  const cJSON *v;
  cJSON_ArrayForEach(v, a) {
    if (is_timing(v->string))
      continue;
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(b, v->string);
    if (!w || !cJSON_Compare(v, w, true))
      return false;
  }
  return true;
}

bool fp_batch_records_same(const char *a, size_t na, const char *b, size_t nb) {
  fp_json_doc x, y;
  bool ok_x = fp_json_parse(a, na, "a", &x, NULL) == FP_OK;
  bool ok_y = fp_json_parse(b, nb, "b", &y, NULL) == FP_OK;
  bool same = ok_x && ok_y && cJSON_IsObject(x.root) &&
              cJSON_IsObject(y.root) && members_in(x.root, y.root) &&
              members_in(y.root, x.root);
  fp_json_release(&x);
  fp_json_release(&y);
  return same;
}

fp_status fp_batch_plan_json_check(const char *text, size_t len,
                                   const char *source, fp_error *err) {
  fp_json_doc doc;
  fp_status st = fp_json_parse(text, len, source, &doc, err);
  if (st == FP_OK)
    st = fp_json_check_header(doc.root, source, "fuseplan.plan", err);
  fp_json_release(&doc);
  return st;
}
